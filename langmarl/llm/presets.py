"""Named LLM presets: current OpenAI models, OpenAI-compatible providers, local servers.

The table itself is in :mod:`langmarl.llm.preset_table`; prices are list prices per million
tokens (USD) at the time of writing; override them with ``input_price_per_million`` /
``output_price_per_million`` when they change.
"""

from __future__ import annotations

from langmarl.core.errors import ConfigError
from langmarl.llm.config import LLMConfig, load_llm_config
from langmarl.llm.preset_table import LOCAL_MODEL, PRESETS, Preset

__all__ = [
    "LOCAL_MODEL",
    "PRESETS",
    "Preset",
    "get_llm_config",
    "list_available_models",
    "local_server_url",
    "preset_config",
]


def preset_config(name: str) -> LLMConfig:
    """The ``LLMConfig`` of preset ``name``.

    Raises:
        ConfigError: for an unknown name, with the closest preset and the full list.
    """
    return LLMConfig.from_preset(name)


def get_llm_config(
    name_or_path: str, base_url: str | None = None, port: int | None = None
) -> LLMConfig:
    """Get an LLM config by preset name or from a JSON/YAML file.

    Args:
        name_or_path: A preset name or an LLM config file.
        base_url: Another address for a server preset (``langmarl-serve``, ``vllm``,
            ``ollama-*``), e.g. ``http://127.0.0.1:9000/v1``.
        port: Shorthand for ``base_url`` on this machine: :func:`local_server_url`.

    Raises:
        ConfigError: (a ``ValueError``) if the name is not a preset and no such file exists,
            if both ``base_url`` and ``port`` are given, or if the model is the embedded one
            (it has no address).
    """
    config = load_llm_config(name_or_path)
    if base_url is not None and port is not None:
        raise ConfigError(
            f"give --base-url {base_url!r} or --port {port}, not both "
            "(--port N means --base-url http://127.0.0.1:N/v1)"
        )
    url = local_server_url(port) if port is not None else base_url
    if url is None:
        return config
    if config.provider == "local":
        raise ConfigError(
            f"{name_or_path!r} is the embedded model, which has no address: to reach "
            f"`langmarl serve` at {url}, use --llm langmarl-serve"
        )
    return config.with_overrides(base_url=url)


def local_server_url(port: int) -> str:
    """The OpenAI-compatible address of a server on this machine, e.g. ``langmarl serve
    --port 9000`` → ``http://127.0.0.1:9000/v1``."""
    return f"http://127.0.0.1:{port}/v1"


def list_available_models() -> dict[str, str]:
    """All predefined models, mapped to a one-line description."""
    return {name: preset.description for name, preset in PRESETS.items()}
