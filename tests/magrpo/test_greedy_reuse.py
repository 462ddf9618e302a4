"""The greedy rollouts of the held-out examples are decoded once per step: the evaluation at
``eval_interval`` on the last step and the held-out report after training share them, and a
loaded checkpoint decodes afresh (tiny random models)."""

import pytest

import langmarl.magrpo.base as base
from langmarl.core.files import read_jsonl
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.heldout import heldout_scores
from langmarl.magrpo.trainer import MAGRPOTrainer

from .test_heldout import first_agent_length

HELDOUT = [{"prompt": f"Name thing {i}."} for i in range(3)]


def test_the_last_evaluation_and_the_report_decode_once(tiny_models, tmp_path, monkeypatch):
    greedy_passes = []
    real = base.grow_trees

    def counted(*args, **kwargs):
        greedy_passes.extend([kwargs["greedy"]] if kwargs.get("greedy") else [])
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "grow_trees", counted)
    models, tokenizers = tiny_models
    config = MAGRPOConfig(output_dir=str(tmp_path / "run"), num_generations=2, max_new_tokens=4,
                          max_steps=1, eval_interval=1, eval_num_samples=3,
                          use_chat_template=False)  # fmt: skip
    trainer = MAGRPOTrainer(models, first_agent_length, config, tokenizers=tokenizers,
                            train_dataset=HELDOUT[:2], eval_dataset=HELDOUT)  # fmt: skip
    trainer.train()
    assert len(greedy_passes) == 1  # the evaluation at step 1
    [row] = read_jsonl(tmp_path / "run" / base.EVAL_FILE)
    after = heldout_scores(trainer, HELDOUT, "step 1")
    assert len(greedy_passes) == 1  # the same step and examples: the same rollouts
    assert row["eval_return"] == pytest.approx(after.interval.mean)
    heldout_scores(trainer, HELDOUT[:2], "step 1")
    assert len(greedy_passes) == 2  # other examples are decoded
    trainer.load_checkpoint("latest", for_evaluation=True)
    again = heldout_scores(trainer, HELDOUT, "step 1")
    assert len(greedy_passes) == 3  # loaded weights are decoded afresh, whatever their step
    assert again.returns == after.returns  # the checkpoint holds the weights just trained
