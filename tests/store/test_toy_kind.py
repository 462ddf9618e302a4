"""Adding a kind of run touches one spec and the kind's own code (issue 27): a toy kind,
registered here and nowhere else, is listed, plotted, served and evaluated like the
built-in ones."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store import kinds
from langmarl.store.catalog import describe, find_runs
from langmarl.store.kinds import EvalRequest, RunKindSpec
from langmarl.store.run import RunDir

EVALUATED: list[tuple[Path, EvalRequest]] = []


@dataclass(frozen=True)
class ToyResult:
    """The toy kind's typed evaluation result."""

    score: float

    def headline(self) -> str:
        return f"Toy score: {self.score:.2f}"


def evaluate_toy(run_dir: Path, request: EvalRequest) -> ToyResult:
    """The toy kind's evaluator: records the call, writes a report into the run and returns
    the result, which `langmarl eval` renders by its headline."""
    EVALUATED.append((run_dir, request))
    RunDir(run_dir).write_json("evals/toy.json", {"episodes": request.episodes, "score": 0.9})
    return ToyResult(0.9)


@pytest.fixture
def toy() -> Iterator[RunKindSpec]:
    spec = kinds.register(
        RunKindSpec(
            "toy", "a toy trainer", unit="step", score_key="score", score_label="last score",
            target_field="total_steps", evaluate=evaluate_toy, aliases=("toy_v0",),
        )
    )  # fmt: skip
    EVALUATED.clear()
    yield spec
    kinds.unregister("toy")


def _toy_run(root: Path, name: str = "toy-1") -> Path:
    run = RunDir(root / name)
    run.start("toy", config={"lr": 0.1}, total_steps=3)
    for step, score in ((1, 0.2), (2, 0.5), (3, 0.7)):
        run.log_metrics(step, score=score, loss=1.0 / step)
    run.finish("completed")
    return run.path


def test_a_registered_kind_is_listed_with_its_own_facts(toy: RunKindSpec, tmp_path: Path) -> None:
    _toy_run(tmp_path)
    (summary,) = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.progress) == ("toy", "completed", "3/3 steps")
    assert summary.score == pytest.approx(0.7)
    assert describe(summary.path).details["last_metrics"]["score"] == pytest.approx(0.7)
    assert [r.kind for r in find_runs(tmp_path, kind="toy")] == ["toy"]
    result = CliRunner().invoke(build_app(), ["runs", "--runs-dir", str(tmp_path), "--kind", "toy"])
    assert result.exit_code == 0, result.output
    assert "toy-1" in result.output and "3/3 steps" in result.output


def test_an_older_name_of_a_kind_is_read_as_the_kind(toy: RunKindSpec, tmp_path: Path) -> None:
    run = _toy_run(tmp_path)
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"kind": "toy_v0"}))
    assert RunDir(run).record().kind == "toy"
    assert [r.kind for r in find_runs(tmp_path)] == ["toy"]


def test_a_registered_kind_is_plotted_from_its_metrics(toy: RunKindSpec, tmp_path: Path) -> None:
    from langmarl.plots.api import plot_run, run_series

    run = _toy_run(tmp_path)
    plot = run_series(run)
    assert plot.kind == "toy"
    assert plot.series("score per step")["score"].y == [0.2, 0.5, 0.7]
    assert plot.series("loss")["loss"].y == pytest.approx([1.0, 0.5, 1 / 3])
    assert plot_run(run).stat().st_size > 1000


def test_a_registered_kind_is_served_by_the_api(toy: RunKindSpec, tmp_path: Path) -> None:
    from langmarl.web import create_app

    _toy_run(tmp_path)
    client = TestClient(create_app(tmp_path))
    listed = {k["name"]: k for k in client.get("/api/kinds").json()}
    assert listed["toy"]["view"] == "metrics" and listed["toy"]["evaluates"] is True
    assert "evaluate" not in listed["toy"]  # code stays on the server
    (run,) = client.get("/api/runs", params={"kind": "toy"}).json()["runs"]
    assert (run["kind"], run["score_key"], run["view"]) == ("toy", "score", "metrics")
    assert run["sparkline"] == [0.2, 0.5, 0.7]
    metrics = client.get("/api/runs/toy-1/metrics").json()
    assert metrics["steps"] == [1, 2, 3] and metrics["series"]["score"] == [0.2, 0.5, 0.7]
    assert client.get("/api/runs/toy-1/checkpoints").status_code == 404  # not a weight run


def test_a_registered_kind_is_evaluated_by_langmarl_eval(toy: RunKindSpec, tmp_path: Path) -> None:
    run = _toy_run(tmp_path)
    result = CliRunner().invoke(build_app(), ["eval", str(run), "--episodes", "4"])
    assert result.exit_code == 0, result.output
    assert [(run, EvalRequest("test", None, 4))] == EVALUATED
    assert "Toy score: 0.90" in result.output
    assert json.loads((run / "evals" / "toy.json").read_text())["episodes"] == 4


def test_a_kind_without_an_evaluator_says_what_to_look_at(tmp_path: Path) -> None:
    kinds.register(RunKindSpec("toy_plain", "no evaluator", no_eval="its curves: `see {run}`"))
    try:
        run = RunDir(tmp_path / "plain")
        run.start("toy_plain")
        result = CliRunner().invoke(build_app(), ["eval", str(run.path)])
    finally:
        kinds.unregister("toy_plain")
    said = str(result.exception)
    assert result.exit_code != 0 and len(said.splitlines()) == 1
    assert "no held-out evaluation" in said and f"see {run.path}" in said


def test_kind_names_are_unique_and_unknown_kinds_are_refused(tmp_path: Path) -> None:
    from langmarl.core.errors import ConfigError

    with pytest.raises(ConfigError, match="registered already"):
        kinds.register(RunKindSpec("magrpo", "a second magrpo"))
    with pytest.raises(ConfigError, match=r"unknown run kind 'magrpoo'.*magrpo"):
        RunDir(tmp_path / "r").start("magrpoo")
    assert kinds.get("p2p_session").name == "p2p"


def test_jobs_take_their_command_from_the_kind(toy: RunKindSpec) -> None:
    from dataclasses import replace

    from langmarl.core.errors import ConfigError
    from langmarl.jobs.spec import command, parse_spec

    with pytest.raises(ConfigError, match="cannot be started as a job"):
        parse_spec({"kind": "toy"})
    kinds.register(replace(toy, command=("toy", "train"), config_flag="--config"), replace=True)
    spec = parse_spec({"kind": "toy_v0", "config": {}})
    assert spec.kind == "toy"
    assert command(spec, Path("c.json"), "py")[3:] == ["toy", "train", "--config", "c.json"]


@pytest.mark.parametrize(
    ("kind", "resumed"),
    [
        ("magrpo", ["magrpo", "train", "c.json", "--resume", "latest"]),
        ("parl_grpo", ["parl", "grpo", "--config", "c.json", "--resume", "latest"]),
        ("p2p", ["p2p", "resume", "RUN"]),
        ("language", ["train", "c.json"]),  # its own command resumes
    ],
)
def test_a_retried_job_runs_its_kinds_resume_command(
    kind: str, resumed: list[str], tmp_path: Path
) -> None:
    from langmarl.jobs.spec import JobSpec, command

    spec = JobSpec(kind=kind, intent="run" if kind == "p2p" else None)
    run = tmp_path / "job-1"
    first = command(spec, Path("c.json"), "py", run)[3:]
    RunDir(run).start(kind)  # the first attempt started the run, then its worker died
    again = command(spec, Path("c.json"), "py", run)[3:]
    assert again == [a.replace("RUN", str(run)) for a in resumed]
    assert first != again or kind == "language"
