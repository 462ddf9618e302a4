"""`PARLCallback`: anneals λ with the iteration and records reward/critical-step curves.

:func:`parl_training_hooks` is the ``training_hooks`` entry of ``parallel_tasks`` in the
environment registry: every run assembled on that env gets the callback.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row
from langmarl.trainer.callbacks import Callback

if TYPE_CHECKING:
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.trainer.monte_carlo import MonteCarloTrainer

log = logging.getLogger(__name__)


class PARLCallback(Callback):
    """For ``MonteCarloTrainer`` on ``parallel_tasks``.

    - ``on_iteration_start``: tells the env's step-aware reward the iteration
      (``env.set_step``), so episodes of iteration ``i`` are rewarded with λ1(i), λ2(i).
    - ``on_iteration_end``: rebuilds :data:`~langmarl.parl.curves.CURVES_FILE` in the run
      directory from the stored trajectories of every finished iteration (so a resumed run
      counts each episode once).

    Args:
        env: The environment being trained on.
    """

    def __init__(self, env: ParallelTasksEnv) -> None:
        self.env = env

    def on_iteration_start(self, iteration: int, trainer: MonteCarloTrainer) -> None:
        self.env.set_step(iteration)

    def on_iteration_end(
        self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
    ) -> None:
        start = trainer.config.start_iteration
        rows = [
            episode_row(int(t.metadata.get("training_step", i)), t.metadata)
            for i in range(start, iteration + 1)
            for t in trainer.trajectories.load(i)
            if "parl" in t.metadata
        ]
        document = curves_document(rows)
        trainer.store.write_json(trainer.run_id, CURVES_FILE, document)
        if document["curve"]:
            last = document["curve"][-1]
            log.info(
                "PARL iteration %d: reward %.3f, critical steps %.2f, serial steps %.2f",
                iteration + 1, last["total_reward"], last["critical_steps"], last["serial_steps"],
            )  # fmt: skip


def parl_training_hooks(env: ParallelTasksEnv, config: Any = None) -> list[Callback]:
    """The callbacks a language-space run on ``parallel_tasks`` needs: one
    :class:`PARLCallback` for ``env`` (registered as the env's ``training_hooks``)."""
    return [PARLCallback(env)]
