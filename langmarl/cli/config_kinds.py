"""Which command reads a config file, told from its keys (see :mod:`langmarl.cli.config_commands`
for the four kinds), and the one-line refusal of a config meant for another command."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

ConfigKind = Literal["env", "magrpo", "parl_grpo", "p2p"]


def config_kind(data: dict[str, Any]) -> ConfigKind:
    """Which command's loader reads a config with these top-level keys (module docstring);
    the keys every kind has (``runs_dir``, ``run_id``, ``seed``) tell none apart."""
    from langmarl.config.runs_root import SHARED_KEYS
    from langmarl.magrpo.run import RunConfig
    from langmarl.p2p.session.config import LoopConfig

    keys = data.keys() - set(SHARED_KEYS)
    if isinstance(data.get("env"), str):
        return "env"
    if "grpo" in data or isinstance(data.get("env"), dict):
        return "parl_grpo"
    if keys & RunConfig.model_fields.keys():
        return "magrpo"
    if keys & (LoopConfig.model_fields.keys() | {"seeds"}):
        return "p2p"
    return "env"


RUN_KINDS: dict[ConfigKind, str] = {
    "env": "language", "magrpo": "magrpo", "parl_grpo": "parl_grpo", "p2p": "p2p",
}  # fmt: skip
"""The kind of run each kind of config trains (its command: the kind's spec)."""


def command_for(config: ConfigKind) -> str:
    """``langmarl magrpo train``: the command that trains a config of this kind."""
    from langmarl.store import kinds

    return " ".join(("langmarl", *kinds.get(RUN_KINDS[config]).command))


JOB_CONFIGS: dict[str, ConfigKind] = {
    "language": "env", "parl_language": "env", "magrpo": "magrpo", "iac": "magrpo",
    "maac": "magrpo", "parl_grpo": "parl_grpo", "p2p": "p2p",
}  # fmt: skip
"""The kind of config each kind of job trains from (``langmarl jobs submit KIND CONFIG``)."""


def require_job_config_kind(path: str | Path, job_kind: str) -> None:
    """:func:`require_config_kind` for ``langmarl jobs submit``: the refusal names the job
    kind to submit instead. Kinds without a config kind of their own pass.

    Raises:
        ConfigError: if the file's keys say it trains another kind of job.
    """
    expected = JOB_CONFIGS.get(job_kind)
    found = _kind_of(path)
    if expected is not None and found is not None and found != expected:
        from langmarl.core.errors import ConfigError

        raise ConfigError(
            f"{path} is {_article(found)} {found} config, not one for a {job_kind} job: "
            f"submit it as `langmarl jobs submit {RUN_KINDS[found]} {path}`"
        )


def _kind_of(path: str | Path) -> ConfigKind | None:
    """The kind of the config at ``path``; None when it cannot be read (its command's own
    loader then says why)."""
    from langmarl.config.loading import read_mapping
    from langmarl.core.errors import ConfigError

    try:
        return config_kind(read_mapping(Path(path)))
    except ConfigError:
        return None


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def require_config_kind(path: str | Path, expected: ConfigKind) -> None:
    """Refuse, in one line naming the right command, a config file of another kind than
    ``expected`` (an unreadable file is left to the command's own loader to report).

    Raises:
        ConfigError: if the file's keys say it is for another command.
    """
    from langmarl.core.errors import ConfigError

    found = _kind_of(path)
    if found is not None and found != expected:
        raise ConfigError(
            f"{path} is {_article(found)} {found} config, not one for "
            f"`{command_for(expected)}`: run `{command_for(found)} {path}`"
        )
