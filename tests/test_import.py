"""`import langmarl` is cheap and the documented names resolve lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import langmarl


def printed_by(code: str) -> str:
    """What ``code`` prints in a new interpreter (whose modules are its own imports)."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, langmarl; "
        "heavy = [m for m in ('torch', 'transformers', 'openai', 'fastapi', 'pydantic') "
        "if m in sys.modules]; print(heavy)"
    )
    assert printed_by(code) == "[]"


def test_the_embedded_model_s_commands_do_not_import_the_openai_sdk() -> None:
    """~0.7 CPU-s in every process of a run on the embedded model; only the backend of an
    HTTP endpoint needs it (its errors are looked up only where it was imported)."""
    code = (
        "import sys, langmarl.llm.client, langmarl.llm.local.backend, langmarl.cli.train_commands; "
        "from langmarl.llm.retry import describe_failure, is_retryable; "
        "print(is_retryable(TimeoutError()), describe_failure(TimeoutError())[:9], "
        "'openai' in sys.modules)"
    )
    assert printed_by(code) == "True timed out False"


def test_reference_names_are_importable_from_the_top_level() -> None:
    for name in langmarl.__all__:
        assert getattr(langmarl, name) is not None, name
    from langmarl import BaseConfig, LLMClient, LLMConfig, TokenTracker, load_config

    assert callable(load_config) and LLMClient and LLMConfig and TokenTracker and BaseConfig


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        langmarl.nope  # noqa: B018
