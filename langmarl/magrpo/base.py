"""What the weight-space trainers (MAGRPO, IAC, MAAC and PARL's ``OrchestratorGRPO``)
share: agents, data order, the step loop, evaluation, checkpoints and metrics on disk.
Subclasses implement ``training_step`` and override only the hooks named in :data:`HOOKS`
(each documented where :class:`WeightSpaceTrainer` defines it); the loop is, per step::

    reward_func.set_step(step)          # when the reward is step-aware (StepAwareReward)
    metrics = training_step(batch_for(step))     # step: the steps finished before this one
    step += 1; append {"step": step, **metrics}; after_step(metrics)
    evaluate when due (held_out_evaluation); save_checkpoint when checkpoint_due()

Steps are numbered from 1 in every file: the first metrics line, eval row, checkpoint
(``checkpoints/step-000001``) and checkpoint event of a run all say step 1, the state after
one finished step.

The output directory is a run of the run contract (:mod:`langmarl.store.run`): ``run.json``
(kind = the algorithm, with the config; status ``completed``, ``failed`` with the error, or
``stopped`` on Ctrl-C; ``running`` read as ``failed`` once the process is gone),
``metrics.jsonl`` (a line per logged step), ``logs/events.jsonl``, ``eval.jsonl``,
``checkpoints/step-*`` (:mod:`langmarl.magrpo.checkpoint`); the config lives in ``run.json``
only.
Every file passes the run's redactor (:class:`~langmarl.store.run.RunDir`). A run resumed
from the checkpoint of step k drops the metrics and eval lines written after k, as those
steps are trained again.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langmarl.core.cpu import ThreadGovernor, explicit_threads
from langmarl.core.errors import ConfigError
from langmarl.core.secrets import Redactor, environment_secrets
from langmarl.magrpo import checkpoint as ckpt
from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.placement import place_agents
from langmarl.magrpo.policy import Formatter
from langmarl.magrpo.returns import propagate_returns
from langmarl.magrpo.rollout import (
    ExternalTransition,
    JointRewardFunction,
    StepAwareReward,
    TurnLevel,
    grow_trees,
)
from langmarl.magrpo.tree import TreeNode, iter_nodes
from langmarl.store import kinds
from langmarl.store.run import METRICS_FILE, RunDir

log = logging.getLogger(__name__)

Example = Mapping[str, Any]
GreedyRollouts = tuple[list[TreeNode], list[TurnLevel], list[float]]
"""Greedy trees of held-out examples, their levels, and each example's return."""
EVAL_FILE = "eval.jsonl"
RESUME_HINT = kinds.get("magrpo").resume_hint


def check_dataset(
    name: str, data: Sequence[Example] | None, required: bool
) -> list[dict[str, Any]]:
    """Copy a dataset into a list of dicts, checking each item has a ``prompt``."""
    if data is None or len(data) == 0:
        if required:
            raise ConfigError(f"{name} is empty: pass a list of dicts with a 'prompt' key")
        return []
    items = [dict(item) for item in data]
    for index, item in enumerate(items):
        if "prompt" not in item:
            raise ConfigError(
                f"{name}[{index}] has no 'prompt' key (keys: {sorted(item)}): every example "
                "needs the task text under 'prompt'"
            )
    return items


HOOKS = frozenset({
    "training_step", "extra_state", "load_extra_state", "restore_checkpoint",
    "after_step", "after_training", "holds_run", "checkpoint_due", "config_record",
})  # fmt: skip
"""The methods of :class:`WeightSpaceTrainer` a subclass may override (besides
``__init__``); the loop, checkpoint writing and evaluation are the same for every trainer.
A subclass may also set the class attributes ``algorithm``, ``resume_hint`` and
``held_out_evaluation``."""


class WeightSpaceTrainer:
    """Base class: N causal-LM agents trained from rewards on joint completions.

    Args:
        agents: One per agent: a model name/path (``"smollm2"`` = embedded SmolLM2-135M) or a
            loaded Hugging Face causal LM (then pass ``tokenizers``).
        reward_func: ``reward_func(samples: Sequence[JointSample]) -> Sequence[float]`` (a
            subclass may take another shape, as ``OrchestratorGRPO`` a trace scorer). One
            with ``set_step`` (:class:`StepAwareReward`) hears the step before every step.
        args: The trainer config.
        formatters: One ``example -> prompt`` function per agent.
        tokenizers: One per agent when ``agents`` are loaded models.
        train_dataset: Examples (dicts with ``prompt`` and task fields).
        eval_dataset: Held-out examples for :meth:`evaluate`.
        external_transition: Next-turn prompts per branch (needed when ``num_turns > 1``).
        eval_reward_func: Reward used by :meth:`evaluate` (default ``reward_func``).
    """

    algorithm = "base"
    """The run kind in ``run.json`` and the trainer named in checkpoints."""
    resume_hint = RESUME_HINT
    """How to continue a run that failed, shown in ``run.json``."""
    reward_range: tuple[float, float] | None = None
    """The range of one turn's reward, when the task declares it (held-out intervals are
    clipped to the return's range, :func:`~langmarl.magrpo.heldout.return_bounds`)."""
    ray_placement: bool = False
    """Whether the trainer runs with ``placement="ray"`` (agents as Ray actors)."""
    held_out_evaluation: bool = True
    """Whether the trainer has a held-out evaluation (:meth:`evaluate`). ``False``: the loop
    never evaluates, :meth:`evaluate` returns ``None`` and no ``eval.jsonl`` is written."""

    def __init__(
        self,
        agents: Sequence[Any],
        reward_func: Any,
        args: TrainerConfig,
        *,
        formatters: Sequence[Formatter] | None = None,
        tokenizers: Sequence[Any] | None = None,
        train_dataset: Sequence[Example] | None = None,
        eval_dataset: Sequence[Example] | None = None,
        external_transition: ExternalTransition | None = None,
        eval_reward_func: JointRewardFunction | None = None,
    ) -> None:
        if not callable(reward_func):
            raise ConfigError("reward_func must be callable: (samples) -> list of floats")
        if args.num_turns > 1 and external_transition is None:
            raise ConfigError(
                f"num_turns is {args.num_turns} but external_transition is None: pass "
                "external_transition=make_external('plain') or your own callable"
            )
        self.args = args
        self.reward_func = reward_func
        self.eval_reward_func = eval_reward_func or reward_func
        self.transition = external_transition
        self.train_dataset = check_dataset("train_dataset", train_dataset, required=True)
        self.eval_dataset = check_dataset("eval_dataset", eval_dataset, required=False)
        self.governor = ThreadGovernor(explicit_threads(args.num_threads))
        self.governor.adjust()
        self.placement, self.agents = place_agents(agents, args, formatters, tokenizers, type(self))
        self.run_dir = Path(args.output_dir)
        self.run = RunDir(self.run_dir, Redactor(environment_secrets()), self.resume_hint)
        self.step = 0
        self.skipped_nonfinite = 0
        self._greedy: tuple[tuple[int, list[Example]], GreedyRollouts] | None = None
        self.restore_optimizers = True  # off while load_checkpoint loads agents to score them

    def close(self) -> None:
        """Stop the agents' Ray actors (``placement="ray"``; a failed ``train()`` calls it,
        else call it once done with the trainer, or let the process end); safe twice."""
        if self.placement is not None:
            self.placement.close()

    # -- subclasses --------------------------------------------------------------------------
    def training_step(self, examples: list[dict[str, Any]]) -> dict[str, float]:
        """Roll out on ``examples``, update the agents, return metrics."""
        raise NotImplementedError

    def extra_state(self) -> dict[str, Any]:
        """Trainer-specific modules to checkpoint (critics)."""
        return {}

    def load_extra_state(self, extra: dict[str, Any]) -> None:
        """Restore what :meth:`extra_state` saved."""

    def restore_checkpoint(self, path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        """Load the checkpoint in ``path`` into the agents (weights, optimizers); return its
        trainer state (``algorithm``, ``step``, ...) and its :meth:`extra_state`. A subclass
        may read other layouts here, or bring older run files up to date before the resume
        rewinds them."""
        return ckpt.load_checkpoint(path, self.agents, optimizer=self.restore_optimizers)

    def config_record(self) -> dict[str, Any]:
        """The config recorded in ``run.json``, with ``algorithm``."""
        return {"algorithm": self.algorithm, **self.args.model_dump(mode="json")}

    def after_step(self, metrics: dict[str, Any]) -> None:
        """Called with each step's metrics line once it is appended (before checkpoints)."""

    def after_training(self) -> None:
        """Called once the last step is done, while the run is still tracked."""

    def holds_run(self) -> bool:
        """Whether ``output_dir`` already holds a run that a fresh start would overwrite or
        append to: checkpoints, or metrics lines written before the first checkpoint."""
        has_metrics = self.run.file(METRICS_FILE).is_file()
        return has_metrics or ckpt.latest_checkpoint(self.run_dir) is not None

    def checkpoint_due(self) -> bool:
        """Whether to checkpoint after the step just finished: every ``save_steps``, and
        after the last step unless that checkpoint exists."""
        every = self.args.save_steps
        if every and self.step % every == 0:
            return True
        return self.step == self.total_steps and ckpt.latest_step(self.run_dir) != self.step

    def grow(
        self, examples: list[dict[str, Any]], num_generations: int, **options: Any
    ) -> tuple[list[TreeNode], list[TurnLevel]]:
        """Grow and score the rollout trees of ``examples``, returns filled in.

        Args:
            options: More ``grow_trees`` keywords (``joint_mode``, ``termination_threshold``).
        """
        roots, levels = grow_trees(self.agents, examples, self.reward_func, self.args,
                                   num_generations=num_generations, transition=self.transition,
                                   **options)  # fmt: skip
        for root in roots:
            propagate_returns(root, self.args.discount)
        return roots, levels

    # -- the loop ----------------------------------------------------------------------------
    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.train_dataset) / self.args.per_device_train_batch_size)

    @property
    def total_steps(self) -> int:
        total = self.steps_per_epoch * self.args.num_train_epochs
        return min(total, self.args.max_steps) if self.args.max_steps else total

    def batch_for(self, step: int) -> list[dict[str, Any]]:
        """The examples of global step ``step`` (a seeded shuffle per epoch)."""
        epoch, position = divmod(step, self.steps_per_epoch)
        order = list(range(len(self.train_dataset)))
        random.Random(self.args.seed + epoch).shuffle(order)
        size = self.args.per_device_train_batch_size
        return [self.train_dataset[i] for i in order[position * size : (position + 1) * size]]

    def train(self, resume_from: str | Path | None = None) -> list[dict[str, float]]:
        """Train until ``max_steps`` or the end of the epochs; return the metrics of each step.

        Args:
            resume_from: ``"latest"`` or a ``checkpoints/step-*`` directory to continue from
                (``"latest"`` in a run killed before its first checkpoint: from step 0, its
                metrics lines dropped).

        Raises:
            ConfigError: when starting from step 0 in an ``output_dir`` that holds a run
                (:meth:`holds_run`): a new run never appends to an old one.
        """
        no_checkpoint_yet = ckpt.latest_checkpoint(self.run_dir) is None
        if resume_from is not None and not (str(resume_from) == "latest" and no_checkpoint_yet):
            self.load_checkpoint(resume_from)
        elif resume_from is None and self.step == 0 and self.holds_run():
            raise ConfigError(
                f"output_dir {str(self.run_dir)!r} already holds a run: "
                "continue it with resume_from='latest' (CLI: --resume latest), or train into "
                "a new output_dir"
            )
        config = self.config_record()
        self.run.start(self.algorithm, config=config, total_steps=self.total_steps)
        for relpath in (METRICS_FILE, EVAL_FILE):  # steps after the checkpoint: trained again
            self.run.rewind(self.step, relpath)
        try:
            with self.run.tracking(), self.run.reporting(self.args.report_to, config):
                history = self._train_steps()
                self.after_training()
        except BaseException:
            self.close()  # a failed or stopped run leaves no agent actor behind
            raise
        return history

    def _train_steps(self) -> list[dict[str, float]]:
        import torch

        history = []
        while self.step < self.total_steps:
            torch.manual_seed(self.args.seed * 100_003 + self.step)
            self.governor.adjust()  # the machine's free cores, re-measured between steps
            self._tell_step()
            started = time.perf_counter()
            metrics = self.training_step(self.batch_for(self.step))
            self.step += 1
            metrics = {"step": self.step, **metrics, "step_seconds": time.perf_counter() - started}
            metrics["skipped_nonfinite_total"] = self.skipped_nonfinite
            history.append(metrics)
            if self.step % self.args.logging_steps == 0 or self.step == self.total_steps:
                self.run.append(METRICS_FILE, metrics)
            self.after_step(metrics)
            every = self.args.eval_interval
            if self.held_out_evaluation and every and self.step % every == 0:
                self.evaluate()
            if self.checkpoint_due():
                self.save_checkpoint()
        return history

    def _tell_step(self) -> None:
        """Tell each step-aware reward (once, even when it also evaluates) the step."""
        rewards = [self.reward_func]
        if self.eval_reward_func is not self.reward_func:
            rewards.append(self.eval_reward_func)
        for reward in rewards:
            if isinstance(reward, StepAwareReward):
                reward.set_step(self.step)

    def evaluate(self, num_samples: int | None = None) -> dict[str, float] | None:
        """Greedy rollouts (one completion per agent per turn) on the held-out set.

        Returns (and writes to ``eval.jsonl``): the mean reward per turn and the mean return;
        ``None`` for a trainer without held-out evaluation (:attr:`held_out_evaluation`).
        A row already there for this step (an evaluation at ``eval_interval`` before a resume
        at ``max_steps``) is replaced, so each step has one row.
        """
        if not self.held_out_evaluation:
            return None
        data = self.eval_dataset or self.train_dataset
        _, levels, returns = self.greedy_rollouts(data[: num_samples or self.args.eval_num_samples])
        result: dict[str, float] = {"step": self.step, "eval_return": sum(returns) / len(returns)}
        for level in levels:
            rewards = [r for node in level.nodes for r in node.rewards]
            result[f"eval_reward_turn{level.turn}"] = sum(rewards) / len(rewards)
        self.run.rewind(self.step - 1, EVAL_FILE)  # rows after this step were dropped on start
        self.run.append(EVAL_FILE, result)
        return result

    def greedy_rollouts(self, data: Sequence[Example]) -> GreedyRollouts:
        """Greedy rollouts (one completion per agent per turn) of ``data`` with the eval
        reward: the trees, their levels and each example's return. The last call's result is
        reused while the step and the examples are the same (the weights have not moved), so
        an evaluation at ``eval_interval`` on the last step and the held-out report after
        training decode once."""
        examples = list(data)
        key = (self.step, examples)
        if self._greedy is not None and self._greedy[0] == key:
            return self._greedy[1]
        roots, levels = grow_trees(
            self.agents,
            examples,
            self.eval_reward_func,
            self.args,
            num_generations=1,
            transition=self.transition,
            greedy=True,
        )
        returns = [propagate_returns(root, self.args.discount) for root in roots]
        self._greedy = (key, (roots, levels, returns))
        return roots, levels, returns

    # -- checkpoints -------------------------------------------------------------------------
    def save_checkpoint(self, path: str | Path | None = None) -> Path:
        """Save every agent (``save_pretrained``), the optimizers if ``save_optimizer``, and
        trainer state; then keep only the newest ``save_total_limit`` checkpoints."""
        target = Path(path) if path else ckpt.checkpoint_dir(self.run_dir, self.step)
        state = {
            "algorithm": self.algorithm,
            "step": self.step,
            "skipped_nonfinite": self.skipped_nonfinite,
            "num_agents": self.args.num_agents,
        }
        saved = ckpt.save_checkpoint(
            target, self.agents, state, self.extra_state(), optimizer=self.args.save_optimizer
        )
        if self.args.save_total_limit is not None and path is None:
            for dropped in ckpt.keep_newest(self.run_dir, self.args.save_total_limit):
                log.info("save_total_limit=%d: deleted %s", self.args.save_total_limit, dropped)
        if self.run.exists():
            self.run.update(step=self.step, checkpoint=saved.name)
            self.run.event("checkpoint", step=self.step, path=saved.name)
        return saved

    def load_checkpoint(self, resume_from: str | Path, *, for_evaluation: bool = False) -> None:
        """Restore agents, optimizers, critics and the step counter
        (:meth:`restore_checkpoint`, :meth:`load_extra_state`).

        Args:
            resume_from: ``"latest"`` or a ``checkpoints/step-*`` directory.
            for_evaluation: The agents are loaded only to be scored (``langmarl magrpo
                eval``): their optimizers are left alone and the load is logged at DEBUG,
                as no training resumes.
        """
        path = ckpt.resolve_checkpoint(self.run_dir, resume_from)
        self._greedy = None  # other weights, whatever their step
        self.restore_optimizers = not for_evaluation
        state, extra = self.restore_checkpoint(path)
        if state.get("algorithm") != self.algorithm:
            raise ConfigError(
                f"checkpoint {str(path)!r} was written by {state.get('algorithm')!r}, not "
                f"{self.algorithm!r}: resume with the same trainer"
            )
        self.step = int(state["step"])
        self.skipped_nonfinite = int(state.get("skipped_nonfinite", 0))
        self.load_extra_state(extra)
        if for_evaluation:
            log.debug("loaded %s (step %d) for evaluation", path, self.step)
        else:
            log.info("resumed %s from %s at step %d", self.algorithm, path, self.step)


def tree_metrics(roots: Sequence[Any], levels: Sequence[Any]) -> dict[str, float]:
    """Reward per turn, root value, node and leaf counts of a batch of rollout trees."""
    metrics: dict[str, float] = {}
    for level in levels:
        rewards = [r for node in level.nodes for r in node.rewards]
        metrics[f"reward_turn{level.turn}"] = sum(rewards) / len(rewards)
    metrics["reward_mean"] = metrics["reward_turn0"]
    root_values = [sum(root.returns) / len(root.returns) for root in roots]
    metrics["return_mean"] = sum(root_values) / len(root_values)
    nodes = [node for root in roots for node in iter_nodes(root)]
    metrics["nodes"] = len(nodes)
    metrics["leaves"] = sum(child is None for node in nodes for child in node.children)
    return metrics
