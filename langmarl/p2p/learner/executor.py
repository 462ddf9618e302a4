"""The training executor: one PPO run in its own process, and the fan-out over configs x seeds.

Command line (prints the run directory as its last stdout line)::

    python -m langmarl.p2p.learner.executor --reward-fn reward.py [--config config.json]
        [--runs-dir runs] [--env-id HalfCheetah-v5] [--iteration-id iter_1]

The loop never trains in its own process: :func:`train_runs` launches one executor process per
(config, seed), at most ``max_parallel`` at a time, each killed after ``timeout_s``. Each runs
the LLM-written reward, so it starts through the same confinement as every sandboxed process
(:mod:`langmarl.sandbox.confine`; :func:`training_confinement` says what it may touch): an
allow-listed environment (no keys, tokens or database URLs), its own network namespace (no
network, not even the host's loopback), seccomp, Landlock (read langmarl and the reward,
write only its run directory and a temp dir), the audit hook, rlimits and a cgroup capping
the memory and processes of its whole tree (``TRAINING_LIMITS``). The run directory is
served from a tmpfs of ``max_disk_mb`` and copied back to the real disk while the run goes
on and when it ends (at most ``max_disk_mb`` in all): a run cannot fill the disk.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from langmarl.core.cpu import free_threads
from langmarl.core.errors import LangmarlError, SandboxError
from langmarl.core.scratch import scratch_dir
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import (
    ConfigResult,
    IterationAggregation,
    RewardSpec,
    TrainSummary,
)
from langmarl.p2p.session.iteration_record import IterationRecord
from langmarl.sandbox import SandboxLimits
from langmarl.sandbox.confine import (
    PACKAGE_DIR,
    ConfinedProcess,
    Confinement,
    Target,
    boot_command,
    inherit_environ,
)

logger = logging.getLogger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m langmarl.p2p.learner.executor", description=__doc__
    )
    parser.add_argument("--reward-fn", required=True, help="Reward .py file.")
    parser.add_argument("--config", help="TrainConfig JSON (omitted fields keep defaults).")
    parser.add_argument("--runs-dir", default="runs", help="Parent of the run directory.")
    parser.add_argument("--env-id", help="Override the config's env_id.")
    parser.add_argument("--iteration-id", help="Run directory name (default: iter_<time>).")
    return parser.parse_args(argv)


def execute(args: argparse.Namespace) -> IterationRecord:
    """Train once as ``args`` say; write the run contract; return the run record.

    ``config.simulator`` picks the trainer: ``mujoco`` the SB3 MuJoCo path, ``gym_vector`` and
    ``isaaclab`` the vector path (:mod:`~langmarl.p2p.learner.vector`); both load the reward
    here only.
    """
    from langmarl.p2p.learner.sb3_trainer import run_training
    from langmarl.p2p.learner.vector.trainer import run_vector_training
    from langmarl.p2p.reward.function import load_reward_file

    trainers = {"mujoco": run_training, "gym_vector": run_vector_training,
                "isaaclab": run_vector_training}  # fmt: skip
    config = TrainConfig.from_file(args.config) if args.config else TrainConfig()
    if args.env_id:
        config = config.model_copy(update={"env_id": args.env_id})
    reward = load_reward_file(args.reward_fn)
    iteration_id = args.iteration_id or f"iter_{time.strftime('%Y%m%d_%H%M%S')}"
    record = IterationRecord(Path(args.runs_dir) / iteration_id)
    record.path.mkdir(parents=True, exist_ok=True)
    record.save_config(config)
    record.save_reward_source(Path(args.reward_fn).read_text(encoding="utf-8"))
    if not record.reward_spec_path.is_file():
        spec = RewardSpec(latex=reward.latex, terms=reward.terms, description=reward.description)
        record.save_reward_spec(spec)
    record.set_status("running")
    try:
        trainers[config.simulator](record, record.read_reward_source(), config)
    except BaseException as exc:
        record.set_status("error", f"{type(exc).__name__}: {exc}")
        raise
    record.set_status("completed")
    return record


def main(argv: list[str] | None = None) -> int:
    """Console entry point; exit code 0 on success, 1 on a clear error."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    try:
        record = execute(args)
    except LangmarlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(record.path)
    return 0


@dataclass
class RunSpec:
    """One executor process to launch."""

    run_id: str
    record: IterationRecord
    config: TrainConfig
    config_index: int = 0
    """Which of the iteration's configs this run trains."""


def plan_runs(
    iteration: IterationRecord, configs: list[TrainConfig], seeds: list[int]
) -> list[RunSpec]:
    """Configs x seeds as run specs; a single run writes into the iteration dir itself."""
    if len(configs) * len(seeds) == 1:
        config = configs[0].model_copy(update={"seed": seeds[0]})
        return [RunSpec(config.run_id(), iteration, config)]
    specs = []
    for index, base in enumerate(configs):
        for seed in seeds:
            run_id = f"config_{index}_seed_{seed}"
            specs.append(
                RunSpec(
                    run_id,
                    IterationRecord(iteration.runs_dir / run_id),
                    base.model_copy(update={"seed": seed}),
                    index,
                )
            )
    return specs


TRAINING_LIMITS = SandboxLimits(
    timeout_s=3600.0,
    memory_mb=8192,
    max_processes=512,
    max_disk_mb=1024,
    max_file_bytes=256 * 1024 * 1024,
    allow_subprocess=True,
    extra_env={"MUJOCO_GL": "egl", "LP_NUM_THREADS": "1"},
)
"""Confinement limits of one training process tree. ``allow_subprocess``: imageio starts
ffmpeg for the videos (programs it starts stay confined); ``timeout_s`` is replaced by
:func:`train_runs`'s; Unix sockets are allowed only for ``num_envs > 1`` (SubprocVecEnv's
forkserver). Measured for a tiny InvertedPendulum run: see ``docs/text_envs.md``."""


def training_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """What a training process inherits from ``environ``: only the allow-list
    (:data:`langmarl.sandbox.confine.INHERITABLE_ENV`: locale, rendering, thread counts)."""
    return inherit_environ(environ)


def training_confinement(
    reward_path: Path, run_dir: Path, tmp_dir: Path, limits: SandboxLimits = TRAINING_LIMITS
) -> Confinement:
    """A training process reads langmarl and ``reward_path``, writes ``run_dir`` (persisted)
    and ``tmp_dir`` (its HOME and TMPDIR); its environment is the allow-list plus
    ``limits.extra_env``."""
    env = {**training_environ(os.environ), **limits.extra_env}
    return Confinement(
        workdir=tmp_dir,
        persist=(run_dir,),
        readable=(PACKAGE_DIR, reward_path),
        limits=limits.model_copy(update={"extra_env": env}),
    )


def confined_command(
    command: list[str],
    reward_path: Path,
    run_dir: Path,
    tmp_dir: Path,
    limits: SandboxLimits = TRAINING_LIMITS,
) -> list[str]:
    """``command`` (``[python, "-m"|"-c", ...]``) under :func:`training_confinement`, as one
    command line (without a cgroup: :func:`train_runs` starts processes through
    :class:`~langmarl.sandbox.confine.ConfinedProcess`, which adds it)."""
    confinement = training_confinement(reward_path, run_dir, tmp_dir, limits)
    return boot_command(Target.from_argv(command), confinement)


def _launch(
    spec: RunSpec, reward_path: Path, tmp_dir: Path, limits: SandboxLimits, core: int | None
) -> ConfinedProcess:
    spec.record.path.mkdir(parents=True, exist_ok=True)
    spec.record.save_config(spec.config)
    # Absolute paths: the confined process starts in its own directory, so a relative runs
    # dir (the CLI's default `runs`) would point nowhere.
    run_dir, reward_path = spec.record.path.resolve(), reward_path.resolve()
    command = [
        sys.executable, "-m", "langmarl.p2p.learner.executor", "--reward-fn", str(reward_path),
        "--config", str(spec.record.config_path.resolve()), "--runs-dir", str(run_dir.parent),
        "--iteration-id", run_dir.name,
    ]  # fmt: skip
    limits = limits.model_copy(update={"allow_unix_sockets": spec.config.num_envs > 1})
    confinement = training_confinement(reward_path, run_dir, tmp_dir, limits)
    with open(spec.record.path / "executor.log", "wb") as log:  # the child keeps its own copy
        return ConfinedProcess.start(
            Target.from_argv(command), confinement, stdout=log, stderr=subprocess.STDOUT,
            cores=() if core is None else (core,),
        )  # fmt: skip


def train_runs(
    iteration: IterationRecord,
    reward_path: Path,
    configs: list[TrainConfig],
    seeds: list[int],
    *,
    max_parallel: int | None = None,
    timeout_s: float = 3600.0,
    limits: SandboxLimits = TRAINING_LIMITS,
    stop: threading.Event | None = None,
) -> IterationAggregation:
    """Train every config x seed in its own confined executor process and aggregate the results.

    Args:
        iteration: The iteration directory.
        reward_path: Validated reward file.
        configs: Train configs (each run once per seed).
        seeds: Seeds.
        max_parallel: Processes at once (default: the cores free now, :mod:`langmarl.core.cpu`).
            When several run at once, each is pinned to one of the cores this process may
            use, the one the fewest running processes hold (with ``max_parallel`` at most
            the number of cores: a core each, as local jobs are). A single run is not
            pinned: a ``p2p_train`` job trains one run, on the cores its backend gave it
            (two sessions of their own processes at once pin alike; as jobs they do not
            share cores).
        timeout_s: Wall-clock limit per run; a run over it is killed and reported as an error.
        limits: Confinement limits of each run (its ``timeout_s`` is replaced by the above).
        stop: Set from another thread to stop: the running processes are killed and
            :class:`KeyboardInterrupt` raised (what Ctrl-C does to a call in the main thread).
    """
    pending = plan_runs(iteration, configs, seeds)
    limit = max_parallel or free_threads()  # one core per PPO process
    pool = sorted(os.sched_getaffinity(0))
    pin = limit > 1 and len(pending) > 1  # one process alone goes where the OS puts it
    limits = limits.model_copy(update={"timeout_s": timeout_s})
    running: dict[str, _Running] = {}
    errors: dict[str, str] = {}
    done: list[RunSpec] = []
    try:
        while pending or running:
            while pending and len(running) < limit:
                spec = pending.pop(0)
                held = [run.core for run in running.values() if run.core is not None]
                core = least_used(pool, held) if pin else None
                running[spec.run_id] = _Running.start(spec, reward_path, limits, core)
            time.sleep(0.2)
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt("training stopped")
            _collect(running, timeout_s, done, errors)
    finally:
        for run in running.values():  # left only by an exception
            run.finish(True, timeout_s)
    return aggregate(iteration, done, errors)


def _collect(
    running: dict[str, _Running], timeout_s: float, done: list[RunSpec], errors: dict[str, str]
) -> None:
    """Move the runs that ended (or ran over ``timeout_s``, killed) from ``running`` to
    ``done`` or, with their error, to ``errors``."""
    for run_id, run in list(running.items()):
        over_time = time.monotonic() - run.started >= timeout_s
        if run.process.poll() is None and not over_time:
            continue
        error = running.pop(run_id).finish(over_time, timeout_s)
        if error is None:
            done.append(run.spec)
        else:
            errors[run_id] = error


@dataclass
class _Running:
    """A launched executor process and its temp dir."""

    spec: RunSpec
    process: ConfinedProcess
    started: float
    tmp_dir: Path
    core: int | None

    @classmethod
    def start(
        cls, spec: RunSpec, reward_path: Path, limits: SandboxLimits, core: int | None
    ) -> _Running:
        tmp_dir = scratch_dir(f"langmarl-train-{spec.run_id}-")  # swept if this process dies
        process = _launch(spec, reward_path, tmp_dir, limits, core)
        return cls(spec, process, time.monotonic(), tmp_dir, core)

    def finish(self, over_time: bool, timeout_s: float) -> str | None:
        """Stop and clean up; the run's error, or None if it succeeded."""
        still_running = self.process.poll() is None
        try:
            outcome = self.process.finish()
        except SandboxError as exc:
            return str(exc)
        finally:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
        if outcome.degraded:
            logger.warning("run %s was confined without: %s", self.spec.run_id, outcome.degraded)
        if outcome.memory_exceeded:
            peak = f"{outcome.memory_peak_mb:.0f} MiB" if outcome.memory_peak_mb else "its limit"
            return f"killed: the training process tree reached its memory limit ({peak})"
        if still_running and over_time:
            return f"killed after the {timeout_s:.0f}s training timeout"
        if outcome.returncode != 0:
            return _log_tail(self.spec.record)
        return None


def least_used(pool: list[int], held: list[int]) -> int:
    """The core of ``pool`` that the fewest of ``held`` are on (the lowest on a tie)."""
    return min(pool, key=lambda core: (held.count(core), core))


def _log_tail(record: IterationRecord, lines: int = 8) -> str:
    log = record.path / "executor.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    return "\n".join(text.strip().splitlines()[-lines:]) or "executor failed without output"


def aggregate(
    iteration: IterationRecord, done: list[RunSpec], errors: dict[str, str]
) -> IterationAggregation:
    """Collect run summaries, per config and over all.

    The judged run (``best_run``) is the median-return seed of the config whose seeds
    returned most on average (with one config: the median run); its summary becomes the
    iteration's, and ``mean_return`` is that config's mean over its seeds.
    """
    runs: dict[str, TrainSummary] = {}
    members: dict[int, list[str]] = {}
    for spec in done:
        summary = spec.record.read_summary()
        if summary is None:
            errors[spec.run_id] = "finished without summary.json"
        else:
            runs[spec.run_id] = summary
            members.setdefault(spec.config_index, []).append(spec.run_id)
    result = IterationAggregation(runs=runs, errors=errors)
    if runs:
        for index in sorted(members):
            returns = [runs[rid].final_episodic_return for rid in members[index]]
            result.configs.append(
                ConfigResult(index=index, runs=sorted(members[index]), mean_return=mean(returns))
            )
        best = max(result.configs, key=lambda c: c.mean_return)  # first best wins
        ordered = sorted(best.runs, key=lambda rid: runs[rid].final_episodic_return)
        result.best_config, result.mean_return = best.index, best.mean_return
        result.best_run = ordered[(len(ordered) - 1) // 2]
        if len(done) > 1 or done[0].record.path != iteration.path:
            iteration.save_summary(runs[result.best_run])
    iteration.redact.write_json(iteration.aggregation_path, result.model_dump())
    return result


def mean(values: list[float]) -> float:
    return float(np.mean(values))


if __name__ == "__main__":
    sys.exit(main())
