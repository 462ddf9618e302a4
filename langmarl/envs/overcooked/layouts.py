"""The five classic Overcooked-AI layouts and how to build their MDPs from the package.

The ``overcooked`` package (0.2.1, the numpy-2 fork of overcooked-ai) ships many layouts; its
``counter_circuit`` is a tomato variant with three orders, so the classic onion-only
counter circuit of the Overcooked-AI paper is its ``counter_circuit_o_1order``. Every layout
here has one order, three onions, worth 20 when delivered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.core.validation import did_you_mean

if TYPE_CHECKING:
    from overcooked.mdp import OvercookedGridworld

PACKAGE_LAYOUTS = {
    "cramped_room": "cramped_room",
    "asymmetric_advantages": "asymmetric_advantages",
    "coordination_ring": "coordination_ring",
    "forced_coordination": "forced_coordination",
    "counter_circuit": "counter_circuit_o_1order",
}
"""Our layout name → the ``overcooked`` package's layout file."""

LAYOUTS = tuple(PACKAGE_LAYOUTS)
"""The layouts an :class:`~langmarl.config.envs.OvercookedConfig` accepts."""


def load_mdp(layout: str) -> OvercookedGridworld:
    """The package's (stateless) MDP for ``layout``.

    Raises:
        ConfigError: for a layout that is not one of :data:`LAYOUTS`.
        MissingDependencyError: when the ``overcooked`` package is not installed.
    """
    if layout not in PACKAGE_LAYOUTS:
        raise ConfigError(
            f"Unknown Overcooked layout {layout!r}.{did_you_mean(layout, PACKAGE_LAYOUTS)} "
            f"Choose one of: {', '.join(LAYOUTS)}."
        )
    gridworld = _gridworld_class()
    return gridworld.from_layout_name(PACKAGE_LAYOUTS[layout])


def _gridworld_class() -> Any:
    try:
        from overcooked.mdp import OvercookedGridworld
    except ImportError:
        raise MissingDependencyError("overcooked", "games", "The Overcooked environment") from None
    return OvercookedGridworld
