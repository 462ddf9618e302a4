"""The one redaction path: text, JSON files and log records."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmarl.core.secrets import (
    REDACTED,
    RedactingFilter,
    Redactor,
    environment_secrets,
    install_log_redaction,
    redacting_logs,
)

SECRET = "sk-test-core-0123456789"


def test_environment_secrets_are_picked_by_name() -> None:
    env = {"OPENAI_API_KEY": SECRET, "HF_TOKEN": "hf_abcdefgh", "HOME": "/home/someone", "X": "1"}
    assert environment_secrets(env) == {SECRET, "hf_abcdefgh"}


def test_json_files_are_scrubbed_even_where_json_escapes_the_secret(tmp_path: Path) -> None:
    quoted = 'pass"word\\with-quotes'
    redact = Redactor([SECRET, quoted, "short"])
    redact.write_json(
        tmp_path / "a.json", {"reply": f"key {SECRET}", "other": quoted, "s": "short"}
    )
    text = (tmp_path / "a.json").read_text()
    assert SECRET not in text and json.dumps(quoted) not in text
    assert json.loads(text) == {"reply": f"key {REDACTED}", "other": REDACTED, "s": "short"}
    redact.write_text(tmp_path / "b.py", f"# {SECRET}\n")
    assert (tmp_path / "b.py").read_text() == f"# {REDACTED}\n"


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO, logging.Handler]]:
    """A logger of its own with one handler printing to a buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("langmarl.tests.secrets")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, buffer, handler
    logger.removeHandler(handler)


def test_filter_scrubs_arguments_and_tracebacks(captured) -> None:
    logger, buffer, handler = captured
    handler.addFilter(RedactingFilter(Redactor([SECRET])))
    logger.info("model said %s", f"my key is {SECRET}")
    logger.info("no secret here: %d%%", 50)
    try:
        raise ValueError(f"401 for {SECRET}")
    except ValueError:
        logger.exception("call failed")
    text = buffer.getvalue()
    assert SECRET not in text
    assert f"model said my key is {REDACTED}" in text
    assert "no secret here: 50%" in text
    assert f"ValueError: 401 for {REDACTED}" in text and "Traceback" in text


def test_run_filters_last_only_as_long_as_the_run(captured) -> None:
    logger, buffer, handler = captured
    with redacting_logs(Redactor([SECRET]), logger):
        logger.warning("inside %s", SECRET)
    logger.warning("outside %s", SECRET)
    lines = buffer.getvalue().splitlines()
    assert lines == [f"WARNING inside {REDACTED}", f"WARNING outside {SECRET}"]
    assert handler.filters == []


def test_installing_the_same_secrets_twice_adds_one_filter(captured) -> None:
    logger, buffer, handler = captured
    install_log_redaction(Redactor([SECRET]), logger)
    install_log_redaction(Redactor([SECRET]), logger)
    install_log_redaction(Redactor([SECRET, "another-secret-value"]), logger)
    assert len(handler.filters) == 2
    logger.info("%s and another-secret-value", SECRET)
    assert buffer.getvalue() == f"INFO {REDACTED} and {REDACTED}\n"
