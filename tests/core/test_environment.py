"""Environment variables are validated with a message naming the variable and the fix."""

from __future__ import annotations

import subprocess
import sys

import pytest

from langmarl.core.environment import THREADS_ENV_VAR, check_environment, env_positive_int
from langmarl.core.errors import ConfigError


@pytest.mark.parametrize(("raw", "value"), [(None, None), ("", None), ("  ", None), ("3", 3)])
def test_unset_or_empty_is_none_and_a_count_is_read(raw, value, monkeypatch) -> None:
    if raw is None:
        monkeypatch.delenv(THREADS_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(THREADS_ENV_VAR, raw)
    assert env_positive_int(THREADS_ENV_VAR) == value
    check_environment()


@pytest.mark.parametrize("raw", ["two", "0", "-1", "1.5"])
def test_anything_else_names_the_variable_and_the_fix(raw, monkeypatch) -> None:
    monkeypatch.setenv(THREADS_ENV_VAR, raw)
    with pytest.raises(ConfigError, match=f"{THREADS_ENV_VAR}='{raw}' is not a positive integer"):
        check_environment()


def test_the_command_refuses_a_bad_value_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "langmarl", "models"], capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", THREADS_ENV_VAR: "two"}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{THREADS_ENV_VAR}='two' is not a positive integer" in done.stderr
