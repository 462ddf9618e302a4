"""langmarl: reinforcement learning for teams of LLM agents.

Importing this package is cheap: every public name below loads on first access.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

__version__ = "0.1.0"

# Public name -> module that defines it. Add new public names here (and under TYPE_CHECKING).
_NAMES = {
    # configuration
    "BaseConfig": "langmarl.config.base",
    "LanguageTaskConfig": "langmarl.config.envs",
    "OvercookedConfig": "langmarl.config.envs",
    "PistonballConfig": "langmarl.config.envs",
    "load_config": "langmarl.config.loading",
    # LLM layer
    "LLMClient": "langmarl.llm.client",
    "LLMConfig": "langmarl.llm.config",
    "TokenTracker": "langmarl.llm.tracker",
    "UsageLedger": "langmarl.llm.tracker",
    "get_llm_config": "langmarl.llm.presets",
    "list_available_models": "langmarl.llm.presets",
    # environments
    "make_env": "langmarl.envs.registry",
    "register_env": "langmarl.envs.registry",
    "list_envs": "langmarl.envs.registry",
    # errors
    "LangmarlError": "langmarl.core.errors",
    "ConfigError": "langmarl.core.errors",
    "LLMError": "langmarl.core.errors",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.config.base import BaseConfig
    from langmarl.config.envs import LanguageTaskConfig, OvercookedConfig, PistonballConfig
    from langmarl.config.loading import load_config
    from langmarl.core.errors import ConfigError, LangmarlError, LLMError
    from langmarl.envs.registry import list_envs, make_env, register_env
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.presets import get_llm_config, list_available_models
    from langmarl.llm.tracker import TokenTracker, UsageLedger
