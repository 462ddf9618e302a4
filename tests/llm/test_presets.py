"""LLMConfig, presets, and token accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.config import LLMConfig
from langmarl.llm.presets import PRESETS, get_llm_config, list_available_models
from langmarl.llm.quirks import quirks_for
from langmarl.llm.tracker import TokenTracker


def test_every_preset_builds_and_local_is_keyless() -> None:
    for name in PRESETS:
        assert LLMConfig.from_preset(name).name == name
    local = LLMConfig.from_preset("local")
    assert local.provider == "local" and local.get_api_key() == "not-needed"
    assert set(list_available_models()) == set(PRESETS)


def test_providers_cover_the_ecosystem() -> None:
    urls = {config.fields.get("base_url", "") for config in PRESETS.values()}
    for host in ("googleapis", "deepseek", "together", "openrouter", "11434", "8000"):
        assert any(host in str(url) for url in urls), host


def test_get_llm_config_from_file_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"preset": "vllm", "model_string": "Qwen/Qwen2.5-7B"}))
    config = get_llm_config(str(path))
    assert (
        config.base_url == "http://localhost:8000/v1" and config.model_string == "Qwen/Qwen2.5-7B"
    )
    with pytest.raises(ConfigError, match="Did you mean 'gpt-4o'"):
        get_llm_config("gpt-4oo")
    with pytest.raises(ConfigError, match="does not exist"):
        get_llm_config(str(tmp_path / "missing.json"))


def test_from_dict_rejects_unknown_keys_with_suggestion() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'max_tokens'"):
        LLMConfig.from_dict({"name": "x", "model_string": "x", "max_token": 5})


def test_to_dict_never_contains_the_key() -> None:
    config = LLMConfig(name="x", model_string="x", api_key="sk-secret-value")
    assert "sk-secret-value" not in json.dumps(config.to_dict())
    assert "sk-secret-value" not in repr(config)
    assert config.with_overrides(max_tokens=5).get_api_key() == "sk-secret-value"


def test_env_var_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-env")
    assert LLMConfig.from_preset("deepseek-chat").get_api_key() == "from-env"


def test_quirks_table() -> None:
    assert quirks_for("o4-mini").max_tokens_param == "max_completion_tokens"
    assert quirks_for("openai/gpt-5-mini").sampling is False
    assert quirks_for("gpt-4o").max_tokens_param == "max_tokens"
    assert quirks_for("gpt-5-chat-latest").sampling is True


def test_token_tracker_reference_behaviour() -> None:
    tracker = TokenTracker("gpt-4o-mini")
    tracker.add_usage(1_000_000, 500_000)
    stats = tracker.get_stats()
    assert stats["total_tokens"] == 1_500_000
    assert stats["input_cost_usd"] == pytest.approx(0.15)
    assert stats["cost_usd"] == pytest.approx(0.45)
    assert tracker.estimate_cost(2_000_000, 0) == pytest.approx(0.30)
    assert tracker.get_stats()["input_tokens"] == 1_000_000  # estimate does not record
    assert "gpt-4o-mini" in tracker.get_summary_string()
    tracker.reset()
    assert tracker.get_stats()["total_tokens"] == 0
    custom = TokenTracker("unknown-model", input_price=1.0, output_price=2.0)
    custom.add_usage(1_000_000, 1_000_000)
    assert custom.get_stats()["cost_usd"] == pytest.approx(3.0)
