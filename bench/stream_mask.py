"""Benchmark: what masking streamed text costs a streaming run, and each delta.

1. A streaming run: one model turn streaming DELTAS text deltas (6 characters each, a
   secret in every 50th) through a real Session and AgentLoop to `--json`-style sinks
   (a JSON-lines sink on /dev/null and events.jsonl), store off, with three secrets known
   (an API key and two `${VAR}` values) ÷ the same run with none known; alternating pairs,
   median of the per-pair ratios. Run it on two trees to compare them: the ratio is what
   masking adds, measured against a baseline of the same run.
2. Per delta: the session's event masking of one delta (MaskedEvents: held back and
   released through one StreamMask) ÷ masking it as an event on its own
   (`SecretMask.event`, what sessions did before); same secrets, interleaved rounds.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, TextIO

import anyio
from _util import Result, Size, bench_main, median, sized, state_dir

DELTAS = 2_000
PIECE = 6
RUNS = 15
QUICK_RUNS = 3
MICRO_DELTAS = 20_000
MICRO_ROUNDS = 9
API_KEY = "sk-bench-0123456789abcdefghij0123"
VARS = {"BENCH_UPSTREAM": "upstream-3c2b1a0f9e8d7c6b", "BENCH_DB": "dbpass-7f6e5d4c3b2a"}
RUN_GOAL = 1.10
"""Masking on a streaming run: at most 10 % over the same run with nothing to mask."""


class StreamingModel:
    """One turn: DELTAS text deltas through `on_text`, then the whole text as the answer."""

    spec = "bench:stream"

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    async def complete(self, request: Any) -> Any:
        from launcher.models.base import ModelResponse

        for piece in self.pieces:
            await request.on_text(piece)
        return ModelResponse(text="".join(self.pieces))


def pieces() -> list[str]:
    filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit "
    text = ""
    for i in range(DELTAS * PIECE // len(filler) + 1):
        text += filler + (f"{API_KEY} " if i % 6 == 0 else "")
    return [text[i : i + PIECE] for i in range(0, DELTAS * PIECE, PIECE)]


def write_config(root: Path) -> Path:
    import json

    config = root / "cfg"
    (config / "agents").mkdir(parents=True)
    unused = {"command": "true", "env": {name: f"${{{name}}}" for name in VARS}}
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"unused": unused}}))
    agent = "---\nname: talker\ntools: [read]\nextensions: false\n---\nTalk.\n"
    (config / "agents" / "talker.md").write_text(agent)
    return config


async def one_run(
    config_dir: Path, workspace: Path, text: list[str], secrets: bool, out: TextIO
) -> float:
    """Seconds for one session running one streamed turn, with or without secrets known."""
    from launcher.agent import AgentLoop
    from launcher.assemble import assemble_session, plan_run
    from launcher.config.discovery import load_config
    from launcher.events import jsonl_sink
    from launcher.secrets import forget_learned_secrets, is_secret_name

    env = {**VARS, "BENCH_API_KEY": API_KEY} if secrets else {n: "" for n in VARS}
    os.environ.update(env)
    if not secrets:
        # run_all runs benches in one process: another bench's key (BENCH_TURN_API_KEY,
        # a learned secret) would make this "no secrets" case mask after all.
        for name in [n for n in os.environ if is_secret_name(n) and n not in VARS]:
            os.environ.pop(name)
        forget_learned_secrets()
    config = load_config(config_dir, cwd=workspace)
    start = time.perf_counter()
    session = assemble_session(plan_run(config, "talker", workspace=workspace))
    session.bus.subscribe(jsonl_sink(out))

    async def body(s: Any) -> None:
        await AgentLoop(s, StreamingModel(text)).run("go")

    await session.run(body)
    elapsed = time.perf_counter() - start
    if bool(session.mask) != secrets:
        raise SystemExit("the session's secrets are not what this case needs")
    return elapsed


def streaming_run(size: Size) -> list[Result]:
    text = pieces()
    ratios: list[float] = []
    times: dict[bool, list[float]] = {True: [], False: []}
    with state_dir() as root, open(os.devnull, "w") as null:
        config = write_config(root)
        os.environ["SUBAGENT_HOME"] = str(root / "home")
        os.environ["SUBAGENT_STORE"] = "0"
        for secrets in (True, False):  # warm-up: imports, page cache
            anyio.run(one_run, config, root, text, secrets, null)
        for i in range(sized(size, RUNS, QUICK_RUNS, 1)):
            order = (True, False) if i % 2 else (False, True)  # neither always goes first
            pair = {s: anyio.run(one_run, config, root, text, s, null) for s in order}
            for s, t in pair.items():
                times[s].append(t)
            ratios.append(pair[True] / pair[False])
    on, off = median(times[True]), median(times[False])
    print(f"streaming run, secrets known  {on * 1000:.0f} ms (median)")
    print(f"streaming run, none known     {off * 1000:.0f} ms (median)")
    return [
        Result(
            "stream_mask",
            f"a {DELTAS}-delta streamed turn with 3 secrets known ÷ with none",
            median(ratios),
            RUN_GOAL,
            f"{on * 1000:.0f} ms ÷ {off * 1000:.0f} ms; {len(ratios)} pairs",
        )
    ]


def per_delta(size: Size) -> list[Result]:
    from launcher import events
    from launcher.event_mask import MaskedEvents
    from launcher.secrets import SecretMask

    mask = SecretMask([API_KEY, *VARS.values()])
    deltas = [events.TextDelta(turn=1, text=p) for p in pieces()] * (MICRO_DELTAS // DELTAS)

    def stream() -> float:
        masked = MaskedEvents(mask)
        start = time.perf_counter()
        for delta in deltas:
            masked(delta)
        return time.perf_counter() - start

    def each() -> float:
        start = time.perf_counter()
        for delta in deltas:
            mask.event(delta)
        return time.perf_counter() - start

    ratios = []
    for i in range(sized(size, MICRO_ROUNDS, 3, 1)):
        if i % 2:  # neither always goes first
            streamed = stream()
            alone = each()
        else:
            alone = each()
            streamed = stream()
        ratios.append(streamed / alone)
    return [
        Result(
            "stream_mask",
            "one delta: MaskedEvents (stream) ÷ SecretMask.event (each on its own)",
            median(ratios),
            None,
            f"{len(deltas)} deltas a round, {len(ratios)} rounds",
        )
    ]


def run(size: Size = "full") -> list[Result]:
    print(f"load average {os.getloadavg()}")
    results = streaming_run(size) + per_delta(size)
    print(f"load average {os.getloadavg()}")
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0] if __doc__ else "")
