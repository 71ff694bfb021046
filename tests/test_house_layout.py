"""The package keeps DESIGN.md's shape: arrows point down, the SDK stays in its rooms, no giants.

Every `launcher` import is read from the source (function-level imports included, those
under `if TYPE_CHECKING:` left out: they never run) and checked against the room ranks.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "launcher"

LEAVES = (
    "auth",
    "config",
    "events",
    "event_line",
    "event_mask",
    "events_schema",
    "errors",
    "procs",
    "secrets",
    "secret_forms",
    "secret_files",
    "settings",
    "state",
    "flock",
    "gitcmd",
    "untrusted",
    "toolset.types",
    "toolset.naming",
    "hooks.matcher",
    "telemetry",
    "budget",
    "trust",
    "run_plan",
    "runtime",
)
"""Rooms everyone may import; they import only each other."""
RANKS: dict[str, int] = {
    **dict.fromkeys(LEAVES, 0),
    "toolset": 1,
    "models": 1,
    "tools": 1,
    "hooks": 1,
    "bridge": 2,
    "store": 2,
    "agent": 3,
    "session_tools": 3,
    "session_status": 3,
    "session": 4,
    "assemble": 5,
    "worktree": 5,
    "backend": 6,
    "check": 7,
    "engines": 7,
    "cli": 8,
}
"""A room may import rooms of a lower rank (and itself); `cli` is the top: nothing imports it."""
SDK_ROOMS = ("bridge", "backend")
"""The only rooms that may import the MCP SDK (`mcp`, `mcp_types`)."""
MAX_LINES = 450
ROOM_CAPS = {"session.py": 320, "bridge/connection.py": 320}
"""Tighter caps where one job kept attracting others: Session runs a session's
life, McpConnection owns one server's; log routing, transports, list following and result
finishing live in modules of their own."""


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def dotted(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def room(name: str) -> str | None:
    """The room of a dotted module name inside launcher (longest match), else None."""
    for candidate in sorted(RANKS, key=len, reverse=True):
        if name == candidate or name.startswith(candidate + "."):
            return candidate
    return None


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import that runs."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # `from launcher.backend import protocol` imports a module, not a name.
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_every_module_has_a_room() -> None:
    homeless = [dotted(p) for p in modules() if dotted(p) and room(dotted(p)) is None]
    assert homeless == [], f"modules outside DESIGN's rooms: {homeless}"


def test_arrows_point_down() -> None:
    wrong: list[str] = []
    for path in modules():
        source = room(dotted(path))
        if source is None:
            continue
        for line, name in imports(path):
            if not name.startswith("launcher."):
                continue
            target = room(name.removeprefix("launcher."))
            if target is None or target == source or (source in LEAVES and target in LEAVES):
                continue
            if RANKS[target] >= RANKS[source]:
                arrow = f"{path.relative_to(PACKAGE)}:{line} {source} -> {target}"
                if arrow not in wrong:
                    wrong.append(arrow)
    assert wrong == [], "imports against DESIGN's direction:\n" + "\n".join(wrong)


def test_the_sdk_is_imported_only_in_its_rooms() -> None:
    wrong: list[str] = []
    for path in modules():
        source = room(dotted(path))
        for line, name in imports(path):
            top = name.split(".")[0]
            if top in ("mcp", "mcp_types") and source not in SDK_ROOMS:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} imports {name}")
    assert wrong == [], "MCP SDK imports outside bridge/ and backend/:\n" + "\n".join(wrong)


def test_no_module_is_a_giant() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in modules()}
    giants = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert giants == {}, f"modules over {MAX_LINES} lines: {giants}"


def test_session_and_connection_keep_one_job_each() -> None:
    sizes = {name: len((PACKAGE / name).read_text().splitlines()) for name in ROOM_CAPS}
    over = {name: n for name, n in sizes.items() if n > ROOM_CAPS[name]}
    assert over == {}, f"over their caps {ROOM_CAPS}: {over}"


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    # The walker itself must catch an upward import, or every test above passes vacuously.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\n"
        "import launcher.cli.app\n"
        "if TYPE_CHECKING:\n    import launcher.session\n"
        "def f():\n    from launcher.backend import protocol\n"
    )
    names = [name for _, name in imports(probe)]
    assert "launcher.cli.app" in names
    assert "launcher.backend.protocol" in names
    assert "launcher.session" not in names
    assert room("toolset.types") == "toolset.types"
    assert room("toolset.scope") == "toolset"


def import_graph() -> dict[str, set[str]]:
    """launcher module -> the launcher modules it imports (function level included)."""
    known = {dotted(p): p for p in modules()}
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = {
            target
            for _, imported in imports(path)
            if (target := imported.removeprefix("launcher.")) in known and target != name
        }
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph` as [a, b, ..., a], or [] when there is none."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str]:
        path.append(node)
        on_path.add(node)
        for target in sorted(graph.get(node, ())):
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return []

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found:
                return found
    return []


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle == [], "import cycle (module or function level): " + " -> ".join(cycle)


def test_the_cycle_finder_sees_a_cycle() -> None:
    # Without this, a finder that never reports anything would pass the test above.
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []
    assert "engines.base" in import_graph()["engines.local"]


CLI_COMMAND_MAX_LINES = 250
"""A command module is one signature and its body; spawn and serve (with its fast path)
are the largest, near 200: room for a few options, not for a second job."""
CLI_SHARED_MODULE = {"logout": "login"}
"""Commands living in another command's module: `logout` beside `login`."""


def cli_command_modules() -> dict[str, str]:
    """Each registered `subagent` command -> the module its typer function lives in."""
    from launcher.cli.app import app

    found: dict[str, str] = {}
    for info in app.registered_commands:
        assert info.callback is not None
        name = info.name or info.callback.__name__.replace("_", "-")
        found[name] = info.callback.__module__
    return found


def test_each_cli_command_lives_in_a_module_named_for_it() -> None:
    # Signature and body together: a command found elsewhere (run.py, a cmd_* grab bag)
    # is the shape this replaced.
    commands = cli_command_modules()
    assert {"init", "spawn", "serve", "log", "logout"} <= set(commands)
    wrong = [
        f"{name}: in {module}, expected {expected}"
        for name, module in commands.items()
        if module != (expected := "launcher.cli." + CLI_SHARED_MODULE.get(name, name))
    ]
    assert wrong == [], "cli commands outside their own module:\n" + "\n".join(wrong)


def test_cli_command_modules_are_small() -> None:
    sizes = {
        module: len((PACKAGE.parent / (module.replace(".", "/") + ".py")).read_text().splitlines())
        for module in set(cli_command_modules().values())
    }
    big = {name: n for name, n in sizes.items() if n > CLI_COMMAND_MAX_LINES}
    assert big == {}, f"cli command modules over {CLI_COMMAND_MAX_LINES} lines: {big}"


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def test_the_architecture_page_draws_the_ranks_this_test_enforces() -> None:
    """docs/architecture.md's room table is the map: equal to RANKS, room for room."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("<!-- ranks: held equal to tests/test_house_layout.py RANKS -->", 1)[1]
    drawn: dict[str, int] = {}
    for line in table.splitlines()[3:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        drawn[cells[0].strip("`")] = int(cells[1])
    assert drawn == RANKS


def test_module_docstrings_point_to_the_architecture_page_not_elsewhere() -> None:
    """The design a module refers to is in the repository: never DESIGN.md or an issue."""
    import re

    stray = [
        f"{p.relative_to(PACKAGE.parent)}:{n}"
        for p in modules()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "DESIGN.md" in line or re.search(r"\bissues? \d", line)
    ]
    assert stray == []


SETTINGS_MODULE = "settings"
"""The one module that reads `SUBAGENT_*` variables (launcher/settings.py)."""
_READ_METHODS = frozenset(("get", "pop", "getenv", "setdefault"))


def _names_a_setting(node: ast.AST, aliases: set[str]) -> bool:
    """Whether an expression is (or starts with) a `SUBAGENT_*` variable's name: a literal,
    an f-string or sum starting so, a module constant holding one, or a name taken from
    the settings table (`settings.X.name`, `.key(...)`)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.startswith("SUBAGENT_")
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and _names_a_setting(node.values[0], aliases)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _names_a_setting(node.left, aliases)
    if isinstance(node, ast.Name):
        return node.id in aliases
    if isinstance(node, ast.Call):
        return _names_a_setting(node.func, aliases)
    if isinstance(node, ast.Attribute):
        if node.attr in ("name", "key", "shown") and isinstance(node.value, ast.Attribute):
            return isinstance(node.value.value, ast.Name) and node.value.value.id == "settings"
        return node.attr in aliases and isinstance(node.value, ast.Name)
    return False


def setting_reads(source: str, filename: str = "<probe>") -> list[int]:
    """Lines reading a `SUBAGENT_*` variable by name: `X[name]` (loaded), `X.get(name)`,
    `X.pop(name)`, `os.getenv(name)`, `name in X` — whatever the mapping (os.environ, or an
    `env` standing for it). Setting one (`env[name] = v`, `{name: v}`) is a write."""
    tree = ast.parse(source, filename=filename)
    aliases: set[str] = set()
    for node in ast.walk(tree):  # an imported *_ENV / *_VAR constant is a name too
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("launcher"):
            aliases.update(
                a.asname or a.name for a in node.names if a.name.endswith(("_ENV", "_VAR"))
            )
    for stmt in tree.body:  # module constants holding a name, functions returning one
        if isinstance(stmt, ast.Assign) and _names_a_setting(stmt.value, aliases):
            aliases.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.FunctionDef) and any(
            isinstance(r, ast.Return) and r.value and _names_a_setting(r.value, aliases)
            for r in ast.walk(stmt)
        ):
            aliases.add(stmt.name)
    found: list[int] = []
    for node in ast.walk(tree):
        key: ast.AST | None = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _READ_METHODS
            and node.args
        ):
            key = node.args[0]
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) for op in node.ops
        ):
            key = node.left
        if key is not None and _names_a_setting(key, aliases):
            found.append(node.lineno)
    return found


def test_subagent_variables_are_read_only_through_the_settings_table() -> None:
    """launcher/settings.py is the one reader of `SUBAGENT_*`: everyone else calls its
    accessors, so the docs' table (rendered from it) is every variable there is."""
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in modules()
        if dotted(path) != SETTINGS_MODULE
        for line in setting_reads(path.read_text(encoding="utf-8"), str(path))
    ]
    assert wrong == [], "SUBAGENT_* read outside launcher/settings.py:\n" + "\n".join(wrong)


def test_the_settings_read_check_sees_every_shape() -> None:
    # Without this, a walker that finds nothing would pass the test above.
    probe = (
        "import os\nfrom launcher import settings\nfrom launcher.x import STORE_ENV\n"
        'HOME_VAR = "SUBAGENT_HOME"\nTOKEN = settings.TOKEN.name\n'
        'a = os.environ["SUBAGENT_HOME"]\n'  # 6
        'b = os.environ.get("SUBAGENT_STORE", "1")\n'
        'c = os.getenv(f"SUBAGENT_TOKEN_{name}")\n'
        'd = "SUBAGENT_CGROUP" in os.environ\n'
        "e = env.get(HOME_VAR)\n"  # 10
        "f = env.get(TOKEN + name)\n"
        "g = os.environ.pop(settings.SECRETS_FD.key())\n"
        "h = env[STORE_ENV]\n"
        'os.environ["SUBAGENT_SANDBOX"] = "on"\n'  # writes: not reads
        'child = {**env, "SUBAGENT_HOME": "/x"}\n'
        'i = settings.HOME.raw(env)\nj = os.environ.get("PATH")\n'
        'def token_name(server):\n    return "SUBAGENT_TOKEN_" + server\n'
        "def f():\n    from launcher.y import MODEL_ENV\n"
        "    return os.getenv(MODEL_ENV), env.get(token_name(s), '')\n"  # 22
    )
    assert setting_reads(probe) == [6, 7, 8, 9, 10, 11, 12, 13, 22, 22]


def test_subagent_variable_names_come_from_the_settings_table() -> None:
    """A child's environment that sets one, a message that names one: the name is the
    table's (`settings.X.name`), never a second spelling of it."""
    import re

    name = re.compile(r"SUBAGENT_[A-Z0-9_]*")
    wrong = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}"
        for path in modules()
        if dotted(path) != SETTINGS_MODULE
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and name.fullmatch(node.value)
    ]
    assert wrong == []


MUTATORS = frozenset(
    "append add update clear pop popitem setdefault extend remove discard insert"
    " difference_update intersection_update sort reverse".split()
)
"""Methods that change a list, set or dict in place."""
RUNTIME_MODULE = "runtime.py"
"""The one module whose global (the installed Runtime) is rebound: launcher/runtime.py."""
GLOBAL_STATE_ALLOWED: dict[str, str] = {
    "events.py:_FIELD_NAMES": "a memo of each event class's field names: a pure function's",
    "secrets.py:_MASKED_FIELDS": "a memo of each event class's masked fields: a pure function's",
    "secret_files.py:_credentials": "a memo keyed by the HOME and the variable it is made from",
    "bridge/loader.py:_sdk": "the imported SDK module: sys.modules holds it process-wide anyway",
    "telemetry/__init__.py:_current": "the installed tracer; a test installs its own, the "
    "suite installs OFF for its whole process (conftest)",
    "bridge/sdk_logs.py:_users": "sessions routing the SDK's logger, which is process-wide "
    "(logging's own handler list); the count must follow that list, not a runtime",
}
"""Module state kept outside the Runtime, each with why: memos of pure functions, and state
that mirrors something process-wide by nature (an import, logging's handlers, the tracer)."""


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _stored_in(node: ast.AST) -> ast.expr | None:
    """The container a statement changes in place (`x[k] = v`, `del x[k]`, `x.add(v)`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value if node.func.attr in MUTATORS else None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
        return node.value
    return None


def mutated_globals(source: str) -> set[str]:
    """Module-level names a function rebinds (`global`) or changes in place."""
    tree = ast.parse(source)
    module = _module_names(tree)
    found: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        local = {
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(node.names)
            target = _stored_in(node)
            if isinstance(target, ast.Name) and target.id in module and target.id not in local:
                found.add(target.id)
    return found


def test_no_module_global_is_mutated_outside_the_runtime() -> None:
    found = {
        f"{path.relative_to(PACKAGE)}:{name}"
        for path in modules()
        if path.relative_to(PACKAGE).as_posix() != RUNTIME_MODULE
        for name in mutated_globals(path.read_text())
    }
    assert sorted(found - set(GLOBAL_STATE_ALLOWED)) == [], (
        "process state belongs in launcher/runtime.py's Runtime"
    )
    assert sorted(set(GLOBAL_STATE_ALLOWED) - found) == [], "allowed but gone: shrink the list"


def test_the_global_state_check_sees_every_shape() -> None:
    source = (
        "_n = 0\n_d = {}\n_s = set()\n_l = []\n_k = {}\n_fine = {}\n"
        "def f():\n    global _n\n    _n += 1\n"
        "def g(key):\n    _d[key] = 1\n    _s.add(key)\n    del _k[key]\n"
        "def h():\n    _l.append(1)\n    _fine = {}\n    _fine['x'] = 1\n    return _d.get(1)\n"
    )
    assert mutated_globals(source) == {"_n", "_d", "_s", "_l", "_k"}
