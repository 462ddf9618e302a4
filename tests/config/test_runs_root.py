"""One runs root for every space (issue 27): each kind of config places its run at
``<runs_dir>/<run_id>`` (default under ``runs/``) with its top-level ``seed``; the old names
still work for one release, each with one deprecation line; ``--dir`` is ``--runs-dir``;
jobs place every kind alike."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.config import LanguageTaskConfig, config_from_dict
from langmarl.core.errors import ConfigError
from langmarl.core.validation import validate_model
from langmarl.jobs import JobSpec
from langmarl.jobs.spec import resolve_config
from langmarl.magrpo.run import RunConfig
from langmarl.p2p.reward.validation import ValidationResult
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.parl.grpo_config import GRPOFile
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM

CONFIGS = Path(__file__).parents[2] / "configs"


def _deprecations(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "langmarl.deprecation"]


def _never_valid(code: str, env_id: str) -> ValidationResult:
    return ValidationResult(ok=False, stage="syntax", errors=["refused by the test"])


def _session_dir(config: LoopConfig) -> Path:
    """Where a p2p session lands; its reward never validates, so it ends at once, untrained."""
    result = run_loop("balance", config, llm=ScriptedLLM(["no code"]), validator=_never_valid)
    assert result.status == "invalid_code", result.error
    return Path(config.runs_dir) / result.session_id


def _p2p(**fields: Any) -> LoopConfig:
    quick = {"env_id": "InvertedPendulum-v5", "elaborate": False, "review": False,
             "max_fix_attempts": 0, "fallback": "none", "code_judge": False}  # fmt: skip
    return LoopConfig(**quick, **fields)


# -- defaults: every kind under runs/ -------------------------------------------------------
def test_every_kind_of_config_defaults_to_a_run_under_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmarl.api import build_trainer

    monkeypatch.chdir(tmp_path)
    language = build_trainer(LanguageTaskConfig(llm="local"), callbacks=[])
    assert language.store.run_dir(language.run_id) == Path("runs/experiment")
    assert RunConfig().trainer_config().output_dir == "runs/magrpo"
    assert RunConfig(algorithm="iac").trainer_config().output_dir == "runs/iac"
    assert GRPOFile().grpo_config().output_dir == "runs/parl_grpo"
    session = _session_dir(_p2p())
    assert session.parent == Path("runs") and session.name.startswith("session_")
    assert (session / "run.json").is_file()


# -- runs_dir, run_id and seed are honoured ---------------------------------------------------
def test_runs_dir_run_id_and_seed_place_every_kind(tmp_path: Path) -> None:
    from langmarl.api import build_trainer

    place = {"runs_dir": str(tmp_path), "run_id": "r1", "seed": 7}
    language = build_trainer(LanguageTaskConfig(llm="local", **place), callbacks=[])
    assert language.store.run_dir(language.run_id) == tmp_path / "r1"
    assert language.config.seed == 7
    weights = RunConfig(**place).trainer_config()
    assert (weights.output_dir, weights.seed) == (str(tmp_path / "r1"), 7)
    grpo = GRPOFile(**place).grpo_config()
    assert (grpo.output_dir, grpo.seed) == (str(tmp_path / "r1"), 7)
    assert _session_dir(_p2p(**place)) == tmp_path / "r1"
    assert _p2p(seed=[1, 2]).seeds == [1, 2] and _p2p(seed=3).seeds == [3]


def test_langmarl_train_run_id_is_the_run_id_field(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"env": "language", "run_id": "from-file"}')
    from langmarl.config.loading import load_config

    assert load_config(config).run_id == "from-file"
    assert load_config(config, {"run_id": "from-flag"}).run_id == "from-flag"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"run_id": "a/b"}, "run_id 'a/b' must be one directory name"),
        ({"run_id": ".."}, "put parent directories in runs_dir"),
        ({"runs_dir": " "}, "runs_dir ' ' names no directory"),
    ],
)
def test_a_bad_place_names_the_field_and_the_fix(fields: dict[str, str], message: str) -> None:
    for load in (
        lambda data: config_from_dict(data),
        lambda data: validate_model(RunConfig, data),
        lambda data: GRPOFile.from_mapping(data),
        lambda data: validate_model(LoopConfig, data),
    ):
        with pytest.raises(ConfigError, match=message):
            load(fields)
    with pytest.raises(ConfigError, match="seed is an empty list: give a seed"):
        validate_model(LoopConfig, {"seed": []})


# -- old names: still read, one deprecation line each ----------------------------------------
OLD_NAMES = [
    ("experiment_dir", {"experiment_dir": "old"}, config_from_dict, ("runs_dir", "old")),
    (
        "trainer.output_dir",
        {"trainer": {"output_dir": "old/r"}},
        lambda d: validate_model(RunConfig, d).trainer_config(),
        ("output_dir", "old/r"),
    ),
    (
        "trainer.seed",
        {"trainer": {"seed": 4}},
        lambda d: validate_model(RunConfig, d).trainer_config(),
        ("seed", 4),
    ),
    (
        "grpo.output_dir",
        {"grpo": {"output_dir": "old/r"}},
        lambda d: GRPOFile.from_mapping(d).grpo_config(),
        ("output_dir", "old/r"),
    ),
    ("grpo.seed", {"grpo": {"seed": 4}}, lambda d: GRPOFile.from_mapping(d), ("seed", 4)),
    ("seeds", {"seeds": [2, 3]}, lambda d: validate_model(LoopConfig, d), ("seeds", [2, 3])),
]


@pytest.mark.parametrize(
    ("old", "data", "load", "expected"), OLD_NAMES, ids=[row[0] for row in OLD_NAMES]
)
def test_an_old_name_still_works_with_one_deprecation_line(
    old: str, data: dict[str, Any], load: Any, expected: tuple[str, Any], caplog
) -> None:
    loaded = load(data)
    attribute, value = expected
    assert getattr(loaded, attribute) == value
    [line] = _deprecations(caplog)
    assert line.startswith(f"`{old}` is deprecated: use `") and "\n" not in line
    assert line.endswith("for now")


def test_an_old_name_wins_over_the_new_one_beside_it(caplog) -> None:
    """An old command line (--set trainer.output_dir=...) on a config that sets run_id."""
    data = {"run_id": "new", "trainer": {"output_dir": "runs/old"}}
    assert validate_model(RunConfig, data).run_dir == Path("runs/old")
    assert _deprecations(caplog) == [
        "`trainer.output_dir` is deprecated: use `runs_dir` and `run_id` (the run directory is "
        "<runs_dir>/<run_id>); it is read as runs_dir='runs', run_id='old' for now"
    ]
    with pytest.raises(ConfigError, match=r"trainer\.output_dir='' names no run directory"):
        validate_model(RunConfig, {"trainer": {"output_dir": ""}})


def test_shipped_configs_use_the_new_names(caplog) -> None:
    texts = [path.read_text() for path in CONFIGS.rglob("*") if path.suffix in (".json", ".yaml")]
    for old in ("experiment_dir", "output_dir", "seeds"):
        assert not [text for text in texts if old in text], old


# -- the CLI: --dir is --runs-dir -------------------------------------------------------------
def test_dir_is_read_as_runs_dir_with_one_deprecation_line(tmp_path: Path, caplog) -> None:
    RunDir(tmp_path / "r1").start("magrpo", config={}, total_steps=1)
    caplog.set_level(logging.WARNING)
    listed = CliRunner().invoke(build_app(), ["runs", "--dir", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    assert "r1" in listed.output
    shown = CliRunner().invoke(build_app(), ["runs", "show", "r1", "--dir", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert (
        _deprecations(caplog)
        == [
            "`--dir` is deprecated: use `--runs-dir` (the directory holding runs); it is read as "
            "such for now"
        ]
        * 2
    )
    both = ["runs", "show", "r1", "--runs-dir", str(tmp_path), "--dir", "elsewhere"]
    refused = CliRunner().invoke(build_app(), both)
    assert isinstance(refused.exception, ConfigError)
    assert "give --runs-dir only" in str(refused.exception)


# -- jobs: every kind placed alike -------------------------------------------------------------
RUN = Path("/jobs/job-1")
JOB_CONFIGS = [
    ("language", "quickstart.json", lambda d: config_from_dict(d).runs_dir),
    ("parl_language", "parl/language_tiny.json", lambda d: config_from_dict(d).runs_dir),
    ("magrpo", "magrpo/writing_tiny.json", lambda d: str(validate_model(RunConfig, d).run_dir)),
    ("parl_grpo", "parl/grpo_tiny.json", lambda d: str(GRPOFile.from_mapping(d).run_dir)),
    ("p2p", "p2p/halfcheetah_backwards.yaml", lambda d: validate_model(LoopConfig, d).runs_dir),
]


@pytest.mark.parametrize(("kind", "config", "where"), JOB_CONFIGS, ids=[r[0] for r in JOB_CONFIGS])
def test_a_job_places_every_kind_alike(kind: str, config: str, where: Any) -> None:
    intent = "run backwards" if kind == "p2p" else None
    spec = JobSpec(kind=kind, config=str(CONFIGS / config), seed=5, intent=intent)
    resolved = resolve_config(spec, RUN)
    assert (resolved["runs_dir"], resolved["run_id"], resolved["seed"]) == ("/jobs", "job-1", 5)
    assert where(resolved) in ("/jobs", str(RUN))  # the kind's own loader agrees


def test_a_job_places_a_config_written_with_old_names(caplog) -> None:
    old = {"trainer": {"output_dir": "runs/mine", "seed": 1, "max_steps": 1}}
    resolved = resolve_config(JobSpec(kind="magrpo", config=old, seed=5), RUN)
    assert validate_model(RunConfig, resolved).run_dir == RUN
    assert resolved["seed"] == 5 and resolved["trainer"] == {"max_steps": 1}
    assert len(_deprecations(caplog)) == 2  # output_dir and seed, once each


# -- one name from config to disk, the run id decided once -----------------------------------
def test_runs_dir_is_the_one_name_from_config_to_store(tmp_path: Path, caplog) -> None:
    from langmarl.api import build_trainer
    from langmarl.store import LocalStore

    config = LanguageTaskConfig(llm="local", runs_dir=str(tmp_path), exp_name="e")
    trainer = build_trainer(config, callbacks=[])
    assert trainer.store.runs_dir == tmp_path and trainer.run_id == "e"
    assert _deprecations(caplog) == []  # nothing inside langmarl reads an old name
    assert config.experiment_dir == str(tmp_path)  # the reference's name, deprecated
    assert LocalStore(base_dir=tmp_path).runs_dir == tmp_path
    assert [line.split(":")[0] for line in _deprecations(caplog)] == [
        "`experiment_dir` is deprecated",
        "`LocalStore(base_dir=...)` is deprecated",
    ]


def test_the_run_id_is_decided_by_the_config() -> None:
    from langmarl.api import build_trainer

    named = LanguageTaskConfig(llm="local", exp_name="e", run_id="r")
    assert LanguageTaskConfig(exp_name="e").chosen_run_id() == "e"
    assert named.chosen_run_id() == "r"
    assert named.with_fresh_run_id("20260101-000000").chosen_run_id() == "r-20260101-000000"
    assert build_trainer(named, callbacks=[]).run_id == "r"
    assert build_trainer(named, run_id="other", callbacks=[]).run_id == "other"
