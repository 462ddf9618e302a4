"""Typed, validated configuration: run configs per environment and their loading."""

from langmarl.config.base import BaseConfig
from langmarl.config.envs import (
    LanguageTaskConfig,
    OvercookedConfig,
    PistonballConfig,
    PosterConfig,
    TicTacToeConfig,
)
from langmarl.config.loading import (
    apply_overrides,
    config_from_dict,
    load_config,
    parse_assignment,
    read_mapping,
)

__all__ = [
    "BaseConfig",
    "LanguageTaskConfig",
    "OvercookedConfig",
    "PistonballConfig",
    "PosterConfig",
    "TicTacToeConfig",
    "apply_overrides",
    "config_from_dict",
    "load_config",
    "parse_assignment",
    "read_mapping",
]
