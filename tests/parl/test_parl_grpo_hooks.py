"""Every weight-space trainer, PARL's ``OrchestratorGRPO`` included, overrides only the hooks
the shared loop documents (``langmarl.magrpo.base.HOOKS``), never the loop itself."""

from __future__ import annotations

import inspect

import pytest

from langmarl.magrpo.actor_critic import IACTrainer, MAACTrainer
from langmarl.magrpo.base import HOOKS, WeightSpaceTrainer
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.parl.grpo import OrchestratorGRPO


def _overridden_methods(cls: type) -> set[str]:
    """Methods and properties ``cls`` defines that its base class also has."""
    return {
        name
        for name, value in vars(cls).items()
        if (callable(value) or isinstance(value, property))
        and not name.startswith("__")
        and hasattr(WeightSpaceTrainer, name)
    }


@pytest.mark.parametrize("trainer", [OrchestratorGRPO, MAGRPOTrainer, IACTrainer, MAACTrainer])
def test_trainers_override_only_the_documented_hooks(trainer: type) -> None:
    assert _overridden_methods(trainer) <= HOOKS


def test_orchestrator_grpo_overrides_the_hooks_it_needs() -> None:
    assert _overridden_methods(OrchestratorGRPO) == {
        "training_step", "after_step", "after_training", "holds_run", "checkpoint_due",
        "restore_checkpoint", "config_record",
    }  # fmt: skip
    assert not OrchestratorGRPO.held_out_evaluation


def test_every_hook_is_a_documented_method_of_the_base() -> None:
    for name in HOOKS:
        method = getattr(WeightSpaceTrainer, name)
        assert inspect.isfunction(method) and method.__doc__, name
