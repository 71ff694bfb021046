"""Stdio framing: a 20 MB result arrives whole; an over-long line fails only its server."""

from __future__ import annotations

from pathlib import Path

from launcher.bridge.lines import MAX_LINE_BYTES, line_too_long
from tests.e2e.spawn_support import spawn, stub, write_config

HUGE_BYTES = 20_000_000
FLOOD_BYTES = MAX_LINE_BYTES + 1024 * 1024

SCRIPT = """
steps:
  - call: [{tool: big__huge, args: {}}]
  - call: [{tool: flood__flood, args: {}}]
  - call: [{tool: big__ok, args: {}}]
  - say: done
"""


def test_huge_result_arrives_and_overlong_line_fails_only_its_server(tmp_path: Path) -> None:
    servers = {
        # max_result_bytes above the result: the model sees it whole, nothing is cut.
        "big": stub("faulty", "--huge-result", str(HUGE_BYTES), max_result_bytes=HUGE_BYTES + 1),
        "flood": stub("faulty", "--flood", str(FLOOD_BYTES)),
    }
    config = write_config(tmp_path / "cfg", servers)
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)

    run = spawn(config, script, "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr[-2000:]
    (huge,) = run.result_of("big__huge")
    assert not huge["is_error"]
    assert huge["content"] == "x" * HUGE_BYTES
    (flood,) = run.result_of("flood__flood")
    reason = line_too_long(MAX_LINE_BYTES)
    assert flood["is_error"] and reason in flood["content"]
    failed = [e for e in run.of_type("server_state") if e["state"] == "failed"]
    assert [e["server"] for e in failed] == ["flood"]
    assert reason in failed[0]["error"]
    (ok,) = run.result_of("big__ok")
    assert not ok["is_error"] and ok["content"] == "ok"
