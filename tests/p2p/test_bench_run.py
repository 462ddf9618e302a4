"""A benchmark as a run: its config (errors name the field), one session per case written
through the run contract (status, progress, metrics, events), a stop that keeps the
finished cases, and continuing it under the same run id. Scripted LLM, fake trainer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.core.validation import validate_model
from langmarl.p2p.bench.cases import BenchConfig, bench_details, validate_bench_config
from langmarl.p2p.bench.run import BenchHooks, run_bench
from langmarl.store import kinds
from langmarl.store.catalog import describe, open_run
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM

from .conftest import FakeTrainer
from .test_loop import replies, validator

SESSION = {"max_iterations": 1, "code_judge": False, "elaborate": False, "review": False}
CASES = [
    {"env_id": "InvertedPendulum-v5", "instruction": "balance", "category": "balance"},
    {"env_id": "InvertedPendulum-v5", "instruction": "wobble", "difficulty": "hard"},
    {"env_id": "InvertedPendulum-v5", "instruction": "lean", "difficulty": "hard"},
]


def _config(tmp_path: Path, **fields: object) -> BenchConfig:
    data = {"cases": CASES, "session": SESSION, "runs_dir": str(tmp_path), "run_id": "b"}
    return validate_model(BenchConfig, {**data, **fields})


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"session": {"max_iteration": 2}}, "Did you mean 'max_iterations'"),
        ({"session": {"max_iterations": 0}}, "session.max_iterations"),
        ({"session": {"env_id": "Hopper-v5"}}, "session sets env_id"),
        ({"session": {"run_id": "x"}}, "session sets run_id"),
        ({"cases": [{"env_id": "Cheetah-v5", "instruction": "run"}]}, "cases[0].env_id"),
        ({"cases": [{"env_id": "Hopper-v5"}]}, "cases.0.instruction"),
        ({"cases": []}, "cases is empty"),
        ({"cases": None}, "no cases"),
        ({"cases_csv": "env_id,instruction\nHopper-v5,hop\n"}, "give the cases once"),
        ({"cases": None, "cases_csv": "env,instruction\nx,y\n"}, "cases_csv lacks column"),
        ({"cases": "nowhere.csv"}, "'nowhere.csv' does not exist"),
        ({"limit": 0}, "limit"),
        ({"llm": "no-such-preset"}, "llm"),
        ({"run_id": "a/b"}, "run_id"),
        ({"lmit": 1}, "Did you mean 'limit'"),
    ],
)
def test_an_invalid_bench_config_names_the_field(tmp_path: Path, fields, named) -> None:
    with pytest.raises(ConfigError, match="Invalid BenchConfig") as caught:
        _config(tmp_path, **fields)
    assert named in str(caught.value)


def test_cases_come_from_a_list_a_csv_file_or_csv_text(tmp_path: Path) -> None:
    csv = "env_id,instruction,category,difficulty\nHopper-v5,hop,,easy\nSwimmer-v5,swim,,\n"
    (tmp_path / "cases.csv").write_text(csv)
    from_file = _config(tmp_path, cases=str(tmp_path / "cases.csv"))
    from_text = _config(tmp_path, cases=None, cases_csv=csv, limit=1, seed=7)
    assert [c.env_id for c in from_file.case_list()] == ["Hopper-v5", "Swimmer-v5"]
    assert from_text.case_list() == from_file.case_list()[:1]
    assert from_text.record()["cases"] == [from_file.case_list()[0].model_dump()]
    session = from_text.case_session(from_text.case_list()[0], tmp_path / "b")
    assert (session.env_id, session.runs_dir, session.seed) == ("Hopper-v5", str(tmp_path / "b"), 7)
    # the job path: the kind's validate_config entry point is this one
    check = kinds.load(kinds.get("p2p_bench").validate_config)
    assert check is validate_bench_config
    with pytest.raises(ConfigError, match=r"session\.total_timesteps"):
        check({"cases": CASES, "session": {"total_timesteps": 0}}, "the job's config")


def _run(config: BenchConfig, trainer: FakeTrainer | None = None, **hooks):
    return run_bench(config, llm=ScriptedLLM(replies("SCORE: 0.9")), validator=validator,
                     trainer=trainer or FakeTrainer(), hooks=BenchHooks(**hooks))  # fmt: skip


def test_a_bench_is_a_run_with_a_session_per_case(tmp_path: Path) -> None:
    seen: list[tuple[int, str]] = []
    result = _run(_config(tmp_path), done=lambda start, o: seen.append((start.index, o.status)))
    assert result.complete and seen == [(1, "passed"), (2, "passed"), (3, "passed")]
    run = RunDir(tmp_path / "b")
    record = run.record()
    assert (record.kind, record.status, record.cases_done, record.cases_total) == (  # type: ignore[attr-defined]
        "p2p_bench", "completed", 3, 3)  # fmt: skip
    assert [m["step"] for m in run.metrics()] == [1, 2, 3]
    assert [e["event"] for e in run.events()].count("case_end") == 3
    table = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert table["complete"] and table["current"] is None and table["cases_total"] == 3
    assert table["summary"]["difficulty=hard"]["cases"] == 2
    for case in table["cases"]:  # each session is a p2p run inside the bench
        assert RunDir(tmp_path / "b" / case["session_id"]).record().kind == "p2p"
    summary = open_run(tmp_path / "b")
    assert summary is not None and summary.progress == "3/3 cases"
    assert summary.score == pytest.approx(table["summary"]["all"]["mean_score"])
    assert len(describe(tmp_path / "b").details["cases"]) == 3
    with pytest.raises(ConfigError, match="is complete"):
        _run(_config(tmp_path))


class StopOnCall(FakeTrainer):
    """A fake trainer that raises KeyboardInterrupt (a Ctrl-C) on its ``stop_on``-th call."""

    def __init__(self, stop_on: int) -> None:
        super().__init__()
        self.stop_on = stop_on

    def __call__(self, *args, **kwargs):
        if len(self.calls) + 1 == self.stop_on:
            self.calls.append(("", args[2][0]))
            raise KeyboardInterrupt
        return super().__call__(*args, **kwargs)


def test_a_stopped_bench_keeps_its_cases_and_continues_under_its_run_id(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        _run(_config(tmp_path), trainer=StopOnCall(stop_on=2))
    run = RunDir(tmp_path / "b")
    assert (run.record().status, run.record().cases_done) == ("stopped", 1)  # type: ignore[attr-defined]
    table = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert [c["case"]["instruction"] for c in table["cases"]] == ["balance"]
    assert table["complete"] is False and table["current"]["case"]["instruction"] == "wobble"
    interrupted = RunDir(tmp_path / "b" / table["current"]["session_id"]).record()
    assert interrupted.status == "stopped"
    assert bench_details(tmp_path / "b")["complete"] is False

    with pytest.raises(ConfigError, match="other cases"):
        _run(_config(tmp_path, cases=CASES[1:]))
    trainer = FakeTrainer()
    result = _run(_config(tmp_path), trainer=trainer)
    assert result.complete and len(trainer.calls) == 2  # only the unfinished cases ran
    assert [o.case.instruction for o in result.outcomes] == ["balance", "wobble", "lean"]
    assert (run.record().status, run.record().attempts) == ("completed", 2)
    assert [m["step"] for m in run.metrics()] == [1, 2, 3]


def _fake_loop(monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """A fake ``run_loop`` (its calls) and the LLM settings the command made clients of."""
    from .test_p2p_commands import _fake_loop as fake

    run_loop, calls = fake("passed")
    llms: list = []
    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", run_loop)
    monkeypatch.setattr("langmarl.cli.p2p_commands._clients",
                        lambda llm, vlm: llms.append(llm) or (None, None))  # fmt: skip
    return calls, llms


def test_the_command_line_reads_a_session_config_or_a_bench_config(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from langmarl.cli import build_app

    calls, llms = _fake_loop(monkeypatch)
    configs = Path(__file__).resolve().parents[2] / "configs" / "p2p"
    args = ["p2p", "bench", str(configs / "cases.csv"), str(configs / "smoke.yaml"),
            "--limit", "2", "--iterations", "1", "--timesteps", "512",
            "--runs-dir", str(tmp_path)]  # fmt: skip
    done = CliRunner().invoke(build_app(), args)
    assert done.exit_code == 0, done.output
    assert [c[1].env_id for c in calls] == ["HalfCheetah-v5", "HalfCheetah-v5"]  # the cases'
    config = calls[0][1]  # smoke.yaml's settings, then the options
    assert (config.max_iterations, config.total_timesteps, config.code_judge) == (1, 512, False)
    (bench,) = tmp_path.glob("bench_*")
    assert RunDir(bench).record().config["llm"] == llms[0] == "local"

    calls.clear()
    bench_file = tmp_path / "bench.yaml"
    bench_file.write_text(
        "cases:\n  - {env_id: Hopper-v5, instruction: hop}\n"
        "session: {max_iterations: 3}\nllm: {name: stub, model_string: ok, base_url: "
        "'http://127.0.0.1:9/v1', requires_api_key: false}\n"
    )
    args = ["p2p", "bench", "--config", str(bench_file), "--runs-dir", str(tmp_path),
            "--run-id", "mine", "--set", "total_timesteps=64"]  # fmt: skip
    done = CliRunner().invoke(build_app(), args)
    assert done.exit_code == 0, done.output
    intent, config, _ = calls[0]
    assert (intent, config.env_id, config.max_iterations, config.total_timesteps) == (
        "hop", "Hopper-v5", 3, 64)  # fmt: skip
    assert llms[-1]["model_string"] == "ok"  # the bench config's LLM
    assert RunDir(tmp_path / "mine").record().status == "completed"
    again = CliRunner().invoke(build_app(), args)
    assert again.exit_code != 0 and "is complete" in str(again.exception)
