"""Named LLM presets: current OpenAI models, OpenAI-compatible providers, local servers.

The table itself is in :mod:`langmarl.llm.preset_table`; prices are list prices per million
tokens (USD) at the time of writing; override them with ``input_price_per_million`` /
``output_price_per_million`` when they change.
"""

from __future__ import annotations

from langmarl.llm.config import LLMConfig, load_llm_config
from langmarl.llm.preset_table import LOCAL_MODEL, PRESETS, Preset

__all__ = [
    "LOCAL_MODEL",
    "PRESETS",
    "Preset",
    "get_llm_config",
    "list_available_models",
    "preset_config",
]


def preset_config(name: str) -> LLMConfig:
    """The ``LLMConfig`` of preset ``name``.

    Raises:
        ConfigError: for an unknown name, with the closest preset and the full list.
    """
    return LLMConfig.from_preset(name)


def get_llm_config(name_or_path: str) -> LLMConfig:
    """Get an LLM config by preset name or from a JSON/YAML file.

    Raises:
        ConfigError: (a ``ValueError``) if the name is not a preset and no such file exists.
    """
    return load_llm_config(name_or_path)


def list_available_models() -> dict[str, str]:
    """All predefined models, mapped to a one-line description."""
    return {name: preset.description for name, preset in PRESETS.items()}
