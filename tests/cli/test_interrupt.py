"""Ctrl-C ends a long command gracefully: a real SIGINT to a real `python -m langmarl`
process leaves the run `stopped`, exits 130 with one line saying so, and never aborts
("terminate called without an active exception", exit 134)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from langmarl.cli import (
    CANCELLED_EXIT_CODE,
    INTERRUPT_MESSAGES,
    INTERRUPTED_EXIT_CODE,
    interrupt_message,
)
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import ctrl_c_reaches_python
from langmarl.testing.roles import role_responder

REPLY = role_responder(
    {
        "critic": '{"researcher": "quote the fact", "answerer": "one word"}',
        "rewrite": "Quote the fact, then answer in one word.",
        "gradient": "Quote the fact, then answer in one word.",
        "aggregate": "Quote the fact, then answer in one word.",
        "actor": "Answer: Paris",
    }
)


def _language_config(tmp_path: Path, llm: dict[str, object]) -> Path:
    config = tmp_path / "c.json"
    config.write_text(
        json.dumps(
            {
                "env": "language",
                "exp_name": "interrupted",
                "num_iterations": 20,
                "trajectories_per_iteration": 3,
                "llm": llm,
                "seed": 0,
                "runs_dir": str(tmp_path / "runs"),
                "checkpoint_dir": str(tmp_path / "ck"),
            }
        )
    )
    return config


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="100")
    return subprocess.Popen(
        [sys.executable, "-m", "langmarl", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=ctrl_c_reaches_python,
    )  # fmt: skip


def _wait_for(stream: IO[str], text: str, timeout: float) -> list[str]:
    """Lines of ``stream`` up to the first that contains ``text``."""
    deadline, lines = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"{text!r} never appeared; got {lines!r}")


def _interrupt(process: subprocess.Popen[str]) -> str:
    """Send Ctrl-C; the process's stderr once it has ended."""
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=60)[1]


def _assert_stopped(process: subprocess.Popen[str], err: str, run_dir: Path) -> None:
    assert process.returncode == INTERRUPTED_EXIT_CODE, err
    assert "terminate called" not in err and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == INTERRUPT_MESSAGES[INTERRUPTED_EXIT_CODE]
    info = json.loads((run_dir / "run.json").read_text())
    assert (info["status"], info["error"]) == ("stopped", "interrupted")


def test_ctrl_c_stops_a_language_run_against_a_slow_endpoint(tmp_path: Path) -> None:
    with OpenAIStub(latency=0.5, responder=REPLY) as stub:
        process = _start(["train", str(_language_config(tmp_path, stub.llm_config()))])
        assert process.stdout is not None
        _wait_for(process.stdout, "Run interrupted in", timeout=60)
        while sum(stub.hits.values()) < 2:  # inside the first iteration's LLM calls
            time.sleep(0.05)
        err = _interrupt(process)
    _assert_stopped(process, err, tmp_path / "runs" / "interrupted")


@pytest.mark.slow
def test_ctrl_c_while_the_embedded_model_generates_does_not_abort(tmp_path: Path) -> None:
    """The abort came from the model's worker thread being inside torch at shutdown."""
    llm = {"preset": "local", "max_tokens": 64}
    process = _start(["train", str(_language_config(tmp_path, llm))])
    assert process.stderr is not None
    _wait_for(process.stderr, "loaded in", timeout=120)
    time.sleep(0.5)  # the worker is now generating the first episodes
    err = _interrupt(process)
    _assert_stopped(process, err, tmp_path / "runs" / "interrupted")


@pytest.mark.slow
def test_ctrl_c_stops_weight_space_training(tmp_path: Path) -> None:
    output = tmp_path / "magrpo"
    config = Path(__file__).resolve().parents[2] / "configs" / "magrpo" / "quickstart.json"
    process = _start(["magrpo", "train", str(config), "--no-plot", "--set", "heldout=false",
                      "--set", f"runs_dir={tmp_path}", "--set", "run_id=magrpo"])  # fmt: skip
    deadline = time.monotonic() + 120
    while not (output / "run.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    # run.json is written as train() starts (the models are loaded by then): a second on, the
    # first step is generating (waiting 2 s cost the process a second more CPU)
    time.sleep(1.0)
    _assert_stopped(process, _interrupt(process), output)


@pytest.mark.parametrize(
    ("argv", "saves_a_run"),
    [
        (["train", "c.json"], True),
        (["-v", "magrpo", "train", "run.json", "--resume", "latest"], True),
        (["parl", "grpo", "--config", "c.json"], True),
        (["p2p", "resume", "runs/session_1"], True),
        (["p2p", "bench", "cases.csv"], True),
        (["dashboard", "--port", "0"], False),
        (["eval", "runs/quick"], False),
        (["magrpo", "eval", "runs/quick"], False),
        (["serve"], False),
        (["jobs", "submit", "magrpo", "run.json", "--wait"], False),
    ],
)
def test_only_a_command_that_trains_says_a_run_is_saved(argv: list[str], saves_a_run: bool) -> None:
    for code in (INTERRUPTED_EXIT_CODE, CANCELLED_EXIT_CODE):
        said = interrupt_message(code, argv)
        assert ("a run in progress is saved" in said) == saves_a_run, (argv, said)
    assert interrupt_message(CANCELLED_EXIT_CODE, ["dashboard"]) == "cancelled (SIGTERM)"


def test_sigterm_to_the_dashboard_says_only_that_it_was_cancelled(tmp_path: Path) -> None:
    process = _start(["dashboard", "--runs-dir", str(tmp_path), "--port", "0"])
    assert process.stdout is not None
    _wait_for(process.stdout, "Dashboard at", timeout=60)
    process.send_signal(signal.SIGTERM)
    err = process.communicate(timeout=60)[1]
    assert process.returncode == CANCELLED_EXIT_CODE, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "cancelled (SIGTERM)", err
