"""Environments: the registry, text environments, multi-agent environments."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "ENV_REGISTRY": "langmarl.envs.registry",
    "EnvRegistry": "langmarl.envs.registry",
    "EnvSpec": "langmarl.envs.registry",
    "list_envs": "langmarl.envs.registry",
    "make_env": "langmarl.envs.registry",
    "register_env": "langmarl.envs.registry",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.envs.registry import (
        ENV_REGISTRY,
        EnvRegistry,
        EnvSpec,
        list_envs,
        make_env,
        register_env,
    )
