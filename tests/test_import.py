"""`import langmarl` is cheap and the documented names resolve lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import langmarl


def test_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, langmarl; "
        "heavy = [m for m in ('torch', 'transformers', 'openai', 'fastapi', 'pydantic') "
        "if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_reference_names_are_importable_from_the_top_level() -> None:
    for name in langmarl.__all__:
        assert getattr(langmarl, name) is not None, name
    from langmarl import BaseConfig, LLMClient, LLMConfig, TokenTracker, load_config

    assert callable(load_config) and LLMClient and LLMConfig and TokenTracker and BaseConfig


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        langmarl.nope  # noqa: B018
