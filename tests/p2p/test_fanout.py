"""Several configs x seeds per iteration, trained as jobs on a job backend and gathered back
into the session (``LoopConfig.configs``, ``backend``)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.jobs.records import JobRecord, JobStore
from langmarl.jobs.spec import JobSpec
from langmarl.p2p import IterationRecord, SessionRecord, TrainConfig
from langmarl.p2p.learner.executor import RunSpec, aggregate
from langmarl.p2p.learner.fanout import train_as_jobs
from langmarl.p2p.learner.train_job import validate_train_job
from langmarl.p2p.session.config import LoopConfig, validate_loop_config
from langmarl.p2p.session.contracts import TrainSummary
from langmarl.p2p.session.loop import run_loop
from langmarl.testing import ScriptedLLM

from .conftest import PENDULUM_REWARD
from .test_loop import replies, validator

TINY = {
    "num_steps": 128, "batch_size": 64, "n_epochs": 1, "num_evals": 1,
    "eval_episodes": 2, "max_episode_steps": 50, "record_video": False,
}  # fmt: skip


def _summary(seed: int, final: float) -> TrainSummary:
    return TrainSummary(
        env_id="InvertedPendulum-v5", seed=seed, total_timesteps=1, steps_done=1,
        training_time_s=1.0, steps_per_second=1.0, final_episodic_return=final,
        final_env_return=final,
    )  # fmt: skip


def test_configs_apply_on_top_of_the_iterations_config_and_bad_ones_name_the_field():
    config = LoopConfig(env_id="InvertedPendulum-v5", configs=[{"learning_rate": 1e-3}, {}])
    base = config.train_config().model_copy(update={"gamma": 0.95})
    first, second = config.train_configs(base)
    assert (first.learning_rate, first.gamma) == (1e-3, 0.95)
    assert second == base
    assert LoopConfig().train_configs(base) == [base]
    with pytest.raises(ConfigError, match=r"configs\[1\][\s\S]*lr: unknown key"):
        validate_loop_config({"configs": [{}, {"lr": 0.1}]})
    with pytest.raises(ConfigError, match="move it out of train"):
        validate_loop_config({"train": {"total_timesteps": 5}})
    with pytest.raises(ConfigError, match="set backend=ray"):
        validate_loop_config({"ray_address": "auto"})
    with pytest.raises(ConfigError, match="reward_source"):
        validate_train_job({"train": {}})


def test_the_judged_run_is_the_median_seed_of_the_config_with_the_best_mean(tmp_path: Path):
    iteration = IterationRecord(tmp_path / "iter_1")
    finals = {(0, 1): 10.0, (0, 2): 30.0, (1, 1): 25.0, (1, 2): 21.0, (1, 3): 40.0}
    specs = []
    for (index, seed), final in finals.items():
        record = IterationRecord(iteration.runs_dir / f"config_{index}_seed_{seed}")
        record.path.mkdir(parents=True)
        record.save_summary(_summary(seed, final))
        specs.append(RunSpec(record.iteration_id, record, TrainConfig(seed=seed), index))
    result = aggregate(iteration, specs, {"config_0_seed_3": "boom"})
    assert [(c.index, c.mean_return) for c in result.configs] == [(0, 20.0), (1, 86 / 3)]
    assert result.best_config == 1 and result.mean_return == pytest.approx(86 / 3)
    assert result.best_run == "config_1_seed_1"  # returns 25, 21, 40: the median seed
    assert iteration.read_summary() == result.runs["config_1_seed_1"]
    assert result.errors == {"config_0_seed_3": "boom"}


class RecordingBackend:
    """A backend that records submissions; each job 'trains' by writing a summary."""

    def __init__(self, runs_dir: Path, interrupt_at: int | None = None) -> None:
        self.store, self.runs_dir = JobStore(runs_dir), runs_dir
        self.specs: list[JobSpec] = []
        self.cancelled: list[str] = []
        self.interrupt_at = interrupt_at

    def submit(self, spec: JobSpec) -> str:
        if self.interrupt_at == len(self.specs):
            raise KeyboardInterrupt
        self.specs.append(spec)
        job_id = f"{spec.name}-job"
        record = IterationRecord(self.runs_dir / job_id)
        record.path.mkdir(parents=True)
        train = spec.config["train"]  # type: ignore[index]
        record.save_summary(_summary(train["seed"], train["learning_rate"] * 1e4))
        return job_id

    def wait(self, job_id: str, timeout_s: float | None = None) -> JobRecord:
        state = "failed" if job_id.startswith("config_1_seed_2") else "completed"
        return JobRecord(job_id=job_id, spec=self.specs[0], backend="local",
                         run_dir=str(self.runs_dir / job_id), log_path="", state=state,
                         error="exit code 1" if state == "failed" else None)  # fmt: skip

    def cancel(self, job_id: str) -> JobRecord:
        self.cancelled.append(job_id)
        return self.wait(job_id)


def test_each_config_and_seed_is_a_job_with_the_reward_as_text(tmp_path: Path):
    iteration = IterationRecord(tmp_path / "iter_1")
    reward = tmp_path / "reward_fn.py"
    reward.write_text(PENDULUM_REWARD)
    backend = RecordingBackend(iteration.runs_dir)
    configs = [TrainConfig(learning_rate=1e-3), TrainConfig(learning_rate=2e-3)]
    result = train_as_jobs(iteration, reward, configs, [1, 2], backend, cpus=2, timeout_s=9.0)
    assert [s.name for s in backend.specs] == [
        "config_0_seed_1", "config_0_seed_2", "config_1_seed_1", "config_1_seed_2",
    ]  # fmt: skip
    first = backend.specs[0]
    assert first.kind == "p2p_train" and first.resources.cpus == 2 and first.seed == 1
    assert first.config["reward_source"] == PENDULUM_REWARD  # type: ignore[index]
    assert first.config["timeout_s"] == 9.0  # type: ignore[index]
    assert result.errors == {"config_1_seed_2-job": "exit code 1"}
    assert result.best_config == 1 and result.best_run == "config_1_seed_1-job"


def test_an_interrupted_fan_out_cancels_the_jobs_it_submitted(tmp_path: Path):
    iteration = IterationRecord(tmp_path / "iter_1")
    reward = tmp_path / "reward_fn.py"
    reward.write_text(PENDULUM_REWARD)
    backend = RecordingBackend(iteration.runs_dir, interrupt_at=2)
    with pytest.raises(KeyboardInterrupt):
        train_as_jobs(iteration, reward, [TrainConfig()], [1, 2, 3], backend)
    assert backend.cancelled == ["config_0_seed_1-job", "config_0_seed_2-job"]


@pytest.mark.slow
def test_a_session_trains_two_configs_as_pinned_local_jobs_of_its_seed(tmp_path: Path):
    """Two configs at seed 2: two jobs, one core each, at once. A config x seed grid of
    jobs (names, the median seed's run gathered back) is
    test_each_config_and_seed_is_a_job_with_the_reward_as_text's, on a recording backend."""
    peak = {"running": 0}
    stop = threading.Event()

    def watch() -> None:  # how many training jobs run at once, and on which cores
        while not stop.wait(0.1):
            jobs_dirs = list(tmp_path.glob("*/iter_1/runs"))
            if jobs_dirs:
                running = [r for r in JobStore(jobs_dirs[0]).all() if r.state == "running"]
                cores = [c for r in running for c in r.cores]
                assert len(cores) == len(set(cores)), f"two jobs share a core: {cores}"
                peak["running"] = max(peak["running"], len(running))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        config = LoopConfig(
            env_id="InvertedPendulum-v5", code_judge=False, max_iterations=1,
            backend="local", seed=[2], train=TINY, total_timesteps=128,
            configs=[{"learning_rate": 1e-3}, {"learning_rate": 3e-4}],
        )  # fmt: skip
        llm = ScriptedLLM(replies("SCORE: 0.9"))
        result = run_loop("balance", config, llm=llm, runs_dir=tmp_path, validator=validator)
        session = SessionRecord(tmp_path / result.session_id)
    finally:
        stop.set()
        watcher.join()
    assert result.status == "passed", result.error
    iteration = session.iteration(1)
    jobs = JobStore(iteration.runs_dir).all()
    assert len(jobs) == 2 and {j.state for j in jobs} == {"completed"}
    assert sorted(j.spec.name for j in jobs) == ["config_0_seed_2", "config_1_seed_2"]
    assert {j.spec.seed for j in jobs} == {2}
    assert peak["running"] == min(2, len(os.sched_getaffinity(0)))  # one core each
    aggregation = iteration.aggregation_path.read_text()
    assert '"best_config"' in aggregation
    runs = iteration.run_records()
    assert len(runs) == 2 and all(r.read_summary() is not None for r in runs)
    assert {r.read_config()["learning_rate"] for r in runs} == {1e-3, 3e-4}
    assert {r.read_config()["seed"] for r in runs} == {2}
    assert iteration.read_summary() is not None  # the judged run's summary, gathered back


def test_session_processes_take_the_least_used_core():
    from langmarl.p2p.learner.executor import least_used

    assert least_used([0, 1], []) == 0
    assert least_used([0, 1], [0]) == 1
    assert least_used([2, 5, 7], [2, 5]) == 7
    assert least_used([0, 1], [0, 1, 0]) == 1


def test_a_stop_from_another_thread_cancels_the_jobs_and_interrupts(tmp_path: Path):
    """What a search's interrupt does to a call training a candidate in a worker thread."""
    import threading

    iteration = IterationRecord(tmp_path / "iter_1")
    reward = tmp_path / "reward_fn.py"
    reward.write_text(PENDULUM_REWARD)

    class Running(RecordingBackend):
        def wait(self, job_id: str, timeout_s: float | None = None) -> JobRecord:
            if timeout_s is not None:  # a job that trains on until cancelled
                raise TimeoutError(job_id)
            return super().wait(job_id)

    backend = Running(iteration.runs_dir)
    stop = threading.Event()
    stop.set()
    with pytest.raises(KeyboardInterrupt):
        train_as_jobs(iteration, reward, [TrainConfig()], [1, 2], backend, stop=stop)
    assert backend.cancelled == ["config_0_seed_1-job", "config_0_seed_2-job"]


def test_a_training_job_validates_its_reward_before_it_trains(tmp_path: Path) -> None:
    """The static check refuses a reward at the job's config (issue 39, finding 5); one that
    passes it but fails on the env (a key the env lacks) fails the job in the sandbox's
    validation, before any training process starts."""
    from langmarl.p2p.learner.train_job import TrainingFailed, TrainJobConfig, run_train_job
    from langmarl.store.run import RunDir

    with pytest.raises(ConfigError, match="reward_source"):
        validate_train_job({"reward_source": "import os\n" + PENDULUM_REWARD})
    wrong = PENDULUM_REWARD.replace("next_obs[1]", 'info["no_such_key"]')
    config = TrainJobConfig(reward_source=wrong, runs_dir=str(tmp_path), run_id="job",
                            train={"env_id": "InvertedPendulum-v5"})  # fmt: skip
    with pytest.raises(TrainingFailed, match="did not validate"):
        run_train_job(config)
    record = RunDir(tmp_path / "job").record()
    assert record.status == "failed" and not (tmp_path / "job" / "summary.json").exists()


def test_a_session_config_names_its_models_and_never_an_inline_key():
    """Issue 42, item 7: a session started as a job or over the API chooses its LLM in its
    config; a key would be saved with the session, so it is refused."""
    validate_loop_config({"llm": "local", "vlm": None})
    assert LoopConfig(llm={"preset": "local", "max_tokens": 64}).llm == {
        "preset": "local",
        "max_tokens": 64,
    }  # kept as given: saved with the session, resolved when it runs
    with pytest.raises(ConfigError, match="api_key_env_var"):
        validate_loop_config({"llm": {"preset": "openai", "api_key": "sk-x"}})
    with pytest.raises(ConfigError, match="llm"):
        validate_loop_config({"llm": "no-such-preset"})
