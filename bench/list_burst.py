"""Benchmark 4: a 2 000-tool server sends 50 list_changed in a burst.

Counts the re-lists the burst costs (goal ≤ 2) and times how long until the tool
registry holds the final list with no re-list left to run, as a ratio to one plain
listing of the same 2 000 tools (no goal given; lower is better, ~1–2 is the floor).
Three cases: the fast stub bursting when a tool call asks it to (after adding a tool),
the fast stub bursting right after `initialized`, and the SDK-based lazy stub doing so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from _util import Result, Size, bench_main, fast_stub_args, median, sized, state_dir

from launcher.bridge.connection import McpConnection
from launcher.config.types import AgentSpec, ServerSpec
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolDef, ToolResult

TOOLS = 2000
BURST = 50
SERVER = "big"
QUIET_S = 1.0
"""No re-list for this long after the burst = settled (a 2 000-tool listing takes far less)."""
SETTLE_LIMIT_S = 30.0
"""Give up waiting for quiet after this long; the case then reports what it saw."""
POLL_S = 0.002
BASELINE_LISTINGS = 3


@dataclass
class Outcome:
    """What one case measured."""

    relists: int  # re-lists caused by the burst
    consistent_s: float  # burst start -> last re-list applied to the registry
    visible_s: float | None  # burst start -> the added tool first in the registry
    listing_s: float  # median of plain listings (request_relist -> registry updated)
    tools: int


async def _caller(_: dict) -> ToolResult:
    return ToolResult("unused")


def _make_caller(_: str) -> Callable[[dict], object]:
    return _caller


async def _wait(predicate: Callable[[], bool], limit_s: float) -> bool:
    with anyio.move_on_after(limit_s):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(POLL_S)
        return True
    return False


async def measure(args: list[str], trigger: str, root: Path) -> Outcome:
    """Run one case; `trigger` is `call` (burst tool) or `init` (burst after initialized)."""
    registry = ToolRegistry(gate=admission(ToolScope(AgentSpec(name="bench"))))
    stamps: list[float] = []  # when each listing had been applied to the registry

    async def on_tools(defs: list[ToolDef]) -> None:
        if defs:
            registry.set_server_tools(SERVER, defs, _make_caller)  # type: ignore[arg-type]
        else:
            registry.remove_server(SERVER)
        stamps.append(time.perf_counter())

    async def emit(_: object) -> None:
        return None

    spec = ServerSpec(name=SERVER, command="python", args=tuple(args), startup_timeout=60.0)
    conn = McpConnection(
        spec, on_tools=on_tools, emit=emit, log_path=root / f"{SERVER}.log", workspace=root
    )

    async def settle(since: float) -> None:
        def quiet() -> bool:
            last = max(stamps[-1], since)
            return time.perf_counter() - last >= QUIET_S

        await _wait(quiet, SETTLE_LIMIT_S)

    async def plain_listing() -> float:
        seen = len(stamps)
        start = time.perf_counter()
        conn.follow.request()
        if not await _wait(lambda: len(stamps) > seen, SETTLE_LIMIT_S):
            raise RuntimeError("plain re-list never finished")
        return stamps[-1] - start

    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        await conn.ready.wait()
        if conn.state != "connected":
            raise RuntimeError(f"connection {conn.state}: {conn.error}")
        try:
            visible = None
            if trigger == "init":
                start, before = time.perf_counter(), len(stamps)
                await settle(start)
            else:
                await settle(time.perf_counter())
                start, before = time.perf_counter(), len(stamps)
                late = f"{SERVER}__late_1"
                result = await conn.call("burst", {"count": BURST})
                if result.is_error:
                    raise RuntimeError(result.content)
                await _wait(lambda: registry.get(late) is not None, SETTLE_LIMIT_S)
                visible = time.perf_counter() - start
                await settle(start)
            relists = len(stamps) - before  # every listing reaches on_tools
            consistent = max(stamps[-1] - start, 0.0)
            listing = median([await plain_listing() for _ in range(BASELINE_LISTINGS)])
            return Outcome(relists, consistent, visible, listing, len(registry.entries()))
        finally:
            conn.close()


def cases(tools: int, burst: int, sdk: bool) -> dict[str, tuple[list[str], str]]:
    """The cases: the fast stub bursting on a call and on init, and the SDK lazy stub."""
    found = {
        "fast stub, burst on a call": (fast_stub_args("--tools", str(tools)), "call"),
        "fast stub, burst on init": (
            fast_stub_args("--tools", str(tools), "--burst", str(burst)),
            "init",
        ),
    }
    if sdk:
        found["SDK lazy stub, burst on init"] = (
            ["-m", "mcp_servers.lazy", "--count", str(tools), "--burst", str(burst)],
            "init",
        )
    return found


def run(size: Size = "full") -> list[Result]:
    rounds = sized(size, 3, 1, 1)
    tools, burst = sized(size, TOOLS, TOOLS, 50), sized(size, BURST, BURST, 5)
    results = []
    with state_dir() as root:
        for label, (args, trigger) in cases(tools, burst, sdk=size != "smoke").items():
            outs = [anyio.run(measure, args, trigger, root) for _ in range(rounds)]
            relists = max(o.relists for o in outs)  # the goal is a bound: report the worst
            consistent = median([o.consistent_s for o in outs])
            listing = median([o.listing_s for o in outs])
            seen = ""
            if outs[0].visible_s is not None:
                visible = median([o.visible_s or 0.0 for o in outs])
                seen = f", new tool visible after {visible * 1000:.0f} ms"
            print(
                f"{label}: re-lists {[o.relists for o in outs]}, consistent after "
                f"{consistent * 1000:.0f} ms{seen}; one plain listing {listing * 1000:.0f} ms; "
                f"{outs[0].tools} tools in the registry  (n={rounds})"
            )
            results.append(
                Result(
                    "4 list_changed burst",
                    f"re-lists for {burst} list_changed, worst of {rounds} ({label})",
                    float(relists),
                    2,
                    f"{tools}+ tools",
                )
            )
            results.append(
                Result(
                    "4 list_changed burst",
                    f"time to consistent registry ÷ one listing ({label}, no goal; "
                    "per-round ratios)",
                    median([o.consistent_s / o.listing_s for o in outs]),
                    None,
                    f"{consistent * 1000:.0f} ms vs {listing * 1000:.0f} ms",
                )
            )
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
