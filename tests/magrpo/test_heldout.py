"""Held-out reports: greedy scores of untrained vs trained agents (tiny random models)."""

import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.heldout import (
    HELDOUT_FILE,
    SHOWN_SAMPLES,
    HeldoutReport,
    heldout_scores,
    read_report,
)
from langmarl.magrpo.trainer import MAGRPOTrainer

HELDOUT = [{"prompt": f"Name thing {i}."} for i in range(7)]


def first_agent_length(samples):
    return [min(len(s.completions[0]) / 20, 1.0) for s in samples]


@pytest.fixture
def trainer(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"),
        num_generations=2,
        max_new_tokens=4,
        max_steps=1,
        use_chat_template=False,
    )
    return MAGRPOTrainer(
        models,
        first_agent_length,
        config,
        tokenizers=tokenizers,
        train_dataset=HELDOUT[:2],
        eval_dataset=HELDOUT,
    )


def test_scores_every_example_greedily_and_keeps_a_few_samples(trainer):
    score = heldout_scores(trainer, HELDOUT, "untrained")
    again = heldout_scores(trainer, HELDOUT, "untrained")
    assert score.returns == again.returns  # greedy: deterministic
    assert len(score.returns) == score.interval.n == len(HELDOUT)
    assert score.interval.mean == pytest.approx(sum(score.returns) / len(HELDOUT))
    assert len(score.samples) == SHOWN_SAMPLES
    sample = score.samples[0]
    assert sample["prompt"] == HELDOUT[0]["prompt"]
    assert len(sample["completions"]) == 2
    assert (
        sample["return"]
        == score.returns[0]
        == first_agent_length.__call__([type("S", (), {"completions": sample["completions"]})()])[0]
    )


def test_report_round_trips_and_states_before_and_after(trainer, tmp_path):
    before = heldout_scores(trainer, HELDOUT, "untrained")
    report = HeldoutReport(task="poster", before=before)
    assert report.headline().startswith("Held-out reward (untrained): ")
    report.after = before.model_copy(update={"label": "step 3"})
    path = report.write(tmp_path)
    assert path == tmp_path / HELDOUT_FILE
    loaded = read_report(tmp_path)
    assert loaded == report
    headline = loaded.headline()
    mean = f"{before.interval.mean:.3f}"
    assert headline.startswith(f"Held-out reward: {mean} → {mean} (n=7 poster examples, greedy")
    assert "95% CI" in headline


def test_empty_heldout_set_and_broken_report_say_what_to_do(trainer, tmp_path):
    with pytest.raises(ConfigError, match="num_eval"):
        heldout_scores(trainer, [], "untrained")
    assert read_report(tmp_path) is None
    (tmp_path / HELDOUT_FILE).write_text('{"task": "poster", "bef', encoding="utf-8")
    with pytest.raises(ConfigError, match="magrpo eval"):
        read_report(tmp_path)


def test_the_kinds_evaluator_takes_only_the_heldout_set(trainer, tmp_path):
    from langmarl.magrpo.heldout import evaluate_weights, heldout_examples
    from langmarl.store.kinds import EvalRequest

    with pytest.raises(ConfigError, match="drop --split"):
        evaluate_weights(tmp_path, EvalRequest(split="train"))
    assert heldout_examples(trainer) == HELDOUT
    trainer.eval_dataset = []
    with pytest.raises(ConfigError, match=r"task\.num_eval >= 1"):
        heldout_examples(trainer)
