"""The environment registry: one spec per environment name, the single assembly point of a run.

Shaped like Gymnasium's registration: ``register(name, entry_point)``, ``make(name, config,
**kwargs)``, "did you mean" on unknown names. Each :class:`EnvSpec` names, as lazy
``"module:attr"`` strings (or objects):

- ``entry_point``: the environment's class or factory (``None``: registered but not built
  yet; ``make`` says so);
- ``config``: its run-config class, which :func:`langmarl.config.loading.load_config` uses
  for a file whose ``env`` is this name;
- ``training_hooks``: ``(env, config) -> list[Callback]``, the callbacks a language-space
  run on this env needs (``parallel_tasks``: λ annealing and PARL curves); every trainer
  assembly (``langmarl.api.build_trainer``, so ``langmarl train`` and ``langmarl parl
  train``) adds them.

The module imports nothing above ``core``, so ``config`` can ask it for config classes; the
strings are resolved only when used. The registry is an object so tests can use a fresh one;
``ENV_REGISTRY`` is the process-wide default behind ``make_env``/``register_env``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from langmarl.core.entry_points import EntryPoint, load_entry_point
from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean

if TYPE_CHECKING:
    from langmarl.config.base import BaseConfig

T = TypeVar("T")
BASE_CONFIG = "langmarl.config.base:BaseConfig"
"""The config class of an environment registered without one."""


@dataclass
class EnvSpec:
    """How to build one environment and assemble a run on it.

    Attributes:
        name: Registered name (the ``env`` key of a config file).
        entry_point: A class or factory called as ``factory(config, **kwargs)`` (or
            ``factory(**kwargs)`` without a config), or ``"package.module:attr"`` imported on
            first use; ``None`` for an environment that is registered but not built yet.
        description: One line for ``list_envs``/the CLI.
        kwargs: Default keyword arguments, overridden by those given to ``make``.
        config: The run-config class (a ``BaseConfig`` subclass) or its ``"module:Class"``.
        training_hooks: ``(env, config) -> list[Callback]`` or its ``"module:attr"``: the
            callbacks every language-space run on this env gets; ``None``: none.
    """

    name: str
    entry_point: EntryPoint | None
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    config: EntryPoint = BASE_CONFIG
    training_hooks: EntryPoint | None = None

    def load(self) -> Callable[..., Any]:
        """The class or factory, importing it if the entry point is a string.

        Raises:
            ConfigError: if the env is not built yet or its entry point cannot be loaded.
        """
        if self.entry_point is None:
            raise ConfigError(
                f"Environment {self.name!r} is not built yet: its config ({self.description}) "
                "loads and validates, but there is no environment to train on. Use one of "
                "the built environments (langmarl.list_envs(built_only=True))."
            )
        return load_entry_point(self.entry_point, f"Environment {self.name!r}")

    @property
    def built(self) -> bool:
        """Whether an environment can be made (``entry_point`` is not ``None``)."""
        return self.entry_point is not None

    def config_class(self) -> type[BaseConfig]:
        """The run-config class of this environment."""
        return load_entry_point(self.config, f"The config class of {self.name!r}")

    def training_callbacks(self, env: Any, config: Any = None) -> list[Any]:
        """The callbacks a language-space run on ``env`` needs (empty without hooks)."""
        if self.training_hooks is None:
            return []
        hooks = load_entry_point(self.training_hooks, f"The training hooks of {self.name!r}")
        return list(hooks(env, config))


class EnvRegistry:
    """Named environment specs."""

    def __init__(self) -> None:
        self._specs: dict[str, EnvSpec] = {}

    def register(
        self,
        name: str,
        entry_point: EntryPoint | None,
        *,
        description: str = "",
        config: EntryPoint = BASE_CONFIG,
        training_hooks: EntryPoint | None = None,
        overwrite: bool = False,
        **kwargs: Any,
    ) -> None:
        """Register ``entry_point`` under ``name`` with its config class and training hooks
        (see :class:`EnvSpec`); extra ``kwargs`` are the factory's default arguments.

        Raises:
            ConfigError: if ``name`` is taken and ``overwrite`` is false.
        """
        if name in self._specs and not overwrite:
            raise ConfigError(
                f"Environment {name!r} is already registered "
                f"({self._specs[name].entry_point!r}); pass overwrite=True to replace it."
            )
        self._specs[name] = EnvSpec(
            name, entry_point, description, kwargs, config=config, training_hooks=training_hooks
        )

    def decorator(self, name: str, **kwargs: Any) -> Callable[[T], T]:
        """``@registry.decorator("my_env")`` registers the decorated class."""

        def wrap(cls: T) -> T:
            self.register(name, cls, overwrite=True, **kwargs)  # type: ignore[arg-type]
            return cls

        return wrap

    def spec(self, name: str) -> EnvSpec:
        """The spec for ``name``.

        Raises:
            ConfigError: (a ``ValueError``) naming the closest registered name.
        """
        if name not in self._specs:
            raise ConfigError(
                f"Environment {name!r} is not registered.{did_you_mean(name, self._specs)} "
                f"Registered: {', '.join(sorted(self._specs))}."
            )
        return self._specs[name]

    def make(self, name: str, config: Any = None, **kwargs: Any) -> Any:
        """Build environment ``name``; ``config`` is passed first when given.

        Raises:
            ConfigError: for an unknown name or an environment that is not built yet.
        """
        spec = self.spec(name)
        factory = spec.load()
        merged = {**spec.kwargs, **kwargs}
        return factory(config, **merged) if config is not None else factory(**merged)

    def names(self, *, built_only: bool = False) -> list[str]:
        """Registered names, sorted (``built_only``: those ``make`` can build)."""
        return sorted(n for n, s in self._specs.items() if s.built or not built_only)

    def descriptions(self) -> dict[str, str]:
        """Name → one-line description."""
        return {name: self._specs[name].description for name in self.names()}


def _builtin_registry() -> EnvRegistry:
    registry = EnvRegistry()
    # Built-in environments, one entry each: factory, config class, training hooks.
    registry.register(
        "language",
        "langmarl.envs.language.env:LanguageEnv",
        description="Language tasks (qa, math, coding, writing): N agents in sequence",
        config="langmarl.config.envs:LanguageTaskConfig",
    )
    registry.register(
        "poster",
        "langmarl.envs.poster.env:PosterEnv",
        description="Poster: a key word and a tagline that uses it (weight space's task)",
        config="langmarl.config.envs:PosterConfig",
    )
    registry.register(
        "reference",
        "langmarl.envs.reference.env:ReferenceEnv",
        description="Reference (Lewis) game: a speaker's word lets a listener pick the target",
        config="langmarl.config.envs:ReferenceConfig",
    )
    registry.register(
        "tictactoe",
        "langmarl.envs.text.factories:make_tictactoe",
        description="TicTacToe: an LLM (X) against an optimal or random O; text env",
        config="langmarl.config.envs:TicTacToeConfig",
    )
    registry.register(
        "single_step",
        "langmarl.envs.text.factories:make_single_step",
        description="Single-step text env: verified answers (dataset=, verifier=)",
    )
    registry.register(
        "parallel_tasks",
        "langmarl.envs.parallel.env:make_parallel_tasks",
        description="Orchestrator + concurrent sub-agents on multi-part tasks (PARL)",
        config="langmarl.parl.config:ParallelTasksConfig",
        training_hooks="langmarl.parl.callbacks:parl_training_hooks",
    )
    registry.register(
        "overcooked",
        "langmarl.envs.overcooked.env:OvercookedEnv",
        description="Overcooked: two cooks, skill-level text actions, +20 per soup",
        config="langmarl.config.envs:OvercookedConfig",
        training_hooks="langmarl.envs.overcooked.env:overcooked_training_hooks",
    )
    registry.register(
        "pistonball",
        "langmarl.envs.pistonball.env:make_pistonball",
        description="Pistonball (PettingZoo): N pistons push a ball",
        config="langmarl.config.envs:PistonballConfig",
        training_hooks="langmarl.envs.pistonball.credit:pistonball_training_hooks",
    )
    return registry


ENV_REGISTRY = _builtin_registry()


def make_env(name: str, config: Any = None, **kwargs: Any) -> Any:
    """Create an environment by registered name (``"language"``, ``"tictactoe"``, …).

    Raises:
        ConfigError: (a ``ValueError``) if the name is not registered or the environment
            is not built yet.
    """
    return ENV_REGISTRY.make(name, config, **kwargs)


def register_env(name: str, **kwargs: Any) -> Callable[[T], T]:
    """Decorator registering a custom environment class under ``name`` (``config=`` and
    ``training_hooks=`` as in :meth:`EnvRegistry.register`)."""
    return ENV_REGISTRY.decorator(name, **kwargs)


def list_envs(*, built_only: bool = False) -> list[str]:
    """All registered environment names (``built_only``: only those ``make_env`` builds)."""
    return ENV_REGISTRY.names(built_only=built_only)


def env_spec(name: str) -> EnvSpec:
    """The process-wide registry's spec for ``name`` (did-you-mean on unknown names)."""
    return ENV_REGISTRY.spec(name)
