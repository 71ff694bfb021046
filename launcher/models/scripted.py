"""`scripted:PATH`: a model that replays a YAML script, one step per turn, without network.

steps:
  - call: [{tool: EXPOSED_NAME, args: {...}}, {tool_from: SERVER/TOOL, args: {...}}]
  - sleep: 2.0          # think before answering this turn
    say: "text"         # a step with `say` and no `call` is the final answer
"""

from __future__ import annotations

import copy
import math
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import yaml

from launcher.config.plain_yaml import compose_plain
from launcher.errors import ConfigError
from launcher.models.base import ModelRequest, ModelResponse, ToolCall
from launcher.toolset.naming import plain_name
from launcher.toolset.types import ToolDef

STEP_FIELDS = ("call", "sleep", "say")
MAX_SLEEP_S = 3600.0
MAX_SCRIPT_BYTES = 1024 * 1024
"""As for a host's script (backend/host_model.py): PyYAML composes ~10 s a MiB on 2 cores,
and a script of a thousand steps is ~600 KB."""
"""The longest think time a step may script; more (or `.inf`, `.nan`) is a config error."""
CALL_FIELDS = ("tool", "tool_from", "args")


@dataclass(frozen=True)
class ScriptedCall:
    """One scripted tool call: an exposed name, or a (server, tool) pair to resolve."""

    tool: str | None
    server: str | None
    server_tool: str | None
    args: dict[str, Any]
    line: int


@dataclass(frozen=True)
class ScriptedStep:
    """One turn of the script: optional think time, text and tool calls."""

    line: int
    sleep: float = 0.0
    say: str | None = None
    calls: tuple[ScriptedCall, ...] = ()


class ScriptedModel:
    """Replays a script; records the tools it was offered each turn (`offered`: their names)."""

    def __init__(self, steps: list[ScriptedStep], *, spec: str = "scripted:") -> None:
        self.spec = spec
        self.steps = steps
        self.turns = 0
        self._offers: list[Sequence[ToolDef]] = []  # each turn's, as given: no copy a turn
        self._last_text = ""

    @property
    def offered(self) -> list[list[str]]:
        """The tool names offered each turn, in order."""
        return [[tool.name for tool in tools] for tools in self._offers]

    @classmethod
    def from_file(cls, path: Path, *, spec: str | None = None) -> ScriptedModel:
        """Load and check the script at `path`; bad scripts raise ConfigError."""
        return cls(load_script(path), spec=spec or f"scripted:{path}")

    @classmethod
    def from_text(cls, text: str, path: Path, *, spec: str) -> ScriptedModel:
        """Check a script already read from `path` (named in errors, never opened)."""
        return cls(parse_script(text, path), spec=spec)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer with the next step; past the last step, end with the last text said."""
        turn = self.turns
        self.turns += 1
        self._offers.append(request.tools)
        if turn >= len(self.steps):
            return ModelResponse(text=self._last_text)
        step = self.steps[turn]
        if step.sleep > 0:
            await anyio.sleep(step.sleep)
        if step.say is not None:
            self._last_text = step.say
            if step.say and request.on_text is not None:
                await request.on_text(step.say)
        calls = [
            ToolCall(
                id=f"call_{turn + 1}_{index + 1}",
                name=_resolve(call, request),
                arguments=copy.deepcopy(call.args),
            )
            for index, call in enumerate(step.calls)
        ]
        # A step without calls ends the run, with its own text or the last one said.
        text = step.say if step.say is not None else ("" if calls else self._last_text)
        return ModelResponse(text=text, tool_calls=calls)


def _resolve(call: ScriptedCall, request: ModelRequest) -> str:
    if call.tool is not None:
        return call.tool
    assert call.server is not None and call.server_tool is not None
    if request.resolve_tool is not None:
        return request.resolve_tool(call.server, call.server_tool)
    return plain_name(call.server, call.server_tool)


def load_script(path: Path) -> list[ScriptedStep]:
    """Parse a script file into steps; errors name the file, line and field."""
    try:
        # Checked before opening: a FIFO would block the read forever.
        if not stat.S_ISREG(path.stat().st_mode):
            raise ConfigError("cannot read script: not a regular file", path=path)
        with path.open("rb") as file:
            data = file.read(MAX_SCRIPT_BYTES + 1)
        if len(data) > MAX_SCRIPT_BYTES:
            raise ConfigError(
                f"cannot read script: larger than {MAX_SCRIPT_BYTES // 1024} KiB", path=path
            )
        text = data.decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read script: {exc.strerror or exc}", path=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"cannot read script: not UTF-8 text ({exc.reason})", path=path) from exc
    return parse_script(text, path)


def parse_script(text: str, path: Path) -> list[ScriptedStep]:
    """Parse a script's text into steps; errors name `path`, line and field."""
    try:
        root = compose_plain(text)  # no aliases: they expand without bound
        return _Parser(path).steps(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML: {problem}", path=path, line=line) from exc
    except RecursionError as exc:
        # PyYAML composes and constructs recursively: a deep `[[[[...` exhausts the stack.
        raise ConfigError("invalid YAML: nested too deeply", path=path) from exc
    except ValueError as exc:
        # The constructor's own int()/date parsing: a 5000-digit number, a bad timestamp.
        raise ConfigError(f"invalid YAML value: {exc}", path=path) from exc


class _Parser:
    """Checks a composed YAML tree node by node, so errors carry line numbers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._loader = yaml.SafeLoader("")

    def error(self, node: yaml.Node, name: str | None, message: str) -> ConfigError:
        return ConfigError(message, path=self.path, line=node.start_mark.line + 1, field=name)

    def value(self, node: yaml.Node) -> Any:
        return self._loader.construct_object(node, deep=True)

    def mapping(
        self, node: yaml.Node, name: str | None, allowed: tuple[str, ...]
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, name, "expected a mapping")
        found: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = self.value(key_node)
            if key not in allowed:
                raise self.error(
                    key_node, str(key), f"unknown field; expected one of {', '.join(allowed)}"
                )
            found[key] = (key_node, value_node)
        return found

    def steps(self, root: yaml.Node | None) -> list[ScriptedStep]:
        if root is None:
            raise ConfigError("empty script; expected a `steps:` list", path=self.path)
        top = self.mapping(root, None, ("steps",))
        if "steps" not in top:
            raise self.error(root, "steps", "missing; expected a `steps:` list")
        node = top["steps"][1]
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, "steps", "expected a list of steps")
        return [self.step(item) for item in node.value]

    def step(self, node: yaml.Node) -> ScriptedStep:
        fields = self.mapping(node, "steps", STEP_FIELDS)
        sleep = 0.0
        if "sleep" in fields:
            raw = self.value(fields["sleep"][1])
            if (
                isinstance(raw, bool)
                or not isinstance(raw, int | float)
                or not math.isfinite(raw)
                or not 0 <= raw <= MAX_SLEEP_S
            ):
                raise self.error(
                    fields["sleep"][1], "sleep", f"expected seconds (a number 0..{MAX_SLEEP_S:g})"
                )
            sleep = float(raw)
        say = None
        if "say" in fields:
            raw = self.value(fields["say"][1])
            if raw is None or isinstance(raw, dict | list):
                raise self.error(fields["say"][1], "say", "expected text")
            say = str(raw)
        calls: tuple[ScriptedCall, ...] = ()
        if "call" in fields:
            calls_node = fields["call"][1]
            if not isinstance(calls_node, yaml.SequenceNode):
                raise self.error(calls_node, "call", "expected a list of {tool|tool_from, args}")
            calls = tuple(self.call(item) for item in calls_node.value)
        return ScriptedStep(line=node.start_mark.line + 1, sleep=sleep, say=say, calls=calls)

    def call(self, node: yaml.Node) -> ScriptedCall:
        fields = self.mapping(node, "call", CALL_FIELDS)
        line = node.start_mark.line + 1
        if ("tool" in fields) == ("tool_from" in fields):
            raise self.error(node, "call", "each call needs exactly one of `tool` or `tool_from`")
        args: dict[str, Any] = {}
        if "args" in fields:
            raw_args = self.value(fields["args"][1])
            if raw_args is not None and not isinstance(raw_args, dict):
                raise self.error(fields["args"][1], "args", "expected a mapping of arguments")
            args = raw_args or {}
        if "tool" in fields:
            tool = self.value(fields["tool"][1])
            if not isinstance(tool, str) or not tool:
                raise self.error(fields["tool"][1], "tool", "expected an exposed tool name")
            return ScriptedCall(tool=tool, server=None, server_tool=None, args=args, line=line)
        raw = self.value(fields["tool_from"][1])
        server, _, tool = raw.partition("/") if isinstance(raw, str) else ("", "", "")
        if not server or not tool:
            raise self.error(fields["tool_from"][1], "tool_from", "expected SERVER/TOOL")
        return ScriptedCall(tool=None, server=server, server_tool=tool, args=args, line=line)
