"""What a weight-space run leaves on disk: optimizer state only when asked, at most
``save_total_limit`` checkpoints, one run per directory and one eval row per step."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from langmarl.core.errors import ConfigError
from langmarl.core.files import read_jsonl
from langmarl.magrpo.checkpoint import OPTIMIZER_FILE
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.store.run import RunDir

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}, {"prompt": "Count to 3."}]


def _trainer(tiny_models, run_dir: Path, **overrides) -> MAGRPOTrainer:
    models, tokenizers = tiny_models
    settings = {"output_dir": str(run_dir), "num_generations": 2, "max_new_tokens": 4,
                "max_steps": 2, "use_chat_template": False, **overrides}  # fmt: skip
    return MAGRPOTrainer(
        models, lambda samples: [float(len(s.completions[0])) for s in samples],
        MAGRPOConfig(**settings), tokenizers=tokenizers, train_dataset=DATA,
    )  # fmt: skip


def _checkpoints(run_dir: Path) -> list[str]:
    return sorted(p.name for p in (run_dir / "checkpoints").glob("step-*"))


def test_checkpoints_hold_no_optimizer_state_by_default(tiny_models, tmp_path: Path) -> None:
    _trainer(tiny_models, tmp_path / "run", save_steps=1).train()
    agents = list((tmp_path / "run" / "checkpoints" / "step-000002").glob("agent-*"))
    assert len(agents) == 2
    assert all((a / "model.safetensors").is_file() for a in agents)
    assert not list((tmp_path / "run").rglob(OPTIMIZER_FILE))


def test_save_optimizer_writes_and_restores_the_optimizer(tiny_models, tmp_path: Path) -> None:
    first = _trainer(tiny_models, tmp_path / "run", save_optimizer=True)
    first.train()
    saved = first.agents[0].optimizer.state_dict()["state"]
    assert (tmp_path / "run" / "checkpoints" / "step-000002" / "agent-0" / OPTIMIZER_FILE).is_file()
    again = _trainer(tiny_models, tmp_path / "run", save_optimizer=True)
    again.load_checkpoint("latest")
    restored = again.agents[0].optimizer.state_dict()["state"]
    assert restored and set(restored) == set(saved)
    key = next(iter(saved))
    assert torch.equal(restored[key]["exp_avg"], saved[key]["exp_avg"])


def test_resume_without_optimizer_state_restarts_it_and_says_so(
    tiny_models, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _trainer(tiny_models, tmp_path / "run", max_steps=1).train()
    resumed = _trainer(tiny_models, tmp_path / "run", max_steps=2)
    with caplog.at_level(logging.INFO, logger="langmarl.magrpo.checkpoint"):
        resumed.train(resume_from="latest")
    assert "optimizer restarts" in caplog.text
    assert resumed.step == 2
    assert [m["step"] for m in RunDir(tmp_path / "run").metrics()] == [1, 2]


def test_save_total_limit_keeps_the_newest(tiny_models, tmp_path: Path) -> None:
    trainer = _trainer(tiny_models, tmp_path / "run", max_steps=3, save_steps=1,
                       save_total_limit=2)  # fmt: skip
    trainer.train()
    assert _checkpoints(tmp_path / "run") == ["step-000002", "step-000003"]
    unlimited = _trainer(tiny_models, tmp_path / "all", max_steps=3, save_steps=1)
    unlimited.train()
    assert _checkpoints(tmp_path / "all") == ["step-000001", "step-000002", "step-000003"]


def test_a_new_run_refuses_a_dir_with_metrics_but_no_checkpoint(
    tiny_models, tmp_path: Path
) -> None:
    """A first run killed before its first checkpoint left metrics only; a fresh start there
    must not append to them."""
    run = tmp_path / "run"
    _trainer(tiny_models, run, max_steps=1).train()
    for checkpoint in (run / "checkpoints").glob("step-*"):
        for file in sorted(checkpoint.rglob("*"), reverse=True):
            file.unlink() if file.is_file() else file.rmdir()
        checkpoint.rmdir()
    before = (run / "metrics.jsonl").read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match="already holds a run"):
        _trainer(tiny_models, run).train()
    assert (run / "metrics.jsonl").read_text(encoding="utf-8") == before


def test_resume_at_max_steps_adds_no_second_eval_row(tiny_models, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _trainer(tiny_models, run, eval_interval=2, eval_num_samples=1).train()
    assert [r["step"] for r in read_jsonl(run / "eval.jsonl")] == [2]
    resumed = _trainer(tiny_models, run, eval_interval=2, eval_num_samples=1)
    resumed.train(resume_from="latest")
    resumed.evaluate()  # what `magrpo train --resume latest` does after training
    assert [r["step"] for r in read_jsonl(run / "eval.jsonl")] == [2]
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2]


def test_loading_to_evaluate_leaves_the_optimizers_alone_without_a_word(
    tiny_models, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`magrpo eval` loads the trained agents only to score them: nothing resumes, so no
    INFO line says so (nor that an optimizer restarts)."""
    _trainer(tiny_models, tmp_path / "run", max_steps=1).train()
    scored = _trainer(tiny_models, tmp_path / "run", max_steps=1)
    with caplog.at_level(logging.INFO, logger="langmarl.magrpo"):
        scored.load_checkpoint("latest", for_evaluation=True)
    assert scored.step == 1 and not caplog.records, caplog.text
    assert not scored.agents[0].optimizer.state_dict()["state"]
