"""Job specs: each kind validated by its command's config class, placed in its run dir (every
kind alike: tests/config/test_runs_root.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.jobs import JobSpec, validate_spec
from langmarl.jobs.spec import command, new_job_id, parse_spec, resolve_config

CONFIGS = Path(__file__).parents[2] / "configs"
RUN = Path("/runs/job-1")


def test_p2p_needs_an_intent_and_is_placed_like_every_kind() -> None:
    with pytest.raises(ConfigError, match="needs intent"):
        parse_spec({"kind": "p2p"})
    with pytest.raises(ConfigError, match="only used by p2p"):
        parse_spec({"kind": "language", "intent": "x"})
    with pytest.raises(ConfigError, match="Did you mean 'resources'"):
        parse_spec({"kind": "language", "resource": {"cpus": 2}})
    spec = JobSpec(kind="p2p", intent="run backwards", seed=2, overrides={"max_iterations": 1})
    resolved = resolve_config(spec, RUN)
    assert resolved == {"max_iterations": 1, "runs_dir": "/runs", "run_id": "job-1", "seed": 2}
    argv = command(spec, Path("c.json"), "python")
    assert argv == ["python", "-m", "langmarl.cli", "p2p", "run", "run backwards",
                    "--config", "c.json"]  # fmt: skip


def test_invalid_configs_name_the_field_and_the_fix() -> None:
    tiny = str(CONFIGS / "magrpo" / "writing_tiny.json")
    with pytest.raises(ConfigError, match="Did you mean 'max_steps'"):
        validate_spec(JobSpec(kind="magrpo", config=tiny, overrides={"trainer.max_stepz": 2}))
    with pytest.raises(ConfigError, match="use kind 'language'"):
        validate_spec(JobSpec(kind="parl_language", config=str(CONFIGS / "quickstart.json")))
    with pytest.raises(ConfigError, match="Did you mean 'grpo'"):
        validate_spec(JobSpec(kind="parl_grpo", config={"grp": {}}))
    with pytest.raises(ConfigError, match="max_iterations"):
        validate_spec(JobSpec(kind="p2p", intent="x", overrides={"max_iterations": 0}))
    with pytest.raises(ConfigError, match="does not exist"):
        validate_spec(JobSpec(kind="language", config="missing.json"))


def test_job_ids_start_with_the_name_and_are_unique() -> None:
    spec = JobSpec(kind="language", name="my sweep/seed 1")
    ids = {new_job_id(spec) for _ in range(20)}
    assert len(ids) == 20 and all(i.startswith("my-sweep-seed-1-") for i in ids)
    assert command(spec, Path("c.json"), "py")[3:] == ["train", "c.json"]
