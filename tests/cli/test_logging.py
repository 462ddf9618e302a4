"""CLI logging: HTTP request lines only with -v, and no environment secret in any log line."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.cli.common import setup_logging
from langmarl.core.secrets import RedactingFilter
from langmarl.testing.openai_stub import OpenAIStub

SECRET = "sk-test-cli-logging-0123456789"


def chat(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``langmarl [flags] chat`` against a real HTTP server (the request goes through httpx)."""
    with OpenAIStub(responder=lambda body: "Paris") as stub:
        llm_file = tmp_path / "llm.json"
        llm_file.write_text(json.dumps(stub.llm_config()))
        command = [
            sys.executable,
            "-m",
            "langmarl.cli",
            *flags,
            "chat",
            "hi",
            "--llm",
            str(llm_file),
        ]
        env = {**os.environ, "LANGMARL_TEST_API_KEY": SECRET}
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Paris" in done.stdout
    return done


def test_http_requests_are_logged_only_with_verbose(tmp_path: Path) -> None:
    assert "HTTP Request:" not in chat(tmp_path).stderr
    assert "HTTP Request: POST" in chat(tmp_path, "-v").stderr


@pytest.fixture
def root_handler():
    """A handler on the root logger, as ``basicConfig`` would add; afterwards it is removed
    and so is every filter the test put on pytest's own handlers."""
    handler = logging.StreamHandler()
    root = logging.getLogger()
    before = {h: list(h.filters) for h in root.handlers}
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)
    for other, filters in before.items():
        other.filters[:] = filters
    for name in ("httpx", "httpx2", "openai"):
        logging.getLogger(name).setLevel(logging.NOTSET)


def test_setup_installs_one_redacting_filter_per_handler(
    root_handler: logging.Handler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMARL_TEST_API_KEY", SECRET)
    setup_logging(verbose=False)
    setup_logging(verbose=False)  # every CLI invocation calls it again
    filters = [f for f in root_handler.filters if isinstance(f, RedactingFilter)]
    assert len(filters) == 1 and SECRET in filters[0].redact.secrets
    assert logging.getLogger("httpx2").level == logging.WARNING
    setup_logging(verbose=True)
    assert logging.getLogger("httpx2").level == logging.NOTSET


def test_error_messages_are_scrubbed(tmp_path: Path) -> None:
    """A LangmarlError whose message holds an environment secret is printed scrubbed."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"env": "language", "llm": SECRET}))  # an unknown preset
    env = {**os.environ, "LANGMARL_TEST_API_KEY": SECRET}
    command = [sys.executable, "-m", "langmarl.cli", "config", "show", str(config)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert SECRET not in done.stderr and "[REDACTED]" in done.stderr


def test_log_lines_go_where_stderr_is_now_and_wrap_at_spaces_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 42, item 5: INFO lines tore the progress bars because the handler held the
    stderr of start-up, which a live display cannot redirect; and ran past 80 columns."""
    import io

    from rich.console import Console

    from langmarl.cli import common

    text = " ".join(["word"] * 40)
    record = logging.LogRecord("langmarl.x", logging.INFO, __file__, 1, text, None, None)
    later = io.StringIO()  # what a live display puts in sys.stderr's place
    monkeypatch.setattr(sys, "stderr", later)
    monkeypatch.setattr(common, "err_console", Console(stderr=True, width=80))
    handler = common.ConsoleLogHandler()
    handler.emit(record)
    assert later.getvalue() == text + "\n"  # not a terminal: one line, whole
    terminal = io.StringIO()
    monkeypatch.setattr(
        common, "err_console", Console(file=terminal, width=80, force_terminal=True)
    )
    handler.emit(record)
    lines = terminal.getvalue().splitlines()
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines), lines
    assert all(set(line.split()) == {"word"} for line in lines)  # broken between words only
