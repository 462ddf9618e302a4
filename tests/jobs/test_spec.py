"""Job specs: each kind validated by its command's config class, placed in its run dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.jobs import JobSpec, validate_spec
from langmarl.jobs.spec import command, new_job_id, parse_spec, resolve_config

CONFIGS = Path(__file__).parents[2] / "configs"
RUN = Path("/runs/job-1")


@pytest.mark.parametrize(
    ("kind", "config", "field", "seed_field"),
    [
        ("language", "quickstart.json", ("experiment_dir",), ("seed",)),
        ("parl_language", "parl/language_tiny.json", ("experiment_dir",), ("seed",)),
        ("magrpo", "magrpo/writing_tiny.json", ("trainer", "output_dir"), ("trainer", "seed")),
        ("parl_grpo", "parl/grpo_tiny.json", ("grpo", "output_dir"), ("grpo", "seed")),
    ],
)
def test_each_kind_is_placed_in_its_run_dir_with_its_seed(kind, config, field, seed_field):
    spec = JobSpec(kind=kind, config=str(CONFIGS / config), seed=5)
    resolved, extra = resolve_config(spec, RUN)
    place, seed = resolved, resolved
    for key in field:
        place = place[key]
    for key in seed_field:
        seed = seed[key]
    assert seed == 5
    if field == ("experiment_dir",):
        assert (place, extra) == ("/runs", ["--run-id", "job-1"])
        assert resolved["checkpoint_dir"] == "/runs/job-1/exported"
    else:
        assert (place, extra) == (str(RUN), [])


def test_p2p_needs_an_intent_and_gets_the_runs_dir() -> None:
    with pytest.raises(ConfigError, match="needs intent"):
        parse_spec({"kind": "p2p"})
    with pytest.raises(ConfigError, match="only used by p2p"):
        parse_spec({"kind": "language", "intent": "x"})
    with pytest.raises(ConfigError, match="Did you mean 'resources'"):
        parse_spec({"kind": "language", "resource": {"cpus": 2}})
    spec = JobSpec(kind="p2p", intent="run backwards", seed=2, overrides={"max_iterations": 1})
    resolved, extra = resolve_config(spec, RUN)
    assert resolved == {"max_iterations": 1, "seeds": [2]} and extra == ["--runs-dir", str(RUN)]
    argv = command(spec, Path("c.json"), extra, "python")
    assert argv == ["python", "-m", "langmarl.cli", "p2p", "run", "run backwards",
                    "--config", "c.json", "--runs-dir", str(RUN)]  # fmt: skip


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
    assert command(spec, Path("c.json"), [], "py")[3:] == ["train", "c.json"]
