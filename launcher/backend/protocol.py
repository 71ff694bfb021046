"""The pipe between serve (pool.py) and a worker (worker.py), defined once for both sides.

JSON lines. Down the worker's stdin: first the Job, then control messages (`steer`,
`stop`, `answer`). Up its stdout: the session's event stream (events.py's JSON form), and
`ask` messages (an input request of one of its MCP servers, for the host; the only lines
with an `op`). Stdin EOF means the driver is gone: the worker stops and closes its session.
A worker on a Ray node (`--sealed`) first writes a `seal_key` line and reads a `sealed`
one, which holds its Job (procs/sealed.py): the Ray driver takes both, before this pipe.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from launcher.events import RunStatus

STEER = "steer"
STOP = "stop"
ASK = "ask"
ANSWER = "answer"


@dataclass
class Job:
    """What a worker runs: the arguments of `spawn_subagent`, plus where config lives."""

    prompt: str
    agent: str = "general-purpose"
    ext: list[str] = field(default_factory=list)
    model: str | None = None
    max_turns: int | None = None
    config_dir: str | None = None
    workspace: str = "."
    depth: int = 0
    """0 for a sub-agent serve or batch started; N+1 for a child of a depth-N agent."""
    max_depth: int | None = None
    """The tree's bound inherited from the parents (None: the agent's own)."""
    no_lock: bool = False
    """Ignore the config's lock file (`serve --no-lock`)."""
    resume: str | None = None
    """A stored session's id: the run continues it, `prompt` being the follow-up."""
    isolation: str | None = None
    """`worktree`: run in a fresh git worktree (None: as the agent's `isolation` says)."""
    label: str | None = None
    """Names the run's worktree branch (batch: the task id; default: the agent)."""
    config: dict[str, Any] | None = None
    """The config the run was started with (config/snapshot.py), used instead of a fresh
    discovery: a nested sub-agent's parent's, a serve worker's serve's. None (batch): the
    worker discovers its own at its start."""
    script: str | None = None
    """The text of `model`'s script when a host named a `scripted:` file: serve read it
    once, and the worker never opens that path (backend/host_model.py)."""
    owner: dict[str, Any] | None = None
    """Who started the job through serve (store/owner.py's Owner as JSON): stored with a
    new session, and the only owner whose session `resume` may name."""
    ask_host: bool = False
    """Send the servers' input requests up the pipe (`ask`) and wait for the `answer`
    (serve), rather than answering them in the worker (bridge/elicitation.py)."""
    trace: dict[str, str] | None = None
    """W3C trace context (`traceparent`, `tracestate`) of the span that started the run (a
    serve request, a delegating tool call): the parent of its `invoke_agent` span."""
    trace_link: dict[str, str] | None = None
    """A batch's span: the run is a trace of its own, with a link to it."""
    limits: dict[str, Any] | None = None
    """The limits asked for (budget.py's field names): never above the agent file's."""
    ceiling: dict[str, Any] | None = None
    """A nested sub-agent's parent's remainder: its limits are clamped to it."""

    @classmethod
    def from_json(cls, line: str | bytes) -> Job:
        """Parse the first stdin line; unknown keys are ignored (a newer driver's fields)."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("a job is a JSON object")
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def to_line(self) -> bytes:
        return encode(asdict(self))


def steer(message: str) -> dict[str, Any]:
    """A control message: deliver `message` at the next turn boundary."""
    return {"op": STEER, "message": message}


def stop() -> dict[str, Any]:
    """A control message: stop the agent and close the session."""
    return {"op": STOP}


def ask(request_id: str, request: dict[str, Any]) -> dict[str, Any]:
    """Up the pipe: an input request (`{"method", "params"}`, wire JSON) for the host."""
    return {"op": ASK, "id": request_id, "request": request}


def answer(request_id: str, result: dict[str, Any] | None) -> dict[str, Any]:
    """Down the pipe: the host's answer to `ask` `request_id` (None: answer it yourself)."""
    return {"op": ANSWER, "id": request_id, "result": result}


def encode(message: dict[str, Any]) -> bytes:
    """One JSON line."""
    return (json.dumps(message) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any] | None:
    """One JSON-object line, or None for anything else (a worker's stray output)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(kw_only=True)
class RunState:
    """What a driver knows of a worker's run, folded from its event stream."""

    status: RunStatus = RunStatus.QUEUED
    result: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    turns: int = 0
    error: str | None = None
    session_id: str | None = None
    worktree: dict[str, Any] | None = None
    """An isolated run's `worktree` event: branch, path, base, changed, diffstat, error."""
    _turn_text: str = ""
    _ended: bool = False

    def __post_init__(self) -> None:
        self.status = RunStatus(self.status)  # given as text (`status="running"`) too

    def observe(self, event: dict[str, Any]) -> None:
        """Fold one worker event into the state."""
        kind = event.get("type")
        if kind == "session_start":
            self.session_id = str(event.get("session_id") or "") or None
        elif kind == "turn_start":
            self.turns = max(self.turns, int(event.get("turn", 0)))
            self._turn_text = ""
        elif kind == "text_delta":
            # The result so far: the text of the latest turn that said anything.
            self._turn_text += str(event.get("text", ""))
            self.result = self._turn_text
        elif kind == "agent_end":
            if self._ended:
                return  # the worker says it once: a second is not its (a held channel copy)
            self._ended = True
            self.status = RunStatus.of(event.get("status"))
            self.result = str(event.get("result", "")) or self.result
            self.usage = dict(event.get("usage") or {})
            self.error = event.get("error")
        elif kind == "worktree":
            from launcher.worktree import describe_fields

            self.worktree = {k: v for k, v in event.items() if k not in ("type", "ts")}
            # Whoever reads only the text (a host's model) learns where the changes are.
            self.result = f"{self.result}\n\n{describe_fields(self.worktree)}".lstrip()

    @property
    def final(self) -> bool:
        """The run has ended (RunStatus.final)."""
        return self.status.final
