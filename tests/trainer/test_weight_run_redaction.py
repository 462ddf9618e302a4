"""Every file a weight-space run writes passes the run's redactor: a secret in the
environment reaches none of them (``run.json``'s config and ``eval.jsonl`` included)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.store.run import RunDir

sys.path.insert(0, str(Path(__file__).parents[1] / "parl"))
from tiny_orchestrator import tiny_model

SECRET = "sk-weight-langmarl-SECRET-0123456789"
EVAL_KEY = "eval_return"
"""Eval rows hold only numbers under fixed keys, so the secret planted there is a key."""


def test_a_secret_in_the_environment_reaches_no_file_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMARL_TEST_API_KEY", SECRET)
    monkeypatch.setenv("LANGMARL_TEST_TOKEN", EVAL_KEY)
    run = tmp_path / f"run-{SECRET}"  # the output_dir is in the config
    model, tokenizer = tiny_model()
    config = MAGRPOConfig(
        output_dir=str(run), num_agents=1, num_generations=2, max_new_tokens=4, max_steps=1,
        eval_interval=1, eval_num_samples=1, use_chat_template=False, num_threads=1,
    )  # fmt: skip
    trainer = MAGRPOTrainer(
        [model], lambda samples: [1.0 for _ in samples], config, tokenizers=[tokenizer],
        train_dataset=[{"prompt": "Say hi."}],
    )  # fmt: skip
    trainer.train()
    written = [p for p in run.rglob("*") if p.suffix in (".json", ".jsonl")]
    assert {"eval.jsonl", "run.json", "metrics.jsonl"} <= {p.name for p in written}
    assert not (run / "config.json").exists()  # the config lives in run.json only
    for path in written:
        text = path.read_text()
        assert SECRET not in text and EVAL_KEY not in text, path
    config = RunDir(run).record().config  # what `langmarl plot` reads
    assert config["algorithm"] == "magrpo" and "[REDACTED]" in config["output_dir"]
    [row] = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    assert row["step"] == 1 and "[REDACTED]" in row
