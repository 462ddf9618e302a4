"""The session analyzer: per-term numbers, plateaus and training dynamics on records built
here, the narrative's fallback, the analysis at the end of a real loop (scripted LLM, fake
trainer) and ``langmarl p2p analyze``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.core.errors import LLMError
from langmarl.llm.types import ChatRequest
from langmarl.p2p.agents.prompts import NARRATIVE_SYSTEM
from langmarl.p2p.analysis.analyze import (
    IterationFacts,
    SessionAnalysis,
    analyze_session,
    find_plateaus,
    term_stats,
)
from langmarl.p2p.analysis.dynamics import run_dynamics, trend
from langmarl.p2p.analysis.narrative import narrate
from langmarl.p2p.session.contracts import (
    EvalCheckpoint,
    IterationAggregation,
    IterationResult,
    LoopResult,
    RewardSpec,
    TrainSummary,
)
from langmarl.p2p.session.records import SessionRecord
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM

from .test_loop import _run, replies

PROSE = "Iteration 1 was best with an intent score of 0.2; train it longer before revising."


def summary(terms: list[dict[str, float]], returns: list[float] | None = None) -> TrainSummary:
    """A run whose evaluation checkpoints had ``terms`` (and ``returns``), in order."""
    returns = returns or [1.0] * len(terms)
    checkpoints = [
        EvalCheckpoint(
            step=100 * (i + 1), mean_return=r, p10_return=r, median_return=r, p90_return=r,
            mean_env_return=r, mean_length=10.0, term_means=t,
        )
        for i, (t, r) in enumerate(zip(terms, returns, strict=True))
    ]  # fmt: skip
    return TrainSummary(
        env_id="InvertedPendulum-v5", seed=1, total_timesteps=100, steps_done=100,
        training_time_s=1.0, steps_per_second=100.0, final_episodic_return=returns[-1],
        final_env_return=returns[-1], term_means=terms[-1], checkpoints=checkpoints,
    )  # fmt: skip


def facts(number: int, run: TrainSummary | None = None, score: float | None = None,
          mean_return: float | None = None, **fields) -> IterationFacts:  # fmt: skip
    step = IterationResult(
        iteration=number,
        iteration_id=f"iter_{number}",
        reward_origin="author",
        intent_score=score,
        mean_return=mean_return,
    )
    return IterationFacts(step=step, summary=run, **fields)  # fmt: skip


def test_term_mean_spread_trend_share_and_dominance() -> None:
    per_iteration = [
        facts(1, summary([{"alive": 0.5, "ctrl": -1.0}, {"alive": 1.0, "ctrl": -1.0}])),
        facts(2, summary([{"alive": 2.0, "ctrl": -0.6}])),
        facts(3, summary([{"alive": 3.0, "ctrl": -0.2}])),
    ]
    alive, ctrl = term_stats(per_iteration, threshold=0.8)
    assert (alive.name, alive.mean, alive.trend) == ("alive", 2.0, "rising")
    assert alive.slope == pytest.approx(1.0)  # per iteration
    first = alive.iterations[0]  # one run: the spread is across its checkpoints
    assert (first.spread, first.spread_over) == (pytest.approx(0.25), "checkpoints")
    assert alive.iterations[1].spread is None and alive.spread == pytest.approx(0.25)
    assert alive.dominant_in == [3]  # 3/3.2 of the magnitude; 2/2.6 is under 0.8
    assert alive.iterations[2].share == pytest.approx(3.0 / 3.2)
    assert ctrl.trend == "rising" and ctrl.dominant_in == [] and ctrl.spread == 0.0
    assert term_stats(per_iteration, threshold=0.95)[0].dominant_in == []
    assert trend([1, 2, 3], [3.0, 2.0, 1.0]) == "falling"
    assert trend([1, 2, 3], [1.0, 1.01, 1.0]) == "flat" and trend([1], [1.0]) == "n/a"


def test_the_spread_of_a_multi_run_iteration_is_across_its_runs() -> None:
    runs = {"seed_1": summary([{"alive": 2.0}]), "seed_2": summary([{"alive": 4.0}])}
    [alive] = term_stats([facts(1, runs["seed_1"], runs=runs)], threshold=0.8)
    assert alive.mean == 3.0 and alive.iterations[0].spread_over == "runs"
    assert alive.spread == pytest.approx(1.0) and alive.trend == "n/a"


def test_plateaus_of_the_intent_score_mean_return_and_eval_returns() -> None:
    flat_evals = summary([{"a": 1.0}] * 3, returns=[50.0, 50.5, 50.2])
    rows = [(1, 0.2, 10.0, None), (2, 0.5, 20.0, None), (3, 0.51, 40.0, flat_evals),
            (4, 0.52, 80.0, None)]  # fmt: skip
    found = find_plateaus([facts(n, run, s, r) for n, s, r, run in rows])
    assert [(p.series, p.iteration) for p in found] == [("intent_score", 4), ("eval_return", 3)]
    assert found[0].message.startswith("plateau: the last 3 values")
    assert find_plateaus([facts(n, None, 0.5, 1.0) for n in (1, 2)]) == []  # 2 values: none


def _rows(returns: list[float], **series: list[float]) -> list[dict]:
    return [
        {"type": "train", "step": 100 * (i + 1), "episodic_return": r,
         **{name: values[i] for name, values in series.items()}}
        for i, r in enumerate(returns)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("returns", "flag"),
    [
        ([10, 20, 30, 40, 50, 60, 70, 80], "still_improving"),
        ([10, 20, 30, 40, 50, 50, 50, 50], "return_stalled"),
        ([10, 20, 30, 40, 40, 30, 20, 10], "return_declining"),
    ],
)
def test_return_slopes_early_and_late(returns: list[float], flag: str) -> None:
    found = run_dynamics(1, "iter_1", _rows([float(r) for r in returns]))
    assert found.flags == [flag] and found.rollouts == 8
    assert found.return_slope_early == pytest.approx(100.0)  # +10 per 100 steps
    assert found.missing == ["entropy_loss", "value_loss", "approx_kl", "clip_fraction"]
    assert "not logged by the trainer" in found.notes[-1]


def test_ppo_losses_when_logged_and_an_env_reward_that_falls() -> None:
    quiet = [0.01] * 7
    rows = _rows(
        [float(r) for r in range(10, 90, 10)],
        env_reward_mean=[1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],
        **{"train/entropy_loss": [-1.4, -1.2, -1.0, -0.8, -0.6, -0.4, -0.3, -0.2],
           "train/value_loss": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
           "train/approx_kl": [*quiet, 0.2], "clip_fraction": [*[0.1] * 7, 0.6]},
    )  # fmt: skip
    found = run_dynamics(2, "iter_2", rows)
    assert found.flags == [
        "still_improving", "env_reward_falling", "entropy_collapse", "value_loss_rising",
        "kl_spikes", "clip_spikes",
    ]  # fmt: skip
    assert found.missing == [] and any("step(s) 800" in n for n in found.notes)
    entropy = next(s for s in found.series if s.name == "entropy")
    assert (entropy.first, entropy.last, entropy.trend) == (1.4, 0.2, "falling")
    short = run_dynamics(3, "iter_3", _rows([1.0, 2.0]))
    assert short.return_slope_early is None and short.flags == []
    assert short.notes[0].startswith("2 rollout(s) with a return: too few")


def test_the_narrative_uses_usable_prose_else_the_rules() -> None:
    from langmarl.p2p.analysis.models import BestIteration, IterationChange

    change = IterationChange(iteration=1, origin="fallback", intent_score=0.2, mean_return=3.0)
    base = {"iterations": [change], "origins": {"fallback": 1},
            "best": BestIteration(iteration=1, intent_score=0.2, mean_return=3.0)}  # fmt: skip
    used = SessionAnalysis(session_id="s", status="max_iterations", **base)
    narrate(used, ScriptedLLM([PROSE]))
    assert (used.narrative, used.narrative_source, used.narrative_note) == (PROSE, "llm", "")
    for reply, why in [
        ("The return reached 457.2 in iteration 2, which is a good result overall.", "457.2"),
        ("```python\ndef reward_fn(obs):\n    return 1\n```", "holds code"),
        ("ok", "characters"),
        ("The 2nd iteration of the 1st iteration of the 2nd iteration " * 4, "repeat"),
        (LLMError("scripted", "m", "down"), "down"),
    ]:
        analysis = SessionAnalysis(session_id="s", status="max_iterations", **base)
        narrate(analysis, ScriptedLLM([reply]))
        assert analysis.narrative_source == "rules" and why in analysis.narrative_note, reply
        assert "the session trained the environment's fallback template" in analysis.narrative


def _save_iteration(record: SessionRecord, number: int, source: str, terms: dict[str, float],
                    runs: dict[str, TrainSummary] | None = None) -> None:  # fmt: skip
    it = record.new_iteration(number)
    it.save_reward_source(source)
    it.save_reward_spec(RewardSpec(terms=dict.fromkeys(terms, "t"), origin="author"))
    it.save_summary(summary([terms]))
    rows = _rows([1.0, 2.0, 3.0, 4.0])
    if runs:
        aggregation = IterationAggregation(runs=runs, mean_return=1.0, best_run="seed_2")
        it.redact.write_json(it.aggregation_path, aggregation.model_dump())
        it = record.iteration(number)
        run = it.runs_dir / "seed_2"
        (run / "metrics").mkdir(parents=True)
        rows = _rows([4.0, 3.0, 2.0, 1.0])
    else:
        run = it.path
        (run / "metrics").mkdir()
    (run / "metrics" / "scalars.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_session_on_disk_is_analysed_and_written(tmp_path: Path) -> None:
    record = SessionRecord(tmp_path / "session")
    _save_iteration(record, 1, "v1", {"alive": 1.0, "ctrl": -0.1})
    runs = {"seed_1": summary([{"alive": 1.0, "upright": 1.0}]),
            "seed_2": summary([{"alive": 3.0, "upright": 1.0}])}  # fmt: skip
    _save_iteration(record, 2, "v2", {"alive": 2.0, "upright": 1.0}, runs)
    steps = [IterationResult(iteration=1, iteration_id="iter_1", reward_origin="author",
                             intent_score=0.4, mean_return=5.0, hp_changes={"n_epochs": 4}),
             IterationResult(iteration=2, iteration_id="iter_2", reward_origin="revision",
                             intent_score=0.3, mean_return=9.0)]  # fmt: skip
    history = LoopResult(session_id="session", prompt="p", env_id="InvertedPendulum-v5",
                         status="max_iterations", iterations=steps)  # fmt: skip
    record.save_history(history.model_dump())
    analysis = analyze_session(record)
    assert SessionAnalysis.model_validate(record.read_analysis()) == analysis
    first, second = analysis.iterations
    assert first.reward_changed is None and second.reward_changed is True
    assert (second.terms_added, second.terms_removed) == (["upright"], ["ctrl"])
    assert second.hp_changes == {"n_epochs": 4.0} and second.score_delta == pytest.approx(-0.1)
    assert (analysis.best.iteration, analysis.best.by_return) == (1, 2)
    assert analysis.origins == {"author": 1, "revision": 1} and analysis.status == "max_iterations"
    alive = next(t for t in analysis.terms if t.name == "alive")
    assert [r.spread_over for r in alive.iterations] == [None, "runs"]
    assert alive.iterations[1].mean == 2.0 and alive.iterations[1].spread == pytest.approx(1.0)
    dynamics = {d.iteration: d for d in analysis.dynamics}
    assert dynamics[2].run == "iter_2/runs/seed_2" and dynamics[2].flags == ["return_declining"]
    assert dynamics[1].flags == ["still_improving"]
    assert analysis.narrative_source == "rules" and "Iteration 1 was best" in analysis.narrative


def _narrating(request: ChatRequest) -> str:
    system = str(request.messages[0]["content"])
    return PROSE if system == NARRATIVE_SYSTEM else replies("SCORE: 0.2")(request)


def test_a_session_ends_with_its_analysis_and_an_analyzed_event(tmp_path: Path) -> None:
    result, _, session = _run(tmp_path, ScriptedLLM(_narrating), max_iterations=2)
    analysis = SessionAnalysis.model_validate(session.read_analysis())
    assert analysis.status == result.status == "max_iterations"
    assert (analysis.narrative, analysis.narrative_source) == (PROSE, "llm")
    assert [c.origin for c in analysis.iterations] == ["author", "revision"]
    assert analysis.iterations[1].hp_changes == {"learning_rate": 3e-3}
    events = RunDir(session.path).events()
    [analyzed] = [e for e in events if e["event"] == "analyzed"]
    assert analyzed["best_iteration"] == 1 and analyzed["narrative_source"] == "llm"
    assert analyzed["error"] is None and events[-1]["event"] == "run_end"


def test_a_failed_analysis_is_recorded_and_leaves_the_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr("langmarl.p2p.analysis.analyze.read_facts", broken)
    result, _, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")))
    assert result.status == "passed" and session.read_status()["status"] == "passed"
    assert session.read_analysis()["error"] == "OSError: disk on fire"
    [analyzed] = [e for e in RunDir(session.path).events() if e["event"] == "analyzed"]
    assert analyzed["error"] == "OSError: disk on fire"
    off, _, quiet = _run(tmp_path / "off", ScriptedLLM(replies("SCORE: 0.9")), analyze=False)
    assert off.status == "passed" and quiet.read_analysis() is None
    assert "analyzed" not in [e["event"] for e in RunDir(quiet.path).events()]


def test_p2p_analyze_prints_the_analysis_in_80_columns(tmp_path: Path) -> None:
    from langmarl.cli import build_app

    _, _, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.2")), max_iterations=2)
    session.analysis_path.unlink()
    out = CliRunner().invoke(build_app(), ["p2p", "analyze", str(session.path)],
                             env={"COLUMNS": "80"})  # fmt: skip
    assert out.exit_code == 0, out.output
    assert max(len(line) for line in out.output.splitlines()) <= 80
    said = " ".join(out.output.split())
    assert "best iter_1 (score 0.20, return 3)" in said and "upright" in said
    assert "narrative (rules):" in said and session.analysis_path.is_file()
    missing = CliRunner().invoke(build_app(), ["p2p", "analyze", str(tmp_path / "none")])
    assert missing.exit_code != 0 and "does not exist" in str(missing.exception)
