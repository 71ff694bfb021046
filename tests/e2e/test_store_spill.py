"""A 5 MB tool result: the model sees at most max_result_bytes; the file has it all; read too."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_servers.faulty import big_text
from tests.e2e.spawn_support import spawn, stub, write_config

BIG = 5 * 1024 * 1024
LIMIT = 64 * 1024
"""The default max_result_bytes."""


def test_a_5mb_result_is_cut_for_the_model_kept_whole_and_readable(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"big": stub("faulty", "--big-text", str(BIG))})
    state = tmp_path / "state"
    first = tmp_path / "first.yaml"
    first.write_text("steps:\n  - call: [{tool: big__big_text, args: {}}]\n  - say: got it\n")

    run = spawn(config, first, "fetch the big thing", state=state)

    assert run.code == 0, run.stderr
    (result,) = run.result_of("big__big_text")
    shown = result["content"]
    assert not result["is_error"]
    assert len(shown.encode()) <= LIMIT
    assert shown.startswith(big_text(200))
    assert f"{BIG} bytes" in shown
    match = re.search(r"The whole result is in (\S+\.txt);", shown)
    assert match, shown[-400:]
    saved = Path(match.group(1))
    session = run.of_type("session_start")[0]["session_id"]
    assert saved == state / "sessions" / session / "results" / "call_1_1.txt"
    assert saved.read_text(encoding="utf-8") == big_text(BIG)

    # A later turn (here, a resume in a new process) pages to the end with `read`.
    last_line = BIG // 100 + 1
    second = tmp_path / "second.yaml"
    second.write_text(
        "steps:\n"
        f"  - call: [{{tool: read, args: {{path: '{saved}', offset: {last_line - 1}}}}}]\n"
        "  - say: read it\n"
    )
    resumed = spawn(config, second, "--resume", "last", "show me the end", state=state)

    assert resumed.code == 0, resumed.stderr
    (read,) = resumed.result_of("read")
    assert not read["is_error"], read["content"]
    assert read["content"].splitlines() == [
        f"{last_line - 1:6}\t{last_line - 1:08d} " + "." * 90,
        f"{last_line:6}\t" + big_text(BIG).splitlines()[-1],
    ]


def test_a_spilled_result_is_masked_of_secrets_like_every_result(tmp_path: Path) -> None:
    token = "tok-5be0c7a913d24f66"
    leaky = stub("faulty", "--echo-env", "LEAK", env={"LEAK": "${TOKEN}"}, max_result_bytes=20)
    config = write_config(tmp_path / "cfg", {"s": leaky})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - call: [{tool: s__echo_env, args: {}}]\n  - say: done\n")
    state = tmp_path / "state"

    run = spawn(config, script, "leak it", state=state, env={"TOKEN": token})

    assert run.code == 0, run.stderr
    (saved,) = (state / "sessions").glob("*/results/call_1_1.txt")
    kept = saved.read_text()
    assert kept.startswith("LEAK: ****") and kept.count("****") >= 2
    assert token not in kept
    (result,) = run.result_of("s__echo_env")
    assert str(saved) in result["content"] and token not in result["content"]
