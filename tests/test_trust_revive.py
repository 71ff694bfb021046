"""Putting the protected places back for a launcher that died (launcher/trust/revive.py):
only when no launcher sharing the record is alive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from launcher.trust import Place, Protected
from launcher.trust.guard import Guard
from launcher.trust.revive import revive


def test_a_live_launcher_keeps_the_copy_a_dead_ones_is_put_back(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".subagent").mkdir(parents=True)
    (ws / ".subagent/mcp.json").write_text("{}\n")
    guard = Guard(Protected((Place(ws, ".subagent"),)), home=home)
    folder = guard.record_dir
    assert folder is not None
    (ws / ".subagent/mcp.json").write_text('{"mcpServers": {"evil": {}}}\n')
    assert revive(folder) == []  # this process is alive: it puts back itself
    assert "evil" in (ws / ".subagent/mcp.json").read_text()
    guard.restore()
    guard.release()
    # A launcher that joined the record and died without leaving it (SIGKILL):
    code = (
        "import sys; from pathlib import Path; from launcher.trust import Place, Protected;"
        "from launcher.trust.guard import Guard;"
        f"Guard(Protected((Place(Path({str(ws)!r}), '.subagent'),)), home=Path({str(home)!r}));"
        f"Path({str(ws)!r}, '.subagent/mcp.json').write_text('planted'); import os; os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (ws / ".subagent/mcp.json").read_text() == "planted"
    assert revive(folder) == [".subagent"]
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
