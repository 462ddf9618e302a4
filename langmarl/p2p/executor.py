"""The training executor: one PPO run in its own process, and the fan-out over configs x seeds.

Command line (prints the run directory as its last stdout line)::

    python -m langmarl.p2p.executor --reward-fn reward.py [--config config.json]
        [--runs-dir runs] [--env-id HalfCheetah-v5] [--iteration-id iter_1]

The loop never trains in its own process: :func:`train_runs` launches one executor process per
(config, seed), at most ``max_parallel`` at a time, each killed after ``timeout_s``. Each runs
the LLM-written reward, so it starts without secrets in its environment and confined with
Landlock (:func:`confined_command`): it may write only its run directory and a fresh temp dir.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from langmarl.core.errors import LangmarlError
from langmarl.core.files import atomic_write_json
from langmarl.p2p.contracts import IterationAggregation, RewardSpec, TrainSummary
from langmarl.p2p.records import IterationRecord
from langmarl.p2p.train_config import TrainConfig

logger = logging.getLogger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m langmarl.p2p.executor", description=__doc__)
    parser.add_argument("--reward-fn", required=True, help="Reward .py file.")
    parser.add_argument("--config", help="TrainConfig JSON (omitted fields keep defaults).")
    parser.add_argument("--runs-dir", default="runs", help="Parent of the run directory.")
    parser.add_argument("--env-id", help="Override the config's env_id.")
    parser.add_argument("--iteration-id", help="Run directory name (default: iter_<time>).")
    return parser.parse_args(argv)


def execute(args: argparse.Namespace) -> IterationRecord:
    """Train once as ``args`` say; write the run contract; return the run record."""
    from langmarl.p2p.reward import load_reward_file
    from langmarl.p2p.sb3_trainer import run_training

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
        run_training(record, record.read_reward_source(), config)
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
                )
            )
    return specs


def _launch(spec: RunSpec, reward_path: Path, tmp_dir: Path) -> subprocess.Popen[bytes]:
    spec.record.path.mkdir(parents=True, exist_ok=True)
    spec.record.save_config(spec.config)
    command = [
        sys.executable, "-m", "langmarl.p2p.executor", "--reward-fn", str(reward_path),
        "--config", str(spec.record.config_path), "--runs-dir", str(spec.record.path.parent),
        "--iteration-id", spec.record.path.name,
    ]  # fmt: skip
    confined = confined_command(command, reward_path, spec.record.path, tmp_dir)
    env = {
        **training_environ(os.environ),
        "MUJOCO_GL": "egl",
        "LP_NUM_THREADS": "1",
        "TMPDIR": str(tmp_dir),
    }
    with open(spec.record.path / "executor.log", "wb") as log:  # the child keeps its own copy
        return subprocess.Popen(
            confined, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def confined_command(
    command: list[str], reward_path: Path, run_dir: Path, tmp_dir: Path
) -> list[str]:
    """``command`` started under Landlock: reads what Python, torch and MuJoCo need, writes
    only ``run_dir`` and ``tmp_dir``; TCP is refused. Without Landlock it runs unconfined
    and says so first in ``executor.log``."""
    from langmarl.sandbox import landlock
    from langmarl.sandbox.runner import PACKAGE_DIR

    paths = [("--read", PACKAGE_DIR), ("--read", reward_path), ("--write", run_dir)]
    paths += [("--write", tmp_dir), ("--write", Path(os.devnull))]
    options = [item for flag, path in paths for item in (flag, str(path.resolve()))]
    return [sys.executable, "-I", "-B", landlock.__file__, "--python", *options, "--", *command]


SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def training_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without secrets: the training process runs LLM-written reward code."""
    return {k: v for k, v in environ.items() if not any(m in k.upper() for m in SECRET_MARKERS)}


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def train_runs(
    iteration: IterationRecord,
    reward_path: Path,
    configs: list[TrainConfig],
    seeds: list[int],
    *,
    max_parallel: int | None = None,
    timeout_s: float = 3600.0,
) -> IterationAggregation:
    """Train every config x seed in its own executor process and aggregate the results.

    Args:
        iteration: The iteration directory.
        reward_path: Validated reward file.
        configs: Train configs (each run once per seed).
        seeds: Seeds.
        max_parallel: Processes at once (default: the CPU count).
        timeout_s: Wall-clock limit per run; a run over it is killed and reported as an error.
    """
    pending = plan_runs(iteration, configs, seeds)
    limit = max_parallel or os.cpu_count() or 1
    running: dict[str, _Running] = {}
    errors: dict[str, str] = {}
    done: list[RunSpec] = []
    try:
        while pending or running:
            while pending and len(running) < limit:
                spec = pending.pop(0)
                running[spec.run_id] = _Running.start(spec, reward_path)
            time.sleep(0.2)
            for run_id, run in list(running.items()):
                if run.process.poll() is None and time.monotonic() - run.started < timeout_s:
                    continue
                if run.process.poll() is None:
                    _kill(run.process)
                    errors[run_id] = f"killed after the {timeout_s:.0f}s training timeout"
                elif run.process.returncode != 0:
                    errors[run_id] = _log_tail(run.spec.record)
                else:
                    done.append(run.spec)
                shutil.rmtree(running.pop(run_id).tmp_dir, ignore_errors=True)
    finally:
        for run in running.values():  # left only by an exception
            _kill(run.process)
            shutil.rmtree(run.tmp_dir, ignore_errors=True)
    return aggregate(iteration, done, errors)


@dataclass
class _Running:
    """A launched executor process and its temp dir."""

    spec: RunSpec
    process: subprocess.Popen[bytes]
    started: float
    tmp_dir: Path

    @classmethod
    def start(cls, spec: RunSpec, reward_path: Path) -> _Running:
        tmp_dir = Path(tempfile.mkdtemp(prefix=f"langmarl-train-{spec.run_id}-"))
        return cls(spec, _launch(spec, reward_path, tmp_dir), time.monotonic(), tmp_dir)


def _log_tail(record: IterationRecord, lines: int = 8) -> str:
    log = record.path / "executor.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    return "\n".join(text.strip().splitlines()[-lines:]) or "executor failed without output"


def aggregate(
    iteration: IterationRecord, done: list[RunSpec], errors: dict[str, str]
) -> IterationAggregation:
    """Collect run summaries; the median run's summary becomes the iteration's summary."""
    runs: dict[str, TrainSummary] = {}
    for spec in done:
        summary = spec.record.read_summary()
        if summary is None:
            errors[spec.run_id] = "finished without summary.json"
        else:
            runs[spec.run_id] = summary
    result = IterationAggregation(runs=runs, errors=errors)
    if runs:
        ordered = sorted(runs, key=lambda rid: runs[rid].final_episodic_return)
        result.best_run = ordered[(len(ordered) - 1) // 2]
        result.mean_return = float(np.mean([s.final_episodic_return for s in runs.values()]))
        if len(done) > 1 or done[0].record.path != iteration.path:
            iteration.save_summary(runs[result.best_run])
    atomic_write_json(iteration.aggregation_path, result.model_dump())
    return result


def run_record(iteration: IterationRecord, aggregation: IterationAggregation) -> IterationRecord:
    """The record holding the judged run's videos and trajectories."""
    if aggregation.best_run and iteration.runs_dir.is_dir():
        candidate = iteration.runs_dir / aggregation.best_run
        if candidate.is_dir():
            return IterationRecord(candidate)
    return iteration


if __name__ == "__main__":
    sys.exit(main())
