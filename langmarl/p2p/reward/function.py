"""The reward contract: ``RewardFunction`` and the legacy ``reward_fn`` form, plus loading.

A reward maps one transition ``(obs, action, next_obs, info)`` to ``(total, terms)``: a float
and a dict of named float terms (the terms are logged separately so a judge and the guardrails
can see which part of the reward the policy is actually earning).

Two source forms load into a :class:`RewardFunction`:

* a class deriving from ``RewardFunction`` (recommended; it may keep state across steps and
  clear it in :meth:`RewardFunction.reset`, which the wrapper calls at every episode start);
* a legacy function ``reward_fn(obs, action, next_obs, info)`` whose docstring declares
  ``LaTeX: ...`` and a ``Terms:`` block of ``name: description`` lines.

Loading executes the source, so only load code that passed
:mod:`~langmarl.p2p.reward.validation`, and only in a training process (never in the loop's
process).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from langmarl.core.errors import ConfigError

RewardOutput = tuple[float, dict[str, float]]
LEGACY_NAME = "reward_fn"


class RewardFunction(ABC):
    """A reward over one transition, split into named terms.

    Subclasses implement :meth:`compute`, :attr:`latex` and :attr:`terms`; they may override
    :attr:`description` and :meth:`reset` (called at the start of every episode, so stateful
    rewards such as "progress since the last step" start fresh).
    """

    @abstractmethod
    def compute(self, obs: Any, action: Any, next_obs: Any, info: dict[str, Any]) -> RewardOutput:
        """Return ``(total, {term_name: value})`` for the transition ``obs -action-> next_obs``."""

    @property
    @abstractmethod
    def latex(self) -> str:
        """The reward formula in LaTeX."""

    @property
    @abstractmethod
    def terms(self) -> dict[str, str]:
        """Term name -> one-line description, for every term ``compute`` returns."""

    @property
    def description(self) -> str:
        """A free-text description of what the reward asks for ("" if none)."""
        return ""

    def reset(self) -> None:  # noqa: B027 - optional hook, deliberately empty
        """Clear per-episode state; called at every episode start. No-op by default."""

    def __call__(self, obs: Any, action: Any, next_obs: Any, info: dict[str, Any]) -> RewardOutput:
        return self.compute(obs, action, next_obs, info)


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str], str]:
    """Split a legacy docstring into ``(latex, terms, description)``.

    The format is a free description, a ``LaTeX: <formula>`` line and a ``Terms:`` line
    followed by indented ``name: description`` lines.
    """
    latex, terms, description_lines = "", {}, []
    in_terms = False
    for raw in (doc or "").splitlines():
        line = raw.strip()
        if line.lower().startswith("latex:"):
            latex, in_terms = line.split(":", 1)[1].strip(), False
        elif line.lower().startswith("terms:"):
            in_terms = True
        elif in_terms and re.match(r"^[A-Za-z_][\w.\-]*\s*:", line):
            name, text = line.split(":", 1)
            terms[name.strip()] = text.strip()
        elif line and not in_terms:
            description_lines.append(line)
    return latex, terms, " ".join(description_lines)


class LegacyReward(RewardFunction):
    """Wraps a legacy ``reward_fn(obs, action, next_obs, info)`` function."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self._latex, self._terms, self._description = parse_docstring(fn.__doc__)

    def compute(self, obs: Any, action: Any, next_obs: Any, info: dict[str, Any]) -> RewardOutput:
        result = self._fn(obs, action, next_obs, info)
        if isinstance(result, tuple) and len(result) == 2:
            return result[0], result[1]
        return result, {}

    @property
    def latex(self) -> str:
        return self._latex

    @property
    def terms(self) -> dict[str, str]:
        return dict(self._terms)

    @property
    def description(self) -> str:
        return self._description


def reward_namespace() -> dict[str, Any]:
    """The globals reward source runs with: numpy (``np``/``numpy``), ``math``, the ABC."""
    return {
        "__name__": "langmarl_reward",
        "np": np,
        "numpy": np,
        "math": math,
        "RewardFunction": RewardFunction,
    }


def load_reward_source(source: str, *, filename: str = "<reward>") -> RewardFunction:
    """Execute reward ``source`` and return its reward.

    Picks the last class deriving from :class:`RewardFunction` defined in the source
    (instantiated without arguments), else the ``reward_fn`` function.

    Raises:
        ConfigError: The source defines neither form, or does not even compile.
    """
    namespace = reward_namespace()
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        raise ConfigError(
            f"reward source {filename} has a syntax error on line {exc.lineno}: {exc.msg}"
        ) from exc
    exec(code, namespace)  # only validated code reaches this point (see module docstring)
    classes = [
        value
        for value in namespace.values()
        if isinstance(value, type)
        and issubclass(value, RewardFunction)
        and value not in (RewardFunction, LegacyReward)
    ]
    if classes:
        return classes[-1]()
    fn = namespace.get(LEGACY_NAME)
    if callable(fn):
        return LegacyReward(fn)
    raise ConfigError(
        f"reward source {filename} defines no reward: define a class deriving from "
        f"RewardFunction or a function `{LEGACY_NAME}(obs, action, next_obs, info)`"
    )


def load_reward_file(path: str | Path) -> RewardFunction:
    """Load a reward from a ``.py`` file (see :func:`load_reward_source`)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"reward file {str(path)!r} does not exist: pass a path to a .py file")
    return load_reward_source(path.read_text(encoding="utf-8"), filename=str(path))


def check_output(output: Any, declared: dict[str, str] | None = None) -> RewardOutput:
    """Check one reward output and return it as ``(float, {str: float})``.

    Raises:
        ValueError: The output is not a ``(number, dict)`` pair, a value is not finite, or a
            returned term was not declared. The message names the offending value.
    """
    if not (isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict)):
        raise ValueError(
            f"reward must return (float, dict[str, float]), got {type(output).__name__}: "
            f"{str(output)[:80]}"
        )
    total = _finite(output[0], "total reward")
    terms = {str(name): _finite(value, f"term {name!r}") for name, value in output[1].items()}
    if declared is not None:
        undeclared = sorted(set(terms) - set(declared))
        if undeclared:
            raise ValueError(
                f"reward returned undeclared terms {undeclared}; declare them in `terms` "
                f"(declared: {sorted(declared)})"
            )
    return total, terms


def _finite(value: Any, what: str) -> float:
    try:
        number = float(np.asarray(value).item()) if np.ndim(value) == 0 else float("nan")
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {type(value).__name__}") from None
    if np.ndim(value) != 0:
        raise ValueError(f"{what} must be a scalar, got shape {np.shape(value)}")
    if not math.isfinite(number):
        raise ValueError(f"{what} is not finite ({number}); guard divisions and exponentials")
    return number
