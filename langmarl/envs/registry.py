"""The environment registry: register by name with a lazy ``"module:attr"`` entry point.

Shaped like Gymnasium's registration: ``register(name, entry_point)``, ``make(name, config,
**kwargs)``, "did you mean" on unknown names. The registry is an object so tests can use a
fresh one; ``ENV_REGISTRY`` is the process-wide default behind ``make_env``/``register_env``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean

T = TypeVar("T")
EntryPoint = str | Callable[..., Any]


@dataclass
class EnvSpec:
    """How to build one environment.

    Attributes:
        name: Registered name.
        entry_point: A class or factory, or ``"package.module:attr"`` imported on first use.
        description: One line for ``list_envs``/the CLI.
        kwargs: Default keyword arguments, overridden by those given to ``make``.
    """

    name: str
    entry_point: EntryPoint
    description: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., Any]:
        """The class or factory, importing it if the entry point is a string."""
        if not isinstance(self.entry_point, str):
            return self.entry_point
        module_name, _, attr = self.entry_point.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"Environment {self.name!r} cannot be loaded from {self.entry_point!r}: {exc}"
            ) from exc


class EnvRegistry:
    """Named environment specs."""

    def __init__(self) -> None:
        self._specs: dict[str, EnvSpec] = {}

    def register(
        self,
        name: str,
        entry_point: EntryPoint,
        *,
        description: str = "",
        overwrite: bool = False,
        **kwargs: Any,
    ) -> None:
        """Register ``entry_point`` under ``name``.

        Raises:
            ConfigError: if ``name`` is taken and ``overwrite`` is false.
        """
        if name in self._specs and not overwrite:
            raise ConfigError(
                f"Environment {name!r} is already registered "
                f"({self._specs[name].entry_point!r}); pass overwrite=True to replace it."
            )
        self._specs[name] = EnvSpec(name, entry_point, description, kwargs)

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
        """Build environment ``name``; ``config`` is passed first when given."""
        spec = self.spec(name)
        factory = spec.load()
        merged = {**spec.kwargs, **kwargs}
        return factory(config, **merged) if config is not None else factory(**merged)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._specs)

    def descriptions(self) -> dict[str, str]:
        """Name → one-line description."""
        return {name: self._specs[name].description for name in self.names()}


def _builtin_registry() -> EnvRegistry:
    registry = EnvRegistry()
    # Built-in environments register here with lazy entry points, one line each.
    registry.register(
        "language",
        "langmarl.envs.language.env:LanguageEnv",
        description="Language tasks (qa, math, coding, writing): N agents in sequence",
    )
    registry.register(
        "tictactoe",
        "langmarl.envs.text.factories:make_tictactoe",
        description="TicTacToe: an LLM (X) against an optimal or random O; text env",
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
    )
    return registry


ENV_REGISTRY = _builtin_registry()


def make_env(name: str, config: Any = None, **kwargs: Any) -> Any:
    """Create an environment by registered name (``"language"``, ``"tictactoe"``, …).

    Raises:
        ConfigError: (a ``ValueError``) if the name is not registered.
    """
    return ENV_REGISTRY.make(name, config, **kwargs)


def register_env(name: str, **kwargs: Any) -> Callable[[T], T]:
    """Decorator registering a custom environment class under ``name``."""
    return ENV_REGISTRY.decorator(name, **kwargs)


def list_envs() -> list[str]:
    """All registered environment names."""
    return ENV_REGISTRY.names()
