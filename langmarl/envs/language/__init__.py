"""The language environment: teams of agents on qa, math, coding and writing tasks."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "LanguageEnv": "langmarl.envs.language.env",
    "load_tasks": "langmarl.envs.language.datasets",
    "team_ids": "langmarl.envs.language.env",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.envs.language.datasets import load_tasks
    from langmarl.envs.language.env import LanguageEnv, team_ids
