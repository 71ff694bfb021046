"""Codex, Gemini CLI and opencode agent files, and pi's provider/model: read through their
tables, never wider than written, and offered to the model under the host's own names."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from launcher.config.agents import parse_agent_file, parse_agent_text
from launcher.config.dialect_codex import CODEX
from launcher.config.dialect_gemini import GEMINI
from launcher.config.dialect_opencode import OPENCODE
from launcher.config.dialect_pi import PI
from launcher.config.discovery import load_config
from launcher.config.host_tools import deny_selectors
from launcher.config.selectors import parse_selectors
from launcher.config.types import AgentSpec
from launcher.errors import ConfigError
from launcher.toolset.naming import naming_for, plain_name
from launcher.toolset.scope import ToolScope, selector_matches
from launcher.toolset.types import ToolEntry


def md(fields: str, body: str = "Do it.") -> str:
    return f"---\n{fields}\n---\n{body}\n"


def server_tool(name: str, server: str, tool: str) -> ToolEntry:
    async def never(arguments: object) -> object:
        raise AssertionError("not called")

    return ToolEntry(name, server, tool, "", {}, never)  # type: ignore[arg-type]


def offered(spec: AgentSpec, server: str, tool: str) -> bool:
    entry = server_tool(plain_name(server, tool), server, tool)
    scope = ToolScope(spec)
    return scope.gate(entry) is None and scope.selects(entry) is None


# pi ----------------------------------------------------------------------------------


def test_pi_subagents_own_examples_load_with_their_models() -> None:
    scout = md(
        "name: scout\ndescription: Recon\ntools: read, grep, find, ls, bash, write\n"
        "model: anthropic/claude-haiku-4-5\nsystemPromptMode: replace\n"
        "inheritProjectContext: false\ninheritSkills: false\noutput: context.md\n"
        "defaultProgress: true"
    )
    worker = md("name: worker\ndescription: Worker\nmodel: claude-sonnet-4-6\ndefaultReads: a.md")
    assert parse_agent_text(scout, "scout.md", [], PI).model == "anthropic:claude-haiku-4-5"
    assert parse_agent_text(worker, "worker.md", [], PI).model == "anthropic:claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("written", "ours"),
    [
        ("openai/gpt-5:high", "openai:gpt-5"),
        ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        ("gpt-5", "openai:gpt-5"),
        ("openrouter/anthropic/claude-x", "openrouter:anthropic/claude-x"),
    ],
)
def test_pi_model_spellings(written: str, ours: str) -> None:
    assert parse_agent_text(md(f"model: {written}"), "a.md", [], PI).model == ours


def test_a_scripted_model_stays_relative_to_the_agent_file(tmp_path: Path) -> None:
    spec = parse_agent_text(md("model: scripted:s/run.yaml"), tmp_path / "a.md", [], PI)
    assert spec.model == f"scripted:{tmp_path / 's' / 'run.yaml'}"


# Codex --------------------------------------------------------------------------------

CODEX_REVIEWER = '''name = "reviewer"
description = "Reviews code."
model = "gpt-5.3-codex"
model_reasoning_effort = "high"
sandbox_mode = "read-only"
developer_instructions = """
Review the change.
"""
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_codex_read_only_agent_gets_no_shell_and_no_edits(tmp_path: Path) -> None:
    notes: list[str] = []
    spec = parse_agent_file(write(tmp_path / "r.toml", CODEX_REVIEWER), notes, CODEX)
    assert (spec.name, spec.model, spec.prompt) == (
        "reviewer",
        "openai:gpt-5.3-codex",
        "Review the change.",
    )
    assert ToolScope(spec).builtin_names() == ("read", "grep", "find", "ls")
    assert any("model_reasoning_effort" in note for note in notes)


def test_codex_workspace_write_requires_the_sandbox(tmp_path: Path) -> None:
    text = CODEX_REVIEWER.replace("read-only", "workspace-write")
    spec = parse_agent_file(write(tmp_path / "r.toml", text), [], CODEX)
    assert spec.sandbox is not None and spec.sandbox.mode == "required"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('sandbox_mode = "paranoid"', "sandbox_mode"),
        ('approval_policy = "untrusted"', "approval_policy"),
        ('developer_instructions = ""', "developer_instructions"),
        ("name = ", "TOML"),
        ('shell_environment_policy = { inherit = "none" }', "shell_environment_policy"),
        ("[features]\nshell_tool = false", "features"),
    ],
)
def test_codex_refusals_name_the_file_and_field(tmp_path: Path, line: str, why: str) -> None:
    key = line.split(" ")[0]
    kept = [ln for ln in CODEX_REVIEWER.splitlines() if not ln.startswith(key)]
    if key.startswith("["):  # a table goes last, after every top-level key
        kept, line = [*kept, line], ""
    if key == "developer_instructions":
        kept = [ln for ln in kept if ln not in ("Review the change.", '"""')]
    path = write(tmp_path / "r.toml", "\n".join([line, *kept]) + "\n")
    with pytest.raises(ConfigError) as caught:
        parse_agent_file(path, [], CODEX)
    assert str(path) in str(caught.value) and why in str(caught.value)


def test_codex_server_tables_narrow_as_written(tmp_path: Path) -> None:
    text = CODEX_REVIEWER.replace('sandbox_mode = "read-only"\n', "") + (
        '[mcp_servers.gh]\ncommand = "gh-mcp"\ndisabled_tools = ["delete_repo"]\n'
        "startup_timeout_sec = 5\n[mcp_servers.web]\nenabled = false\n"
    )
    spec = parse_agent_file(write(tmp_path / "r.toml", text), [], CODEX)
    (server,) = spec.servers
    assert (server.name, server.disabled_tools, server.startup_timeout) == (
        "gh",
        ("delete_repo",),
        5.0,
    )
    assert not offered(spec, "web", "fetch")


@pytest.mark.parametrize(
    "line",
    [
        'disabled-tools = ["create_issue"]',
        'Disabled_tools = ["create_issue"]',
        'disabledtool = ["create_issue"]',
        'tools.create_issue.approval_mode = "prompt"',
    ],
)
def test_a_misspelt_codex_server_filter_refuses_the_agent(tmp_path: Path, line: str) -> None:
    # Warned and ignored, it would leave the tool it meant to hide offered.
    text = CODEX_REVIEWER + f'[mcp_servers.gh]\ncommand = "gh-mcp"\n{line}\n'
    with pytest.raises(ConfigError) as caught:
        parse_agent_file(write(tmp_path / "r.toml", text), [], CODEX)
    assert "server 'gh'" in caught.value.message and "restriction" in caught.value.message


# Gemini CLI --------------------------------------------------------------------------


def test_a_gemini_tools_list_is_the_allowlist_of_every_tool() -> None:
    notes: list[str] = []
    spec = parse_agent_text(
        md("name: sec\ndescription: d\nkind: local\ntools: [read_file, grep_search, web_fetch]"),
        "sec.md",
        notes,
        GEMINI,
    )
    assert ToolScope(spec).builtin_names() == ("read", "grep")
    assert not offered(spec, "github", "create_issue")
    assert any("web_fetch" in note for note in notes)


def test_a_gemini_tools_string_is_read_as_the_same_list() -> None:
    spec = parse_agent_text(md("tools: read_file, search_file_content"), "a.md", [], GEMINI)
    assert ToolScope(spec).builtin_names() == ("read", "grep")
    assert not offered(spec, "github", "create_issue")


def test_gemini_mcp_entries_select_servers() -> None:
    spec = parse_agent_text(
        md("tools: [read_file, mcp_github_*, mcp_jira_get_issue, mcp_wiki_get*]"),
        "a.md",
        [],
        GEMINI,
    )
    assert offered(spec, "github", "create_issue")
    assert offered(spec, "jira", "get_issue")
    assert not offered(spec, "jira", "delete_issue")
    assert not offered(spec, "slack", "post")
    assert offered(spec, "wiki", "get_page") and not offered(spec, "wiki", "put_page")


def test_gemini_timeout_mins_is_the_agents_timeout() -> None:
    assert parse_agent_text(md("timeout_mins: 5"), "a.md", [], GEMINI).timeout == 300


def test_gemini_inline_servers_keep_their_exclusions() -> None:
    spec = parse_agent_text(
        md(
            "mcpServers:\n  gh:\n    command: gh-mcp\n"
            "    excludeTools: [delete_repo]\n    timeout: 5000\n"
            "  old:\n    url: http://127.0.0.1:1/sse"
        ),
        "a.md",
        [],
        GEMINI,
    )
    (server,) = spec.servers
    assert (server.disabled_tools, server.tool_timeout) == (("delete_repo",), 5.0)
    assert not offered(spec, "old", "anything")  # SSE cannot run here: never another "old"


@pytest.mark.parametrize("key", ["exclude_tools", "excludedTools", "include-tools", "ExcludeTools"])
def test_a_misspelt_gemini_server_filter_refuses_the_agent(key: str) -> None:
    fields = f"mcpServers:\n  gh:\n    command: gh-mcp\n    {key}: [create_issue]"
    with pytest.raises(ConfigError) as caught:
        parse_agent_text(md(fields), "a.md", [], GEMINI)
    assert "server 'gh'" in caught.value.message and "restriction" in caught.value.message


@pytest.mark.parametrize(
    "fields", ["kind: remote", "timeout_mins: -5", "tools: [read_*]", "tools: [mcp_g*_x]"]
)
def test_gemini_fields_that_cannot_be_honoured_refuse(fields: str) -> None:
    with pytest.raises(ConfigError):
        parse_agent_text(md(fields), "a.md", [], GEMINI)


# opencode ----------------------------------------------------------------------------


def test_opencode_tools_and_permissions_deny() -> None:
    notes: list[str] = []
    spec = parse_agent_text(
        md(
            "description: d\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5#high\n"
            "tools:\n  Write: false\n  gh_*: false\n"
            'permission:\n  edit: deny\n  bash:\n    "git diff": allow\n    "*": ask'
        ),
        "oc.md",
        notes,
        OPENCODE,
    )
    assert spec.model == "anthropic:claude-sonnet-4-5"
    assert ToolScope(spec).builtin_names() == ("read", "grep", "find", "ls")
    assert not offered(spec, "gh", "create_issue")
    assert offered(spec, "jira", "get_issue")


def test_opencode_star_false_makes_later_trues_the_allowlist() -> None:
    spec = parse_agent_text(
        md('tools:\n  read: true\n  "*": false\n  grep: true\n  jira_*: true'),
        "oc.md",
        [],
        OPENCODE,
    )
    assert ToolScope(spec).builtin_names() == ("grep",)
    assert offered(spec, "jira", "get_issue")
    assert not offered(spec, "gh", "create_issue")


def test_opencode_star_deny_permission_is_an_allowlist() -> None:
    notes: list[str] = []
    spec = parse_agent_text(
        md(
            'permission:\n  edit: allow\n  "*": deny\n  bash: ask\n  glob: allow\n'
            '  read: allow\n  webfetch: allow\n  "rm -rf *": deny\n  "g*": allow\n'
            '  skill:\n    "*": deny\n    docs: allow\n  jira_*: allow'
        ),
        "oc.md",
        notes,
        OPENCODE,
    )
    # edit came before "*": deny, which overrides it; bash is ask (nobody to ask).
    assert ToolScope(spec).builtin_names() == ("read", "grep", "find")
    assert offered(spec, "jira", "get_issue")
    assert not offered(spec, "gh", "create_issue")
    assert any("'g*': only the built-ins it names" in note for note in notes)


@pytest.mark.parametrize(
    ("fields", "builtins"),
    [
        ('tools:\n  "*": false\n  bash: true\npermission:\n  "*": deny\n  read: allow', ()),
        (
            'tools:\n  "*": false\n  bash: true\n  read: true\n'
            'permission:\n  "*": deny\n  read: allow\n  jira_*: allow',
            ("read",),
        ),
        ('permission:\n  "*": deny\n  read: allow\ntools:\n  "*": false\n  bash: true', ()),
    ],
    ids=["disjoint", "overlap", "permission-first"],
)
def test_opencode_tools_and_permission_allowlists_intersect(
    fields: str, builtins: tuple[str, ...]
) -> None:
    # Two allowlists on one agent: only what both allow, never what either allows.
    spec = parse_agent_text(md(fields), "oc.md", [], OPENCODE)
    assert ToolScope(spec).builtin_names() == builtins
    assert not offered(spec, "jira", "get_issue")
    assert not offered(spec, "gh", "create_issue")


def test_opencode_two_step_limits_keep_the_smaller() -> None:
    for fields in ("maxSteps: 100\nsteps: 2", "steps: 2\nmaxSteps: 100"):
        assert parse_agent_text(md(fields), "oc.md", [], OPENCODE).max_turns == 2


def test_opencode_v2_permissions_list_denies_whole_tools() -> None:
    spec = parse_agent_text(
        md(
            "permissions:\n  - {action: edit, resource: '*', effect: deny}\n"
            "  - {action: shell, resource: 'rm *', effect: ask}"
        ),
        "oc.md",
        [],
        OPENCODE,
    )
    assert ToolScope(spec).builtin_names() == ("read", "grep", "find", "ls")


@pytest.mark.parametrize(
    "fields",
    [
        "permission:\n  external_directory: deny",
        "permission:\n  edit: maybe",
        "prompt: Be careful.",
        "tools:\n  " + "a_*" * 200 + ": false",
        "mode: sometimes",
    ],
)
def test_opencode_fields_that_cannot_be_honoured_refuse(fields: str) -> None:
    with pytest.raises(ConfigError):
        parse_agent_text(md(fields), "oc.md", [], OPENCODE)


_PART = st.text(alphabet="ab_-.", min_size=1, max_size=5)


@given(_PART, _PART, st.text(alphabet="ab_*?", min_size=1, max_size=7))
def test_an_opencode_deny_glob_denies_every_tool_whose_name_it_matches(
    server: str, tool: str, pattern: str
) -> None:
    exposed = plain_name(server, tool, separator="_")
    if not fnmatchcase(exposed, pattern):
        return
    selectors = parse_selectors(deny_selectors(pattern), path=None, field="x", deny=True)
    entry = server_tool(exposed, server, tool)
    assert any(selector_matches(s, entry) for s in selectors), (server, tool, pattern)


# discovery and naming ------------------------------------------------------------------


def test_every_host_folder_is_discovered_in_its_dialect(tmp_path: Path) -> None:
    write(tmp_path / ".codex/agents/r.toml", CODEX_REVIEWER)
    write(tmp_path / ".gemini/agents/g.md", md("name: g\ndescription: d"))
    write(tmp_path / ".opencode/agent/o.md", md("description: d"))
    home = tmp_path / "home"
    write(home / ".config/opencode/agent/u.md", md("description: d"))
    write(home / ".gemini/agents/ug.md", md("name: ug\ndescription: d"))
    config = load_config(cwd=tmp_path, home=home, env={"HOME": str(home)})
    dialects = {name: spec.dialect for name, spec in config.agents.items()}
    assert dialects == {
        "reviewer": "codex",
        "g": "gemini",
        "o": "opencode",
        "u": "opencode",
        "ug": "gemini",
        "general-purpose": "subagent",
    }


@pytest.mark.parametrize(
    ("dialect", "bash", "mcp"),
    [
        ("codex", "shell", "mcp__gh__create_issue"),
        ("gemini", "run_shell_command", "mcp_gh_create_issue"),
        ("opencode", "bash", "gh_create_issue"),
    ],
)
def test_each_host_names_tools_as_its_model_knows_them(dialect: str, bash: str, mcp: str) -> None:
    naming = naming_for(dialect)
    assert naming.local_name("bash") == bash
    assert plain_name("gh", "create_issue", naming.prefix, naming.separator) == mcp


def test_a_projects_host_entry_for_serve_itself_is_left_out(tmp_path: Path) -> None:
    write(
        tmp_path / ".mcp.json",
        '{"mcpServers": {"subagent": {"command": "subagent", "args": ["serve", "--project", '
        '"."]}, "other": {"command": "python", "args": ["-m", "launcher.cli", "serve"]}, '
        '"gh": {"command": "gh-mcp", "args": ["serve"]}, '
        '"env": {"command": "/usr/bin/env", "args": ["/opt/bin/subagent", "-v", "serve"]}}}',
    )
    home = tmp_path / "home"
    config = load_config(cwd=tmp_path, home=home, env={"HOME": str(home)})
    assert set(config.servers) == {"gh"}
    assert any("subagent serve: left out" in w for w in config.warnings)
