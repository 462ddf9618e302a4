"""Resume a Prompt2Policy session that was killed, stopped (Ctrl-C) or failed.

The session directory holds all the loop needs (see :mod:`langmarl.p2p.session.records`):
``run.json`` the intent and the :class:`LoopConfig`, ``loop_history.json`` the criteria,
the judged iterations and the best so far, ``judge_fn.py`` the code judge, and each listed
iteration its inputs (reward code, reward spec, train config) and, once judged,
``outcome.json``. :func:`resume_session` rebuilds the :class:`~langmarl.p2p.session.loop.Session`
from them and runs the loop on, so:

* after iteration ``k`` was judged, the session revises it (or uses the revision already
  listed) and trains iteration ``k+1`` with the reward and config the reviser produced;
* an iteration listed but not judged (killed mid-training, or training failed) is trained
  again from its inputs: its other files are removed, metrics lines after ``k`` are dropped
  (:meth:`~langmarl.store.run.RunDir.rewind`), so no iteration is counted twice;
* iteration directories the history never listed are removed (a kill while writing them).

A session that ended ``passed`` or ``max_iterations`` is refused: it is complete.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError, RunFileError
from langmarl.core.validation import validate_model
from langmarl.p2p.design import checks
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.reward.validation import ValidationResult
from langmarl.p2p.session.config import LoopConfig
from langmarl.p2p.session.contracts import LoopResult
from langmarl.p2p.session.loop import (
    Session,
    Trainer,
    default_trainer,
    default_validator,
    execute,
    session_clients,
    track_best,
)
from langmarl.p2p.session.records import SessionRecord
from langmarl.store import kinds
from langmarl.store.run import RUN_FILE, RunDir

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

FAILED_OUTCOMES = ("error", "cancelled", "invalid_code")
"""Session statuses whose error is the failure being resumed from (cleared on resume)."""


def resume_session(
    session_dir: str | Path,
    *,
    llm: LLMClient | None = None,
    vlm: LLMClient | None = None,
    validator: Callable[[str, str], ValidationResult] | None = None,
    trainer: Trainer | None = None,
) -> LoopResult:
    """Continue the session in ``session_dir`` where its files say it stopped.

    Args:
        session_dir: A directory ``langmarl p2p run`` (or :func:`run_loop`) wrote.
        llm, vlm, validator, trainer: As for :func:`~langmarl.p2p.session.loop.run_loop`; the
            intent and the loop settings come from the session itself.

    Returns:
        The session's result, its iterations from the first one.

    Raises:
        ConfigError: if the directory is not a session, or the session is complete.
        RunFileError: if a file the resume needs is corrupt or missing.
        RunLockedError: if another process runs the session.
    """
    path = Path(session_dir)
    info = _session_info(path)
    config = _loop_config(path, info)
    spec = get_env_spec(config.env_id)
    llm, redact = session_clients(llm, vlm)
    record = SessionRecord(path, redact)
    with record.run.lock():
        finished = record.run.record()
        if finished.status == "completed":
            outcome = getattr(finished, "outcome", None) or "completed"
            raise ConfigError(
                f"session {path} already ended ({outcome}): there is nothing to resume; "
                "start a new session with `langmarl p2p run`"
            )
        result, prepared = _restore(record, str(info["prompt"]), config)
        record.start(result.prompt, config.env_id, config.model_dump())
        judge_fn = record.path / "judge_fn.py"  # written by the preparation, if it finished
        session = Session(
            result.prompt, config, spec, llm, vlm, record, result,
            validator or default_validator, trainer or default_trainer(config),
            prepared=prepared,
            judge_code=judge_fn.read_text(encoding="utf-8")
            if prepared and judge_fn.is_file()
            else None,
            check=_session_check(record, config),
        )  # fmt: skip
        return execute(session)


def _session_check(record: SessionRecord, config: LoopConfig) -> str | None:
    """The session's copy of its check (what it started with), else the file its config
    names (a session killed before the copy was written)."""
    copy = record.path / checks.SESSION_COPY
    if copy.is_file():
        return copy.read_text(encoding="utf-8")
    if config.check is None:
        return None
    source = checks.read_check(config.check)
    record.redact.write_text(copy, source)
    return source


def _session_info(path: Path) -> dict[str, Any]:
    """``run.json`` of the session in ``path``.

    Raises:
        ConfigError: if ``path`` holds no Prompt2Policy session.
        RunFileError: if its ``run.json`` is corrupt or lacks the intent.
    """
    info = RunDir(path).read() if path.is_dir() else None
    if info is None or getattr(kinds.find(info.get("kind")), "name", None) != "p2p":
        raise ConfigError(
            f"{path} is not a Prompt2Policy session (no {RUN_FILE} of kind p2p): "
            "pass a directory `langmarl p2p run` wrote, e.g. runs/session_<time>_<id>"
        )
    if not isinstance(info.get("prompt"), str):
        raise RunFileError(
            path / RUN_FILE,
            "has no prompt (the session's intent)",
            "Start a new session with `langmarl p2p run`: this one cannot be resumed.",
        )
    return info


def _loop_config(path: Path, info: dict[str, Any]) -> LoopConfig:
    return validate_model(LoopConfig, info.get("config") or {}, str(path / RUN_FILE))


def _restore(record: SessionRecord, intent: str, config: LoopConfig) -> tuple[LoopResult, bool]:
    """The history to continue from, and whether the session was prepared.

    The last listed iteration counts as judged only with its ``outcome.json``; one that is
    not is cleared to be trained again, and metrics lines after the judged ones dropped.
    """
    history = record.read_history()
    if history is None:  # killed before the criteria were saved: start over
        result = LoopResult(
            session_id=record.session_id, prompt=intent, env_id=config.env_id, status="running"
        )
    else:
        result = LoopResult.model_validate(history)
    if result.status in FAILED_OUTCOMES:
        result.error = None
    result.status = "running"
    steps = result.iterations
    if steps and record.iteration(steps[-1].iteration).read_outcome() is None:
        last = steps[-1]
        last.intent_score = last.judge_score = last.interval = None
        last.mean_return = last.error = None
        last.judged = False
    judged = [s for s in steps if s.judged or s.intent_score is not None]
    last_judged = judged[-1].iteration if judged else 0
    record.run.rewind(last_judged)
    listed = {s.iteration_id for s in steps}
    for it in record.iteration_records():
        if it.iteration_id not in listed:
            shutil.rmtree(it.path)
    track_best(result)
    record.run.update(iterations=last_judged, best_score=result.best_score)
    return result, history is not None
