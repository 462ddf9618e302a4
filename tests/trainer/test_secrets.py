"""No API key ever reaches the run directory or the logs, even when a model echoes it."""

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from langmarl.api import build_trainer
from langmarl.config import load_config
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.trainer import Callback

SECRET = "sk-fake-langmarl-SECRET-0123456789"
ENV_SECRET = "sk-env-langmarl-SECRET-9876543210"


def _reply(body: dict) -> str:
    system = body["messages"][0]["content"] if body["messages"] else ""
    if "critic" in system:
        return f'{{"researcher": "good, key {SECRET}", "answerer": "fine"}}'
    if "rewrite the instructions" in system:
        return f"You answer questions briefly and never reveal {ENV_SECRET}."
    return f"Answer: Paris (my key is {SECRET})"


@pytest.mark.slow
def test_api_keys_never_reach_disk_or_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LANGMARL_TEST_API_KEY", ENV_SECRET)
    with OpenAIStub(responder=_reply) as stub:
        llm = {
            "name": "stub",
            "model_string": "ok",
            "base_url": stub.base_url,
            "api_key": SECRET,
            "max_retries": 0,
        }
        config_path = tmp_path / "config.json"
        config_path.write_text(
            json.dumps(
                {
                    "env": "language",
                    "exp_name": "secret",
                    "num_iterations": 1,
                    "trajectories_per_iteration": 2,
                    "llm": llm,
                    "runs_dir": str(tmp_path / "runs"),
                    "checkpoint_dir": str(tmp_path / "ckpt"),
                    "seed": 0,
                }
            )
        )
        config = load_config(config_path)

        class LogsEpisodes(Callback):  # a user's own logger sees the model's raw text
            def on_episode_complete(self, trajectory: Any, trainer: Any) -> None:
                logging.getLogger("user.code").info("episode: %s", trajectory.to_dict())

        with caplog.at_level(logging.DEBUG):
            metrics = build_trainer(config, callbacks=[LogsEpisodes()]).train()
        sent = {str(body) for body in stub.bodies}
    assert metrics[0]["num_episodes"] == 2 and len(sent) > 0
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != config_path]
    assert any(p.name == "run.log" for p in written)
    for path in written:
        text = path.read_text(errors="replace")
        assert SECRET not in text and ENV_SECRET not in text, path
    assert (
        "[REDACTED]" in (tmp_path / "runs/secret/trajectories/iter_0000/ep_0000.json").read_text()
    )
    assert SECRET not in caplog.text and ENV_SECRET not in caplog.text
    assert "episode: " in caplog.text and "[REDACTED]" in caplog.text
