"""Choosing a model spec and building the model it names."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from launcher.errors import ConfigError, ModelError, UsageError
from launcher.models.anthropic import AnthropicModel
from launcher.models.factory import create_model, resolve_model_spec
from launcher.models.openai import OpenAIModel
from launcher.models.scripted import ScriptedModel


def test_cli_wins_over_agent_and_env() -> None:
    env = {"SUBAGENT_MODEL": "openai:env"}
    assert resolve_model_spec("openai:cli", "openai:agent", env) == "openai:cli"
    assert resolve_model_spec(None, "openai:agent", env) == "openai:agent"
    assert resolve_model_spec(None, None, env) == "openai:env"


def test_no_model_anywhere_says_how_to_choose_one() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model_spec(None, "", {})
    message = str(caught.value)
    assert "--model" in message and "SUBAGENT_MODEL" in message and "scripted:" in message


def test_unknown_provider_lists_the_providers() -> None:
    with pytest.raises(UsageError) as caught:
        create_model("gemini:pro", env={})
    assert all(name in str(caught.value) for name in ("openai", "anthropic", "scripted"))


def test_spec_without_model_name_is_usage_error() -> None:
    with pytest.raises(UsageError):
        create_model("openai", env={})


def test_scripted_path_is_relative_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("steps:\n  - say: hi\n", encoding="utf-8")
    model = create_model("scripted:run.yaml", workspace=tmp_path)
    assert isinstance(model, ScriptedModel)
    assert model.spec == "scripted:run.yaml"
    assert model.steps[0].say == "hi"


def test_bad_script_fails_at_creation(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("steps: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        create_model("scripted:bad.yaml", workspace=tmp_path)


def test_openai_base_url_argument_beats_env() -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://env.example/v1"}
    http = httpx2.AsyncClient()
    model = create_model("openai:gpt", http=http, env=env, base_url="https://arg.example/v1")
    assert isinstance(model, OpenAIModel)
    assert model.base_url == "https://arg.example/v1"
    assert create_model("openai:gpt", http=http, env=env).base_url == "https://env.example/v1"


def test_missing_openai_key_names_the_env_var() -> None:
    with pytest.raises(ModelError) as caught:
        create_model("openai:gpt", env={})
    assert "OPENAI_API_KEY" in str(caught.value) and "scripted:" in str(caught.value)


def test_missing_anthropic_key_names_the_env_var() -> None:
    with pytest.raises(ModelError) as caught:
        create_model("anthropic:claude", env={})
    assert "ANTHROPIC_API_KEY" in str(caught.value)


def test_loopback_base_url_needs_no_key() -> None:
    model = create_model("openai:llama", env={"OPENAI_BASE_URL": "http://localhost:11434/v1"})
    assert isinstance(model, OpenAIModel)
    model = create_model("anthropic:c", env={}, base_url="http://127.0.0.1:9/")
    assert isinstance(model, AnthropicModel)
    assert model.base_url == "http://127.0.0.1:9"
