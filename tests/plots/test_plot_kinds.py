"""Each kind of run: detected from its files, and the numbers of every series plotted."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from plot_fakes import grpo_run, language_run, p2p_run, p2p_session, parl_curves, weight_run

from langmarl.core.errors import ConfigError
from langmarl.core.files import append_jsonl, atomic_write_json
from langmarl.p2p.session.records import IterationRecord
from langmarl.plots import detect_kind, resolve_run, run_series


def test_language_run_reward_updates_validation_and_held_out(tmp_path: Path) -> None:
    extra = [
        {"accepted_updates": 2, "rejected_updates": 0, "validation_score": 0.4},
        {"accepted_updates": 0, "rejected_updates": 2, "validation_score": 0.5},
        {"accepted_updates": 1, "validation_score": None},  # no validation that iteration
    ]
    run = language_run(
        tmp_path, [[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]], extra=extra,
        evals={("test", 0): 0.2, ("test", 3): 0.9, ("dev", 3): 0.8},
    )  # fmt: skip
    plot = run_series(run)
    assert plot.kind == "language" and plot.label == "language space (completed)"
    assert plot.title == "lang — language space (completed)"
    reward = plot.series("Reward per iteration")
    assert reward["mean reward"].x == [1, 2, 3] and reward["mean reward"].y == [0.5, 1.0, 0.5]
    assert reward["min"].y == [0.0, 1.0, 0.5] and reward["max"].y == [1.0, 1.0, 0.5]
    assert reward["held-out test"].x == [0, 3] and reward["held-out test"].y == [0.2, 0.9]
    assert reward["held-out test"].style == "markers" and reward["held-out dev"].y == [0.8]
    updates = plot.series("Prompt updates")
    assert updates["accepted"].y == [2, 0, 1] and updates["rejected (failed validation)"].y == [
        0,
        2,
    ]
    validation = plot.series("Validation score")["validation"]
    assert validation.x == [1, 2] and validation.y == [0.4, 0.5]
    assert plot.notes == []


def test_language_run_without_the_new_keys_plots_reward_only(tmp_path: Path) -> None:
    plot = run_series(language_run(tmp_path, [[0.0], [1.0]]))
    assert [p.title for p in plot.panels] == ["Reward per iteration"]


def test_language_validation_score_per_agent_is_one_series_each(tmp_path: Path) -> None:
    extra = [{"validation_score": {"a": 0.1, "b": 0.2}}, {"validation_score": {"a": 0.3}}]
    plot = run_series(language_run(tmp_path, [[0.0], [1.0]], extra=extra))
    validation = plot.series("Validation score")
    assert validation["a"].y == [0.1, 0.3] and validation["b"].x == [1]


def test_language_parl_run_adds_critical_steps(tmp_path: Path) -> None:
    run = language_run(tmp_path, [[0.5], [0.7]])
    parl_curves(run, [[{"critical_steps": 2, "serial_steps": 4}], [{"critical_steps": 1}]])
    plot = run_series(run)
    assert plot.kind == "language"
    assert plot.series("Reward per iteration")["mean reward"].y == [0.5, 0.7]
    steps = plot.series("Critical vs serial steps")
    assert steps["critical steps"].y == [2, 1] and steps["serial steps"].y == [4, 0]
    assert plot.series("Parallelism")["speedup (serial / critical)"].y == [2.0, 0.0]


def test_weight_run_running_mean_eval_kl_and_lengths(tmp_path: Path) -> None:
    rewards = [float(i % 2) for i in range(20)]
    run = weight_run(
        tmp_path, rewards,
        **{"agent-0/kl": [0.01] * 20, "agent-1/kl": [0.02] * 20,
           "agent-0/completion_tokens": [5.0] * 20, "agent-1/completion_tokens": [7.0] * 20},
    )  # fmt: skip
    append_jsonl(run / "eval.jsonl", {"step": 10, "eval_return": 0.3})
    append_jsonl(run / "eval.jsonl", {"step": 20, "eval_return": 0.6})
    plot = run_series(run)
    assert plot.kind == "weight" and plot.label == "weight space (MAGRPO)"
    reward = plot.series("Reward per step")
    assert reward["reward"].x == list(range(1, 21)) and reward["reward"].style == "faint"
    smooth = reward["running mean (2 steps)"]
    assert smooth.y[0] == 0.0 and smooth.y[1:] == [0.5] * 19
    assert "return (all turns)" not in reward  # one turn: return == reward, drawn once
    assert reward["eval return"].x == [10, 20] and reward["eval return"].y == [0.3, 0.6]
    assert plot.series("KL to the reference")["agent-1"].y == [0.02] * 20
    assert plot.series("Completion length")["agent-0"].y == [5.0] * 20
    assert "Critic value loss" not in [p.title for p in plot.panels]


def test_weight_run_heldout_report_before_and_after(tmp_path: Path) -> None:
    run = weight_run(tmp_path, [0.1, 0.3, 0.5])
    report = {"task": "poster", "before": {"interval": {"mean": 0.2, "n": 30}}}
    atomic_write_json(run / "heldout.json", report)  # training not finished: no "after" yet
    heldout = run_series(run).series("Reward per step")["held-out (untrained → trained)"]
    assert heldout.x == [0] and heldout.y == [0.2]
    report["after"] = {"interval": {"mean": 0.6, "n": 30}}
    atomic_write_json(run / "heldout.json", report)
    heldout = run_series(run).series("Reward per step")["held-out (untrained → trained)"]
    assert heldout.x == [0, 3] and heldout.y == [0.2, 0.6]
    atomic_write_json(run / "heldout.json", {"before": 0.2})  # another shape: left out
    assert "held-out (untrained → trained)" not in run_series(run).series("Reward per step")


def test_weight_run_with_one_turn_draws_the_return_once(tmp_path: Path) -> None:
    run = weight_run(tmp_path, [0.1, 0.3], returns=[0.1 + 1e-12, 0.3])  # float noise
    assert "return (all turns)" not in run_series(run).series("Reward per step")
    atomic_write_json(run / "config.json", {"algorithm": "magrpo", "num_turns": 2})
    assert "return (all turns)" in run_series(run).series("Reward per step")


def test_weight_iac_run_multi_turn_return_and_critic_loss(tmp_path: Path) -> None:
    losses = {"critic-0/value_loss": [3.0, 2.0, 1.0]}
    run = weight_run(tmp_path, [0.1, 0.2, 0.3], "iac", returns=[1.0] * 3, **losses)
    plot = run_series(run)
    assert plot.label == "weight space (IAC)"
    reward = plot.series("Reward per step")
    assert reward["reward (turn 1)"].y == [0.1, 0.2, 0.3]  # 3 points: no running mean
    assert reward["return (all turns)"].y == [1.0, 1.0, 1.0]
    assert plot.series("Critic value loss")["critic-0"].y == [3.0, 2.0, 1.0]
    assert [p.title for p in plot.panels] == ["Reward per step", "Critic value loss"]


def test_grpo_run_reward_terms_steps_and_parallelism(tmp_path: Path) -> None:
    steps = [
        [{"total_reward": 0.2, "r_perf": 0.1, "lambda1": 0.1, "critical_steps": 3,
          "serial_steps": 3, "num_subagents": 1, "accuracy": 0.0}],
        [{"total_reward": 0.8, "r_perf": 0.7, "lambda1": 0.05, "critical_steps": 2,
          "serial_steps": 6, "num_subagents": 3, "accuracy": 1.0},
         {"total_reward": 0.6, "r_perf": 0.5, "lambda1": 0.05, "critical_steps": 2,
          "serial_steps": 6, "num_subagents": 3, "accuracy": 0.0}],
    ]  # fmt: skip
    plot = run_series(grpo_run(tmp_path, steps))
    assert plot.kind == "parl" and "GRPO" in plot.label
    reward = plot.series("PARL reward per step")
    assert reward["total reward"].x == [0, 1] and reward["total reward"].y == [0.2, 0.7]
    assert reward["r_perf (task outcome)"].y == [0.1, 0.6]
    assert reward["λ1 (weight of r_parallel)"].y == [0.1, 0.05]
    assert reward["accuracy"].y == [0.0, 0.5]
    steps_panel = plot.series("Critical vs serial steps")
    assert steps_panel["critical steps"].y == [3, 2] and steps_panel["serial steps"].y == [3, 6]
    parallel = plot.series("Parallelism")
    assert parallel["sub-agents per episode"].y == [1, 3]
    assert parallel["speedup (serial / critical)"].y == [1.0, 3.0]


def test_p2p_session_judge_scores_threshold_and_returns(tmp_path: Path) -> None:
    p2p_session(tmp_path / "s", [0.3, 0.8], {"code": [0.2, 0.9], "summary": [0.4, 0.7]})
    plot = run_series(tmp_path / "s")
    assert plot.kind == "reward"
    judge = plot.series("Judge score per iteration")
    assert judge["intent score"].x == [1, 2] and judge["intent score"].y == [0.3, 0.8]
    assert judge["code judge"].y == [0.2, 0.9] and judge["summary judge"].y == [0.4, 0.7]
    assert plot.panels[0].hlines == {"pass threshold": 0.7}
    returns = plot.series("Return per iteration's training")
    assert returns["iter 2 training return"].x == [512, 1024]
    assert returns["iter 2 training return"].y == [2.0, 3.0]
    assert (
        returns["iter 1 eval return"].y == [3.0] and returns["iter 1 eval return"].group == "iter 1"
    )


def test_p2p_multi_seed_iteration_plots_the_judged_run(tmp_path: Path) -> None:
    session = p2p_session(tmp_path / "s", [0.5])
    iteration = session.new_iteration(2)
    for seed, value in ((1, 10.0), (2, 20.0)):
        p2p_run(IterationRecord(iteration.runs_dir / f"config_0_seed_{seed}"), [(8, value)], [])
    atomic_write_json(iteration.aggregation_path, {"best_run": "config_0_seed_2"})
    returns = run_series(tmp_path / "s").series("Return per iteration's training")
    assert returns["iter 2 training return"].y == [20.0]


def test_p2p_single_run_returns_env_return_and_terms(tmp_path: Path) -> None:
    record = IterationRecord(tmp_path / "iter_1")
    p2p_run(record, [(512, 1.0), (1024, 3.0)], [(1024, 2.5, 7.0)])
    plot = run_series(record.path)
    assert plot.kind == "reward-run"
    returns = plot.series("Return per environment step")
    assert returns["training return"].y == [1.0, 3.0] and returns["eval return"].y == [2.5]
    assert returns["eval env return (env's own reward)"].y == [7.0]
    terms = plot.series("Reward terms")
    assert terms["forward"].y == [0.5, 1.5] and terms["ctrl"].y == [-0.1, -0.1]


def test_one_point_is_plotted_with_a_note(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="langmarl.plots"):
        plot = run_series(weight_run(tmp_path, [0.4]))
    assert plot.series("Reward per step")["reward"].y == [0.4]
    assert plot.notes == ["only one step so far: drawn as single points, no curve yet"]
    assert "only one step so far" in caplog.text


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: language_run(p, []), "metrics.json lists no finished iteration"),
        (lambda p: atomic_write_json(p / "config.json", {"algorithm": "maac"}), "metrics.jsonl"),
        (lambda p: p2p_session(p, []), "no iteration has a judgment"),
    ],
)
def test_nothing_to_plot_yet_is_a_clear_error(tmp_path: Path, make, expected: str) -> None:
    made = make(tmp_path)
    run = made if isinstance(made, Path) else tmp_path
    with pytest.raises(ConfigError, match=f"no metrics in {run} yet: {expected}"):
        run_series(run)


def test_corrupt_lines_are_skipped_with_a_warning_naming_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = weight_run(tmp_path, [0.1, 0.2])
    text = (run / "metrics.jsonl").read_text()
    (run / "metrics.jsonl").write_text('{"step": 0, "rew\n' + text + '{"step": 3, "reward_m')
    with caplog.at_level(logging.WARNING, logger="langmarl.plots"):
        plot = run_series(run)
    assert plot.series("Reward per step")["reward"].y == [0.1, 0.2]
    assert plot.notes == [f"skipped 2 unreadable line(s) of {run / 'metrics.jsonl'}: line 1, 4"]
    assert str(run / "metrics.jsonl") in caplog.text


def test_torn_last_line_is_named_as_such(tmp_path: Path) -> None:
    run = weight_run(tmp_path, [0.1, 0.2])
    with open(run / "metrics.jsonl", "a") as handle:
        handle.write('{"step": 3, "rew')
    (note,) = run_series(run).notes
    assert "line 3 (a torn last line: the run may still be writing)" in note


def test_unknown_directory_lists_what_each_kind_expects(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ConfigError) as error:
        detect_kind(tmp_path)
    message = str(error.value)
    assert "it holds: notes.txt, sub/" in message
    expected = [
        "language: run.json",
        "weight: config.json with 'algorithm'",
        "parl: parl_curves.json",
        "reward: metadata.json",
        "reward-run: metrics/",
    ]
    assert all(line in message for line in expected), message
    with pytest.raises(ConfigError, match="No run directory"):
        detect_kind(tmp_path / "missing")


def test_run_ids_resolve_under_a_runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = language_run(tmp_path / "exp", [[1.0]], run_id="my-run")
    assert resolve_run(run) == run
    assert resolve_run("my-run", tmp_path / "exp") == tmp_path / "exp" / "my-run"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "magrpo").mkdir(parents=True)
    assert resolve_run("magrpo") == Path("runs/magrpo")  # default parents: experiments/, runs/
    with pytest.raises(ConfigError, match=r"No run 'nope'.*\(runs there: my-run\)"):
        resolve_run("nope", tmp_path / "exp")


def test_a_corrupt_json_file_is_skipped_and_named(tmp_path: Path) -> None:
    session = p2p_session(tmp_path / "s", [0.3, 0.8, 0.9])
    broken = session.iteration_records()[0].judgment_path
    broken.write_text('{"intent_score": 0.')
    plot = run_series(session.path)
    assert plot.series("Judge score per iteration")["intent score"].x == [2, 3]
    (note,) = plot.notes
    assert note.startswith(f"skipped {broken}: not readable JSON")


def test_a_pool_run_shows_every_candidate_beside_the_best(tmp_path: Path) -> None:
    run = tmp_path / "pool"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"run_id": "pool", "status": "completed"}))
    metrics = [
        {"iteration": 0, "avg_reward": 0.3, "validation_score": 0.6,
         "candidate_scores": {"1": 0.6, "2": 0.4}},
        {"iteration": 1, "avg_reward": 0.5, "validation_score": 0.8,
         "candidate_scores": {"3": 0.8, "4": None, "5": 0.5}},
    ]  # fmt: skip
    (run / "metrics.json").write_text(json.dumps(metrics))
    panel = run_series(run).series("Validation score")
    assert panel["validation"].y == [0.6, 0.8]
    points = panel["candidates proposed"]
    assert points.style == "markers"
    assert list(zip(points.x, points.y, strict=True)) == [
        (1.0, 0.6), (1.0, 0.4), (2.0, 0.8), (2.0, 0.5)
    ]  # fmt: skip
