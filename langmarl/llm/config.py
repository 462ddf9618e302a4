"""`LLMConfig`: how to reach one model, and what it costs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from langmarl.core.errors import ConfigError, MissingAPIKeyError
from langmarl.core.mappings import read_mapping
from langmarl.core.validation import config_error, did_you_mean
from langmarl.llm.preset_table import PRESETS

LOCAL_ENDPOINT = "local"


class LLMConfig(BaseModel):
    """Configuration for a single LLM. Every remote provider speaks the OpenAI API.

    ``provider="local"`` selects the embedded model (SmolLM2-135M-Instruct), which needs no
    endpoint and no key. API keys are never serialized: ``to_dict``/``model_dump`` leave them
    out, and ``repr`` masks them.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    name: str
    """Human-readable identifier (e.g. ``"gpt-4o"``)."""
    model_string: str
    """Model name sent to the API (e.g. ``"gpt-4o"``)."""
    provider: Literal["openai", "local"] = "openai"
    """``"openai"``: any OpenAI-compatible HTTP endpoint. ``"local"``: the embedded model."""
    base_url: str | None = None
    """API base URL; ``None`` is the default OpenAI endpoint."""
    api_key: SecretStr | None = Field(default=None, exclude=True)
    """API key; ``None`` reads ``api_key_env_var``. Never written to disk."""
    api_key_env_var: str = "OPENAI_API_KEY"
    """Environment variable holding the API key."""
    requires_api_key: bool = True
    """False for servers that accept any key (Ollama, vLLM, ``langmarl serve`` without a key)."""
    is_multimodal: bool = False
    """Whether the model accepts image inputs."""
    max_tokens: int = Field(default=4096, gt=0, le=1_000_000)
    """Maximum tokens per response."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature; ``None`` leaves the provider's default (0.7 for the local model)."""
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    """Nucleus sampling mass; ``None`` leaves the provider's default."""
    seed: int | None = None
    """Sampling seed, where the provider honours one (the local model does)."""
    input_price_per_million: float = Field(default=0.0, ge=0.0)
    """USD per million input tokens."""
    output_price_per_million: float = Field(default=0.0, ge=0.0)
    """USD per million output tokens."""
    timeout: float = Field(default=120.0, gt=0.0)
    """Seconds one HTTP attempt may take before it is abandoned and retried (remote
    endpoints; a call to the embedded model is bounded by ``max_tokens`` instead)."""
    max_retries: int = Field(default=4, ge=0, le=20)
    """Retries after the first attempt on 429, 5xx, timeouts and connection errors."""
    retry_initial_wait: float = Field(default=0.5, ge=0.0, le=60.0)
    """Seconds before the first retry; doubles per retry (plus jitter), at most 20 s, and
    never less than a server's ``Retry-After``."""
    max_concurrency: int = Field(default=8, ge=1)
    """Most requests in flight at once to this endpoint (shared by all clients of it)."""
    extra_params: dict[str, Any] = Field(default_factory=dict)
    """Additional provider-specific request parameters, passed through unchanged."""

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else value

    @property
    def endpoint(self) -> str:
        """Where requests go: the base URL, ``"local"``, or OpenAI's default."""
        if self.provider == "local":
            return LOCAL_ENDPOINT
        return self.base_url or "https://api.openai.com/v1"

    def get_api_key(self) -> str:
        """Return the API key from the config or the environment.

        Raises:
            MissingAPIKeyError: (a ``ValueError``) when a key is required and none is found;
                the message names the environment variable and the ``llm="local"`` option.
        """
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        key = os.environ.get(self.api_key_env_var)
        if key:
            return key
        if self.provider == "local" or not self.requires_api_key:
            return "not-needed"
        raise MissingAPIKeyError(self.endpoint, self.model_string, self.api_key_env_var, self.name)

    @classmethod
    def from_preset(cls, name: str) -> LLMConfig:
        """Create a config from a predefined model name (see ``list_available_models``).

        Raises:
            ConfigError: for an unknown name, with the closest preset and the full list.
        """
        preset = PRESETS.get(name)
        if preset is None:
            raise ConfigError(
                f"Unknown LLM preset {name!r}.{did_you_mean(name, PRESETS)} "
                f"Available: {', '.join(PRESETS)}; or give a path to an LLM config file."
            )
        return cls(name=name, **preset.fields)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMConfig:
        """Create a config from a dict; a ``preset`` key starts from that preset.

        Raises:
            ConfigError: naming each invalid field and, for unknown keys, the closest valid one.
        """
        data = dict(data)
        preset = data.pop("preset", None)
        try:
            if preset is not None:
                base = cls.from_preset(str(preset)).model_dump()
                return cls.model_validate({**base, **data})
            return cls.model_validate(data)
        except ValidationError as exc:
            raise config_error(exc, cls) from None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of this config, without the API key."""
        return self.model_dump(mode="json")

    def with_overrides(self, **changes: Any) -> LLMConfig:
        """A validated copy with ``changes`` applied (the key is kept, not serialized)."""
        try:
            return type(self).model_validate(
                {**self.model_dump(), "api_key": self.api_key, **changes}
            )
        except ValidationError as exc:
            raise config_error(exc, type(self)) from None


def coerce_llm(value: Any) -> LLMConfig | None:
    """Accept ``None``, an ``LLMConfig``, a preset name / config path, or a dict."""
    if value is None or isinstance(value, LLMConfig):
        return value
    if isinstance(value, str):
        return load_llm_config(value)
    if isinstance(value, dict):
        return LLMConfig.from_dict(value)
    raise ConfigError(
        f"An LLM must be a preset name, a config file path or a dict; got {type(value).__name__}"
    )


def load_llm_config(name_or_path: str) -> LLMConfig:
    """An LLM config by preset name or from a JSON/YAML file (``get_llm_config``).

    Raises:
        ConfigError: (a ``ValueError``) if the name is not a preset and no such file exists.
    """
    if name_or_path in PRESETS:
        return LLMConfig.from_preset(name_or_path)
    path = Path(name_or_path)
    if path.suffix in {".json", ".yaml", ".yml"} or path.exists():
        if not path.is_file():
            raise ConfigError(f"LLM config file {str(path)!r} does not exist.")
        data = read_mapping(path)
        data.setdefault("name", path.stem)
        return LLMConfig.from_dict(data)
    return LLMConfig.from_preset(name_or_path)
