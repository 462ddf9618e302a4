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


def test_one_spec_names_factory_config_and_hooks() -> None:
    from langmarl.config.envs import LanguageTaskConfig, TicTacToeConfig
    from langmarl.parl.callbacks import parl_training_hooks
    from langmarl.parl.config import ParallelTasksConfig

    assert ENV_REGISTRY.spec("language").config_class() is LanguageTaskConfig
    assert ENV_REGISTRY.spec("tictactoe").config_class() is TicTacToeConfig
    assert ENV_REGISTRY.spec("parallel_tasks").config_class() is ParallelTasksConfig
    spec = ENV_REGISTRY.spec("parallel_tasks")
    assert spec.training_hooks == "langmarl.parl.callbacks:parl_training_hooks"
    assert parl_training_hooks is not None
    assert ENV_REGISTRY.spec("language").training_callbacks(env=object()) == []


def test_every_builtin_env_has_a_config_class() -> None:
    from langmarl.config.base import BaseConfig

    for name in langmarl.list_envs():
        assert issubclass(ENV_REGISTRY.spec(name).config_class(), BaseConfig), name


def test_an_env_registered_without_a_factory_says_not_built() -> None:
    from langmarl.config import PistonballConfig

    registry = EnvRegistry()
    registry.register("later", None, description="coming", config=PistonballConfig)
    assert registry.spec("later").config_class() is PistonballConfig
    with pytest.raises(ConfigError, match="'later' is not built yet"):
        registry.make("later", PistonballConfig())
    assert registry.names() == ["later"] and registry.names(built_only=True) == []
    assert "pistonball" in langmarl.list_envs(built_only=True)  # issue 15 built it


def test_load_config_asks_the_registry_and_suggests_names(tmp_path: Any) -> None:
    from langmarl.config import BaseConfig, load_config

    path = tmp_path / "c.json"
    path.write_text('{"env": "tictactoo"}')
    with pytest.raises(ConfigError, match="Did you mean 'tictactoe'"):
        load_config(path)
    registry = EnvRegistry()
    registry.register("mine", dict)  # no config class given: BaseConfig
    path.write_text('{"env": "mine", "num_agents": 3}')
    config = load_config(path, registry=registry)
    assert type(config) is BaseConfig and config.num_agents == 3


def test_hooks_of_a_fresh_registry_are_called_with_env_and_config() -> None:
    seen: list[Any] = []

    def hooks(env: Any, config: Any) -> list[str]:
        seen.append((env, config))
        return ["cb"]

    registry = EnvRegistry()
    registry.register("h", dict, training_hooks=hooks)
    assert registry.spec("h").training_callbacks("env", "config") == ["cb"]
    assert seen == [("env", "config")]
    registry.register("bad", dict, training_hooks="no_such_module_xyz:hooks")
    with pytest.raises(ConfigError, match="training hooks of 'bad' cannot be loaded"):
        registry.spec("bad").training_callbacks("env")
