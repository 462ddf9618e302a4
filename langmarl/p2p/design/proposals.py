"""A structured reward proposal and its compilation to reward code (issue 38).

A proposal is a list of components over the env's term catalog
(:mod:`~langmarl.p2p.design.catalog`), each a quantity, a form and a weight::

    linear    weight * q                     (weight > 0 asks for more of q, < 0 for less)
    abs       -weight * |q - target|         (weight >= 0: keep q near target)
    square    -weight * (q - target) ** 2    (weight >= 0: keep q near target, smoothly)
    constant  weight                         (quantity "alive": a bonus per step survived)

:func:`compile_proposal` turns it into a legacy ``reward_fn`` deterministically, with its
LaTeX and its ``Terms:`` block, one term per component; the code is then validated and
trained, confined, like any other reward (what the model chose is data until then).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langmarl.core.errors import ConfigError

Form = Literal["linear", "abs", "square", "constant"]
PROPOSAL_FILE = "proposal.json"
"""An iteration's proposal, beside the reward code compiled from it."""


@dataclass(frozen=True)
class Quantity:
    """A number a reward can read at each step (an entry of an env's term catalog).

    Attributes:
        name: Its name in proposals and in the reward's terms.
        expression: Python reading it inside ``reward_fn(obs, action, next_obs, info)``.
        description: What it is, with its unit.
    """

    name: str
    expression: str
    description: str


class Component(BaseModel):
    """One term of a proposal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quantity: str
    """A name of the env's catalog."""
    form: Form
    weight: float
    target: float = 0.0
    """Where ``abs`` and ``square`` want the quantity (ignored by the other forms)."""

    def __init__(
        self, quantity: str, form: Form, weight: float, target: float = 0.0, **extra: object
    ) -> None:
        super().__init__(quantity=quantity, form=form, weight=weight, target=target, **extra)

    @field_validator("weight", "target")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return value

    @property
    def term(self) -> str:
        """Its name among the reward's terms."""
        suffix = {"linear": "", "abs": "_off", "square": "_off2", "constant": ""}[self.form]
        return f"{self.quantity}{suffix}"


class Proposal(BaseModel):
    """A reward as components over the catalog of ``env_id``."""

    model_config = ConfigDict(extra="forbid")

    env_id: str
    objective: str = ""
    """The catalog objective it started from (empty: composed freely)."""
    components: list[Component] = Field(min_length=1)

    def describe(self) -> str:
        """``"backward: -1 x_velocity, -0.1 control"``: one line for logs and prompts."""
        parts = []
        for c in self.components:
            if c.form in ("linear", "constant"):
                parts.append(f"{c.weight:g} {c.quantity}")
            else:
                parts.append(f"-{c.weight:g} {c.form}({c.quantity} - {c.target:g})")
        return f"{self.objective or 'proposal'}: " + ", ".join(parts)


def _problems(proposal: Proposal, known: Mapping[str, Quantity]) -> list[str]:
    problems = []
    seen: set[str] = set()
    for index, c in enumerate(proposal.components):
        where = f"components[{index}]"
        if c.quantity not in known:
            problems.append(f"{where}.quantity {c.quantity!r} is not in {proposal.env_id}'s "
                            f"catalog: choose one of {sorted(known)}")  # fmt: skip
        if c.form in ("abs", "square") and c.weight < 0:
            problems.append(f"{where}: a {c.form} term is a penalty: give a weight >= 0")
        if c.form == "constant" and c.quantity != "alive":
            problems.append(f"{where}: a constant term is the per-step bonus: quantity 'alive'")
        if c.term in seen:
            problems.append(f"{where}: a second {c.form} term on {c.quantity!r}")
        seen.add(c.term)
    return problems


def _expression(component: Component, read: str) -> str:
    w, t = repr(float(component.weight)), repr(float(component.target))
    return {
        "linear": f"{w} * {read}",
        "abs": f"-{w} * abs({read} - {t})",
        "square": f"-{w} * ({read} - {t}) ** 2",
        "constant": w,
    }[component.form]


def _latex(component: Component) -> str:
    name = component.quantity.replace("_", r"\_")
    w, t = f"{component.weight:g}", f"{component.target:g}"
    return {
        "linear": f"{w} \\cdot {name}",
        "abs": f"-{w} |{name} - {t}|",
        "square": f"-{w} ({name} - {t})^2",
        "constant": w,
    }[component.form]


def compile_proposal(proposal: Proposal, known: Mapping[str, Quantity]) -> str:
    """The ``reward_fn`` source of ``proposal`` over the quantities ``known`` (its env's
    catalog: :func:`langmarl.p2p.design.catalog.compile_for_env`).

    Raises:
        ConfigError: naming each component that the catalog cannot compile.
    """
    problems = _problems(proposal, known)
    if problems:
        raise ConfigError(f"the {proposal.env_id} proposal cannot compile: " + "; ".join(problems))
    latex = " + ".join(_latex(c) for c in proposal.components).replace("+ -", "- ")
    doc_terms = "\n".join(
        f"        {c.term}: {c.form} term on {known[c.quantity].description}, weight {c.weight:g}"
        for c in proposal.components
    )
    values = "\n".join(
        f'        "{c.term}": {_expression(c, known[c.quantity].expression)},'
        for c in proposal.components
    )
    return (
        "def reward_fn(obs, action, next_obs, info):\n"
        f'    r"""Compiled from a structured proposal for {proposal.env_id} '
        f"({proposal.objective or 'composed'}).\n"
        f"    LaTeX: r = {latex}\n"
        f"    Terms:\n{doc_terms}\n"
        '    """\n'
        f"    terms = {{\n{values}\n    }}\n"
        "    return float(sum(terms.values())), terms\n"
    )
