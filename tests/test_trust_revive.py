"""Putting the protected places back for a launcher that died (launcher/trust/revive.py):
only when no launcher sharing the record is alive."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from launcher.trust import Place, Protected, protected_set
from launcher.trust.guard import Guard
from launcher.trust.revive import revive


def test_a_live_launcher_keeps_the_copy_a_dead_ones_is_put_back(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".subagent").mkdir(parents=True)
    (ws / ".subagent/mcp.json").write_text("{}\n")
    guard = Guard(protected_set(ws), home=home, workspace=ws)
    folder = guard.record_dir
    assert folder is not None
    (ws / ".subagent/mcp.json").write_text('{"mcpServers": {"evil": {}}}\n')
    assert revive(folder) == []  # this process is alive: it puts back itself
    assert "evil" in (ws / ".subagent/mcp.json").read_text()
    guard.restore()
    guard.release()
    # A launcher that joined the record and died without leaving it (SIGKILL):
    code = (
        "import sys; from pathlib import Path; from launcher.trust import protected_set;"
        "from launcher.trust.guard import Guard;"
        f"w = Path({str(ws)!r}); Guard(protected_set(w), home=Path({str(home)!r}), workspace=w);"
        f"Path({str(ws)!r}, '.subagent/mcp.json').write_text('planted'); import os; os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (ws / ".subagent/mcp.json").read_text() == "planted"
    assert ".subagent" in revive(folder)
    assert (ws / ".subagent/mcp.json").read_text() == "{}\n"
    assert not os.path.exists(folder / "originals.json")


def test_the_record_names_its_places(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    guard = Guard(Protected((Place(ws, ".mcp.json"),)), home=tmp_path / "home")
    assert guard.record_dir is not None
    raw = json.loads((guard.record_dir / "originals.json").read_text())
    assert raw["places"] == [[str(ws), ".mcp.json", []]]
    guard.release()


def _forge(tmp_path: Path, ws: Path, places: list[list[object]], tree_rel: str) -> Path:
    """A record a model wrote: a `.bashrc` of its own as the original of `places`."""
    home = tmp_path / "home"
    guard = Guard(protected_set(ws), home=home, workspace=ws)
    folder = guard.record_dir
    assert folder is not None
    guard.release()  # as if its launcher died: no live user left
    evil = base64.b64encode(b"touch /tmp/owned\n").decode()
    forged = {
        "trees": [{tree_rel: ["file", 0o100644, 17, 0, evil, None]}],
        "had": [],
        "places": places,
        "workspace": str(ws),
        "nested": None,
    }
    (folder / "originals.json").write_text(json.dumps(forged))
    return folder


def test_a_record_naming_places_outside_its_workspace_is_refused(tmp_path: Path) -> None:
    ws, real = tmp_path / "ws", tmp_path / "realhome"
    ws.mkdir()
    real.mkdir()
    (real / ".bashrc").write_text("# the user's\n")
    folder = _forge(tmp_path, ws, [[str(real), ".bashrc", []]], ".bashrc")
    said = revive(folder)
    assert (real / ".bashrc").read_text() == "# the user's\n"
    assert any("ignored" in line for line in said), said


def test_a_record_with_a_path_leaving_its_place_is_refused(tmp_path: Path) -> None:
    ws, real = tmp_path / "ws", tmp_path / "realhome"
    ws.mkdir()
    real.mkdir()
    places = [[str(p.base), p.rel, list(p.open)] for p in protected_set(ws).places]
    folder = _forge(tmp_path, ws, places[:1], "../realhome/.bashrc")
    revive(folder)
    assert not (real / ".bashrc").exists()
