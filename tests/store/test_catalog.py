"""`langmarl runs`: runs of every kind and of older layouts are found, listed and shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.store.catalog import describe, find_runs
from langmarl.store.run import RunDir


def _language_run(base: Path, run_id: str = "lang") -> Path:
    store = LocalStore(base)
    store.start_run(run_id, env="qa", agent_ids=["a"], target_iterations=1)
    checkpoint = PolicyCheckpoint(store, run_id, 1, agent_ids=["a"])
    checkpoint.save_policies(0, {"a": "Answer.\n"})
    checkpoint.save_policies(1, {"a": "Answer briefly.\n"}, stats={"iteration": 0})
    store.save_metrics(run_id, checkpoint.all_stats())
    store.update_run(run_id, completed_iterations=1, best_reward=0.75)
    store.set_status(run_id, "completed")
    return base / run_id


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _old_layouts(root: Path) -> None:
    """One directory per layout written before the run contract."""
    old = {"run_id": "old_lang", "status": "completed", "completed_iterations": 2}
    _write(root / "old_lang" / "run.json", {**old, "updated_at": 1.0})
    _write(root / "old_magrpo" / "run_config.json", {"algorithm": "maac"})
    (root / "old_magrpo" / "metrics.jsonl").write_text('{"step": 2, "reward_mean": 0.25}\n')
    heldout = {"before": {"interval": {"mean": 0.1}}, "after": {"interval": {"mean": 0.3}}}
    _write(root / "old_magrpo" / "heldout.json", heldout)
    _write(root / "old_parl" / "parl_curves.json", {"curve": [], "episodes": []})
    _write(root / "old_parl" / "metrics.json", [{"step": 0, "total_reward": 0.5}])
    _write(root / "deep" / "old_session" / "status.json", {"status": "max_iterations"})
    _write(root / "deep" / "old_session" / "metadata.json", {"prompt": "run"})
    _write(root / "deep" / "old_session" / "loop_history.json",
           {"iterations": [{"iteration": 1, "intent_score": 0.4}], "best_score": 0.4})  # fmt: skip


def test_runs_of_every_layout_are_listed_with_kind_and_status(tmp_path: Path) -> None:
    _language_run(tmp_path / "experiments")
    weight = RunDir(tmp_path / "experiments" / "group" / "w")
    weight.start("magrpo", total_steps=4)
    weight.log_metrics(1, reward_mean=0.5)
    weight.finish("completed")
    _old_layouts(tmp_path / "runs")
    found = {r.run_id: r for r in find_runs(tmp_path)}
    assert {k: (r.kind, r.status, r.layout) for k, r in found.items()} == {
        "lang": ("language", "completed", "current"),
        "w": ("magrpo", "completed", "current"),
        "old_lang": ("language", "completed", "old"),
        "old_magrpo": ("maac", "completed", "old"),
        "old_parl": ("parl_grpo", "unknown", "old"),
        "old_session": ("p2p", "completed", "old"),
    }
    assert found["w"].progress == "1/4 steps" and found["w"].score == 0.5
    assert [r.run_id for r in find_runs(tmp_path, kind="maac")] == ["old_magrpo"]
    assert describe(found["old_magrpo"].path).details["heldout"]["after"] == {"mean": 0.3}
    assert describe(found["old_session"].path).details["iterations"][0]["intent_score"] == 0.4


def test_language_metrics_stream_and_show(tmp_path: Path) -> None:
    run = _language_run(tmp_path)
    assert RunDir(run).metrics() == [{"step": 1, "iteration": 0}]
    assert RunDir(run).record().kind == "language"
    details = describe(run).details
    assert details["policies"] == {"a": "Answer briefly.\n"}
    assert "+Answer briefly." in details["diffs"]["a"]
    result = CliRunner().invoke(build_app(), ["runs", "show", str(run)])
    assert result.exit_code == 0, result.output
    assert "diff against checkpoint 0" in result.output
    # the marker keeps a column of its own (a wrapped line stays under its text)
    assert re.search(r"^\+ +Answer briefly\.", result.output, re.MULTILINE), result.output


def test_runs_command_filters_and_refuses_unknown_values(tmp_path: Path) -> None:
    _language_run(tmp_path / "experiments")
    _old_layouts(tmp_path / "runs")
    app, runner = build_app(), CliRunner()
    roots = ["--runs-dir", str(tmp_path / "experiments"), "--runs-dir", str(tmp_path / "runs")]
    result = runner.invoke(app, ["runs", *roots, "--kind", "p2p"])
    assert result.exit_code == 0, result.output
    assert "old_session" in result.output and "lang " not in result.output
    result = runner.invoke(app, ["runs", *roots, "--status", "unknown"])
    assert "old_parl" in result.output and "old_session" not in result.output
    result = runner.invoke(app, ["runs", *roots, "--kind", "magrp"])
    assert result.exit_code != 0 and "Did you mean 'magrpo'" in str(result.exception)


def test_plots_follow_the_recorded_kind(tmp_path: Path) -> None:
    from langmarl.plots import detect_kind

    for kind, plotted in (("p2p", "reward"), ("magrpo", "weight")):
        run = RunDir(tmp_path / kind)
        run.start(kind)
        run.log_metrics(1, intent_score=0.5)  # metrics.jsonl alone would look like weight space
        assert detect_kind(run.path).name == plotted
    assert detect_kind(_language_run(tmp_path / "lang")).name == "language"


def test_a_corrupt_run_is_listed_as_unreadable_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "run.json").write_text('{"kind": "magr')  # torn by hand
    [summary] = find_runs(tmp_path)
    assert summary.status == "unreadable" and "Delete run.json" in (summary.error or "")
