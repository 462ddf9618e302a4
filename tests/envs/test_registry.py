"""The environment registry: lazy entry points, decorator, did-you-mean."""

from collections.abc import Iterator
from typing import Any

import pytest

import langmarl
from langmarl.core.errors import ConfigError
from langmarl.envs.registry import ENV_REGISTRY, EnvRegistry


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        ENV_REGISTRY._specs.pop(name, None)


def test_builtin_envs_are_listed() -> None:
    names = langmarl.list_envs()
    assert {"language", "tictactoe", "single_step", "parallel_tasks"} <= set(names)
    assert names == sorted(names)


def test_register_env_decorator_makes_the_class_available(cleanup: list[str]) -> None:
    cleanup.append("my_env")

    @langmarl.register_env("my_env")
    class MyEnv:
        def __init__(self, config: Any, size: int = 3) -> None:
            self.config, self.size = config, size

    assert "my_env" in langmarl.list_envs()
    env = langmarl.make_env("my_env", {"k": 1}, size=5)
    assert isinstance(env, MyEnv) and env.config == {"k": 1} and env.size == 5


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'tictactoe'") as info:
        langmarl.make_env("tictactoo")
    assert isinstance(info.value, ValueError)  # the reference raises ValueError


def test_fresh_registry_is_independent_and_lazy() -> None:
    registry = EnvRegistry()
    registry.register("lazy", "no_such_module_xyz:Env", description="never imported")
    assert registry.names() == ["lazy"] and registry.descriptions()["lazy"] == "never imported"
    with pytest.raises(ConfigError, match="cannot be loaded from 'no_such_module_xyz:Env'"):
        registry.make("lazy")
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("lazy", dict)
    registry.register("lazy", dict, overwrite=True, a=1)
    assert registry.make("lazy") == {"a": 1}
    assert "lazy" not in langmarl.list_envs()
