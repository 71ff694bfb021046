"""Issue 14.2: property tests over agent files, mcp.json, selectors and scripts.

The property: a loader returns a value or raises ConfigError naming the file — never any
other exception, never a hang (hypothesis' deadline bounds each example).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from launcher.config.agents import KNOWN_FIELDS, parse_agent_text
from launcher.config.selectors import parse_selectors
from launcher.config.servers import parse_servers_text
from launcher.errors import ConfigError
from launcher.models.scripted import load_script

AGENT = Path("fuzz.md")
SERVERS = Path("mcp.json")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1000, max_size=3000),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(
    fields=st.dictionaries(
        st.sampled_from(KNOWN_FIELDS) | st.text(max_size=10), json_values, max_size=6
    )
)
def test_agent_frontmatter_values_are_accepted_or_a_config_error(fields: dict) -> None:
    # JSON is YAML (flow style): every field with any shape of value.
    body = "".join(f"{json.dumps(k)}: {json.dumps(v)}\n" for k, v in fields.items() if _finite(v))
    _agent_property("---\n" + body + "---\nbody\n")


def _finite(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


@given(text=st.text(max_size=300))
@example(text="tools: *\n")
@example(text="a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\ntools: [*c, *c]\n")
@example(text="max_turns: 1" + "0" * 5000 + "\n")  # found: ValueError
@example(text="max_depth: .inf\nmax_turns: .nan\n")
@example(text="\x1f")  # found: ReaderError raised outside the try
@example(text='name: "\\u0000\\ud800"\n')
@example(text="? [a, b]\n: c\n")
@example(text="!!python/object:os.system x\n")
def test_agent_frontmatter_text_is_accepted_or_a_config_error(text: str) -> None:
    _agent_property("---\n" + text + "\n---\nbody\n")


def _agent_property(text: str) -> None:
    try:
        spec = parse_agent_text(text, AGENT, [])
    except ConfigError as exc:
        assert exc.path == AGENT and str(exc).startswith(str(AGENT))
        return
    assert spec.source == AGENT


def _servers_property(text: str, env: dict[str, str]) -> None:
    try:
        servers, _ = parse_servers_text(text, SERVERS, env)
    except ConfigError as exc:
        assert exc.path == SERVERS
        for value in env.values():
            # A secret never shows in the message (only names of variables may).
            if len(value) >= 8:
                assert value not in exc.message
        return
    assert all(spec.source == SERVERS for spec in servers.values())


@given(data=json_values)
def test_mcp_json_any_shape_is_accepted_or_a_config_error(data: object) -> None:
    if _finite(data):
        _servers_property(json.dumps({"mcpServers": data}), {})
        _servers_property(json.dumps(data), {})


var_text = st.text(alphabet="${}:-_AZaz09 \\", max_size=30)


@given(
    command=var_text,
    args=st.lists(var_text, max_size=3),
    env_value=var_text,
    url=var_text,
    values=st.dictionaries(
        st.sampled_from(["A", "Z", "a_", "AZ"]), st.text(max_size=20), max_size=3
    ),
)
@example(command="${", args=["${}"], env_value="${A:-${Z}}", url="http://${A", values={"A": "x"})
def test_mcp_json_var_references_expand_or_are_a_config_error(
    command: str, args: list[str], env_value: str, url: str, values: dict[str, str]
) -> None:
    doc = {
        "mcpServers": {
            "s": {"command": command, "args": args, "env": {"K": env_value}},
            "h": {"url": url, "headers": {"Authorization": env_value}},
        }
    }
    _servers_property(json.dumps(doc), values)


@given(value=json_values | st.text(alphabet="ext:/_*?[]!,SsAa -all", max_size=40))
@example(value="ext:")
@example(value="ext:/x")
@example(value="ext:s/")
@example(value="S__x[1]")
def test_selectors_parse_or_are_a_config_error(value: object) -> None:
    try:
        selectors = parse_selectors(value, path=AGENT, field="tools", line=3)
    except ConfigError as exc:
        assert (exc.path, exc.field, exc.line) == (AGENT, "tools", 3)
        return
    assert all(s.raw.strip() for s in selectors)


@given(text=st.text(max_size=300) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
@example(text="steps:\n  - sleep: .inf\n")
@example(text="steps:\n  - sleep: 1" + "0" * 5000 + "\n")  # found: ValueError
@example(text="steps:\n  - sleep: 1.0e308\n")
@example(text="steps:\n  - call: [{tool_from: 3}]\n")
@example(text="steps:\n  - {say: [x]}\n")
def test_scripts_load_or_are_a_config_error(tmp_path_factory, text: str) -> None:
    path = tmp_path_factory.mktemp("s") / "s.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    _script_property(path)


@given(data=st.binary(max_size=200))
@example(data=b"\xff\xfe\x00")
def test_binary_scripts_are_a_config_error(tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("b") / "s.yaml"
    path.write_bytes(data)
    _script_property(path)


def _script_property(path: Path) -> None:
    try:
        steps = load_script(path)
    except ConfigError as exc:
        assert exc.path == path
        return
    assert all(0 <= step.sleep <= 3600 for step in steps)
