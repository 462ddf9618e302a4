"""A model that echoes its API key leaves no trace of it in a session's files or logs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.p2p.reward.validation import ValidationResult, check_static
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.openai_stub import OpenAIStub

from .conftest import PENDULUM_REWARD, FakeTrainer

ENV_SECRET = "sk-test-env-0123456789abcdef"
CONFIG_SECRET = "sk-test-config-fedcba9876543210"
SECRETS = (ENV_SECRET, CONFIG_SECRET)


def echoing_reply(system: str) -> str:
    """Every agent of the loop answers, and mentions a key on the way."""
    reward = f"```python\n# key {CONFIG_SECRET}\n{PENDULUM_REWARD.strip()}\n```"
    if "success criteria" in system:
        return f"- the pole stays up ({ENV_SECRET})"
    if "judge_fn(trajectory" in system:
        return f"I will not write code; my key is {CONFIG_SECRET}"  # no code: logged at INFO
    if "You write reward functions" in system:
        return f"No code today, but here is {ENV_SECRET}"  # no code: logged at INFO
    if "SCORE" in system:
        return f"SCORE: 0.2\nREASON: the pole fell; I used {ENV_SECRET}"
    if "improve" in system:
        return reward + '\n```json\n{"learning_rate": 1e-3}\n```'
    return reward  # the fix after the failed first authoring


def validator(source: str, env_id: str) -> ValidationResult:
    result = check_static(source)
    if result.ok:
        result.terms, result.latex = {"upright": f"up ({CONFIG_SECRET})"}, "r"
    return result


def assert_no_secret_in(directory: Path) -> list[Path]:
    files = [p for p in directory.rglob("*") if p.is_file()]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for secret in SECRETS:
            assert secret not in text, f"{secret} in {path}"
    return files


def test_echoed_keys_reach_no_file_and_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    llm = ScriptedLLM(
        lambda request: echoing_reply(str(request.messages[0]["content"])),
        config=scripted_config(api_key=CONFIG_SECRET),
    )
    config = LoopConfig(
        env_id="InvertedPendulum-v5", max_iterations=2, review=False, max_fix_attempts=1
    )
    with caplog.at_level(logging.INFO):
        result = run_loop(
            "balance", config, llm=llm, runs_dir=tmp_path, validator=validator,
            trainer=FakeTrainer(),
        )  # fmt: skip

    assert result.status == "max_iterations"
    session = tmp_path / result.session_id
    files = assert_no_secret_in(session)
    names = {p.name for p in files}
    assert {"judgment.json", "reward_fn.py", "reward_fn_revised.py", "loop_history.json"} <= names
    judgment = (session / "iter_1" / "judgment.json").read_text()
    assert "[REDACTED]" in judgment and "the pole fell" in judgment  # the rest is kept
    assert "[REDACTED]" in (session / "iter_1" / "reward_fn.py").read_text()
    assert "[REDACTED]" in (session / "loop_history.json").read_text()
    for secret in SECRETS:
        assert secret not in caplog.text
        assert secret not in result.model_dump_json()
    assert "reward author gave no code" in caplog.text and "[REDACTED]" in caplog.text


def test_session_log_filters_are_removed_afterwards(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = [list(h.filters) for h in root.handlers]
    llm = ScriptedLLM(lambda request: echoing_reply(str(request.messages[0]["content"])))
    config = LoopConfig(env_id="InvertedPendulum-v5", max_iterations=1, code_judge=False)
    run_loop("balance", config, llm=llm, runs_dir=tmp_path, validator=validator,
             trainer=FakeTrainer())  # fmt: skip
    assert [list(h.filters) for h in root.handlers] == before


def test_cli_session_keeps_keys_out_of_output_and_files(tmp_path: Path) -> None:
    """A real ``langmarl p2p run`` against an HTTP server whose model echoes both keys.

    No reward validates (fallback "none"), so the session ends before any training: the
    keys pass through the criteria, the judge author, the reward author, the INFO logs and
    the session files.
    """

    def reply(body: dict) -> str:
        return echoing_reply(str(body["messages"][0]["content"]))

    with OpenAIStub(responder=reply) as stub:
        llm_file = tmp_path / "llm.json"
        llm_file.write_text(json.dumps({**stub.llm_config(), "api_key": CONFIG_SECRET}))
        command = [
            sys.executable, "-m", "langmarl.cli", "p2p", "run", "balance",
            "--env", "InvertedPendulum-v5", "--llm", str(llm_file),
            "--runs-dir", str(tmp_path / "runs"),
            "--set", "fallback=none", "--set", "max_fix_attempts=0", "--set", "review=false",
        ]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": ENV_SECRET}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "invalid_code" in done.stdout
    assert "reward author gave no code" in done.stderr and "[REDACTED]" in done.stderr
    for secret in SECRETS:
        assert secret not in output
    names = {p.name for p in assert_no_secret_in(tmp_path / "runs")}
    assert {"run.json", "loop_history.json", "metadata.json"} <= names
