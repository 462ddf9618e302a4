"""Every command fits an 80-column terminal: each `--help` of the whole command tree, and a
real output of each command that runs fast without a model, on small fixture runs of every
kind. Help paragraphs are wrapped by rich at spaces (never broken mid-sentence), and
samples and metrics print as text, not Python reprs."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from langmarl.cli import build_app
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.store.run import RunDir

WIDTH = 80
REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def too_long(text: str) -> list[str]:
    """The lines of ``text`` wider than :data:`WIDTH`."""
    return [line for line in text.splitlines() if len(line) > WIDTH]


def assert_fits(text: str) -> None:
    assert text.strip(), "no output"
    assert not too_long(text), "\n".join(too_long(text))


def assert_wrapped_at_spaces(help_text: str) -> None:
    """The description of a ``--help`` (between ``Usage:`` and the first box) breaks a line
    only where the next word would not fit: a docstring's own line breaks are gone."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.startswith("╭")), len(lines))
    description = [line.strip() for line in lines[start:end]]
    for line, following in itertools.pairwise(description):
        if line and following:  # inside a paragraph: the next word did not fit
            assert len(line) + 1 + len(following.split()[0]) > WIDTH - 2, (line, following)


def invoke(*args: str) -> Result:
    return runner.invoke(build_app(), list(args), env={"COLUMNS": str(WIDTH)})


def command_paths() -> list[tuple[str, ...]]:
    """Every command and group of ``langmarl``, the root first."""

    def walk(command: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        below = getattr(command, "commands", {})
        return [path] + [p for name in sorted(below) for p in walk(below[name], (*path, name))]

    return walk(typer.main.get_command(build_app()), ())


@pytest.mark.parametrize("path", command_paths(), ids=lambda path: " ".join(path) or "langmarl")
def test_every_help_fits_and_wraps_whole_paragraphs(path: tuple[str, ...]) -> None:
    result = invoke(*path, "--help")
    assert result.exit_code == 0, result.output
    assert_fits(result.output)
    assert_wrapped_at_spaces(result.output)
    assert "``" not in result.output  # reST literals render as `x`


def test_the_checks_fail_on_a_long_line_and_on_a_broken_paragraph() -> None:
    with pytest.raises(AssertionError):
        assert_fits("fits\n" + "x" * (WIDTH + 1))
    broken = " Usage: langmarl x\n\n Run a session per row; each with a new session id: a\n a\n"
    with pytest.raises(AssertionError):
        assert_wrapped_at_spaces(broken)


def test_p2p_bench_help_is_one_paragraph_per_paragraph() -> None:
    said = " ".join(invoke("p2p", "bench", "--help").output.split())
    assert "so a bench stopped part-way keeps the cases it finished; the same command" in said


# -- fixture runs of every kind ---------------------------------------------------------------
METRICS = {f"reward_turn{turn}": 0.123456 for turn in range(4)} | {
    "reward_mean": 0.5, "return_mean": 1.25, "loss": -0.0123, "kl": 0.000123, "nodes": 14,
    "leaves": 8, "grad_norm_agent-0": 1.5, "grad_norm_agent-1": 2.25, "skipped_nonfinite": 0,
    "lr": 5e-06, "tokens_per_second": 123.4, "duration_s": 12.5,
}  # fmt: skip
"""A weight-space metrics line as wide as a real one (``runs show`` printed 415 columns)."""
INTERVAL = {"mean": 0.25, "low": 0.1, "high": 0.4, "n": 3, "method": "t"}


def _language(root: Path, run_id: str) -> Path:
    store = LocalStore(root)
    store.start_run(run_id, env="qa", agent_ids=["researcher", "answerer"], target_iterations=2)
    checkpoint = PolicyCheckpoint(store, run_id, 2, agent_ids=["researcher", "answerer"])
    first = {"researcher": "Find the fact.\n", "answerer": "Answer.\n"}
    checkpoint.save_policies(0, first)
    quote = "Find the fact and quote the sentence that states it, word for word, with the "
    better = {
        "researcher": quote + "name of the document it comes from.\n",
        "answerer": "Answer.\n",
    }
    checkpoint.save_policies(1, better, stats={"iteration": 0})
    store.save_metrics(run_id, checkpoint.all_stats())
    store.update_run(run_id, completed_iterations=1, best_reward=0.75)
    store.set_status(run_id, "completed")
    return root / run_id


def _weight(root: Path, run_id: str, kind: str) -> Path:
    run = RunDir(root / run_id)
    run.start(kind, config={"algorithm": kind}, total_steps=16)
    for step in (8, 16):
        run.log_metrics(step, **METRICS)
        state = root / run_id / "checkpoints" / f"step-{step:06d}" / "trainer_state.json"
        state.parent.mkdir(parents=True)
        state.write_text(json.dumps({"step": step}))
    before = {"label": "untrained", "interval": INTERVAL, "returns": [0.25], "samples": []}
    after = before | {"label": "step 16", "interval": INTERVAL | {"mean": 0.75}}
    run.write_json("heldout.json", {"task": "poster", "before": before, "after": after})
    run.finish("completed")
    return run.path


def _p2p(root: Path, run_id: str) -> Path:
    run = RunDir(root / run_id)
    run.start("p2p", config={"max_iterations": 2}, intent="make the cheetah run backwards")
    run.log_metrics(1, intent_score=0.5, mean_return=-41.141)
    run.finish("failed", "RuntimeError: the PPO run of iteration 2 ran out of memory while "
                         "rendering its video; continue it with `langmarl p2p resume`")  # fmt: skip
    return run.path


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``runs/`` (the working directory's, as a user has it) with a run of each kind."""
    monkeypatch.chdir(tmp_path)
    root = Path("runs")
    _language(root, "quickstart-20261125-014216")
    _weight(root, "magrpo-poster-20261125-020851", "magrpo")
    _weight(root, "maac-writing-20261125-020851", "maac")
    _weight(root, "parl-grpo-20261125-020851", "parl_grpo")
    _p2p(root, "session_20261125_020851_f30e")
    return root


def test_runs_and_runs_show_of_every_kind_fit(runs: Path) -> None:
    listed = invoke("runs")
    assert listed.exit_code == 0, listed.output
    assert_fits(listed.output)
    for run in sorted(runs.iterdir()):
        shown = invoke("runs", "show", str(run))
        assert shown.exit_code == 0, shown.output
        assert_fits(shown.output)
        assert run.name in shown.output
    weight = invoke("runs", "show", "magrpo-poster-20261125-020851").output
    assert "reward_mean=0.5 " in weight and "kl=0.000123" in weight and "lr=5e-06" in weight
    assert "held-out:" in weight and "0.250 → 0.750 (n=3)" in weight


def test_plot_parl_curves_config_and_models_fit(runs: Path) -> None:
    plotted = invoke("plot", "magrpo-poster-20261125-020851")
    assert plotted.exit_code == 0, plotted.output
    assert plotted.stdout.strip() == str(runs / "magrpo-poster-20261125-020851" / "curves.png")
    for args in (
        ("config", "show", str(REPO / "configs" / "magrpo" / "quickstart.json")),
        ("config", "show", str(REPO / "configs" / "quickstart.json")),
        ("models",),
    ):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert_fits(result.output)
    models = invoke("models").output
    assert "https://api.deepseek.com/v1" in models  # a URL shorter than its column: whole


def test_jobs_list_and_status_fit(runs: Path) -> None:
    from langmarl.jobs.records import JobRecord, JobState, JobStore
    from langmarl.jobs.spec import JobSpec

    store = JobStore(runs)
    states: tuple[JobState, ...] = ("completed", "failed", "running")
    for index, state in enumerate(states):
        job_id = f"poster-sweep-seed-{index}-20261125-020851-ab1{index}"
        error = (
            "RuntimeError: " + "the command exited with code 1 " * 4 if state == "failed" else None
        )
        store.write(JobRecord(
            job_id=job_id, spec=JobSpec(kind="magrpo", config={"task": {"name": "poster"}}),
            backend="local", state=state, run_dir=str(runs / job_id),
            log_path=str(runs / job_id / "job.log"), cores=[0, 1], error=error, exit_code=1,
        ))  # fmt: skip
    for args in (("jobs", "list"), ("jobs", "status", "poster-sweep-seed-1-20261125-020851-ab11")):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert_fits(result.output)
    assert "the command exited" in invoke("jobs", "list").output


def test_eval_of_a_kind_without_an_evaluator_fits_on_a_terminal(
    runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error line goes through ``run_app`` as ``langmarl`` prints it; on a terminal
    (``TTY_COMPATIBLE=1``) it wraps at spaces."""
    from langmarl.cli.common import run_app

    for name, value in {"COLUMNS": str(WIDTH), "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}.items():
        monkeypatch.setenv(name, value)
    run = runs / "session_20261125_020851_f30e"
    monkeypatch.setattr(sys, "argv", ["langmarl", "eval", str(run)])
    with pytest.raises(SystemExit) as ended:
        run_app(build_app())
    assert ended.value.code == 1
    err = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().err)  # styles, if any
    assert_fits(err)
    assert "langmarl p2p play" in " ".join(err.split())


def test_magrpo_eval_prints_samples_as_text_and_fits_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from langmarl.cli.magrpo_commands import _print_headline, _print_samples
    from langmarl.core.intervals import ScoreInterval
    from langmarl.magrpo.heldout import HeldoutReport, HeldoutScore

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal: the headline wraps too
    prompt = "Write a poster title for a talk on [bold] multi-agent RL, 'quoted' and\nlong " * 2
    completions = ["A title: 'Teams that learn' — with a \"quote\"\nand a second line", ""]
    sample = {"prompt": prompt, "completions": completions, "return": 0.5}
    scores = {
        label: HeldoutScore(
            label=label,
            interval=ScoreInterval.model_validate(INTERVAL | {"n": 30}),
            returns=[0.5],
            samples=[sample, sample],
        )
        for label in ("untrained", "step 16")
    }
    report = HeldoutReport(task="poster", before=scores["untrained"], after=scores["step 16"])
    _print_samples(report)
    _print_headline(report)
    out = capsys.readouterr().out
    assert_fits(out)
    assert "['" not in out and "\\n" not in out  # no list reprs, no escapes
    assert "agent-0: A title: 'Teams that learn'" in out and "agent-1: (empty)" in out
    assert "untrained: return 0.50" in out and "[bold]" in out
    assert "Held-out reward: 0.250 → 0.250 (n=30 poster" in " ".join(out.split())
    monkeypatch.setenv("TTY_COMPATIBLE", "0")  # a pipe or a log: one line, read whole
    _print_headline(report)
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("Held-out reward: 0.250 → 0.250 (n=30 poster") and line.endswith(")")
