"""Prompt2Policy sessions follow the run contract: run.json (kind p2p, statuses
mapped), metrics.jsonl per iteration, listed and shown by `langmarl runs`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM

from .conftest import FakeTrainer
from .test_loop import _run, replies


@pytest.mark.parametrize(
    ("score", "outcome", "status"),
    [("SCORE: 0.9", "passed", "completed"), ("SCORE: 0.2", "max_iterations", "completed")],
)
def test_a_session_is_a_run(tmp_path: Path, score: str, outcome: str, status: str) -> None:
    result, _, session = _run(tmp_path, ScriptedLLM(replies(score)), max_iterations=2)
    record = RunDir(session.path).record()
    assert (record.kind, record.status, record.outcome) == ("p2p", status, outcome)  # type: ignore[attr-defined]
    assert record.config["env_id"] == "InvertedPendulum-v5"
    metrics = RunDir(session.path).metrics()
    assert [m["step"] for m in metrics] == [s.iteration for s in result.iterations]
    [summary] = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.layout) == ("p2p", status, "current")
    shown = CliRunner().invoke(build_app(), ["runs", "show", str(session.path)])
    assert shown.exit_code == 0, shown.output
    assert re.search(rf"^outcome:\s+{outcome}", shown.output, re.MULTILINE), shown.output
    iteration_1 = re.search(r"^\s*1\s+\d\.\d{3}\s", shown.output, re.MULTILINE)
    assert iteration_1, shown.output


def test_a_failed_and_an_interrupted_session(tmp_path: Path) -> None:
    _, _, session = _run(tmp_path / "a", ScriptedLLM(replies("SCORE: 0.2")),
                         trainer=FakeTrainer(fail=True))  # fmt: skip
    record = RunDir(session.path).record()
    assert (record.status, record.outcome) == ("failed", "error") and record.error  # type: ignore[attr-defined]

    def interrupt(request):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path / "b", ScriptedLLM(interrupt))
    [summary] = find_runs(tmp_path / "b")
    assert (summary.status, summary.error) == ("stopped", "interrupted")
