"""`LocalStore`: language-space runs as plain directories of JSON, JSONL and text.

A language run follows the run contract of :mod:`langmarl.store.run` (``run.json`` with
``kind`` ``language`` or ``parl_language``, ``metrics.jsonl``, ``logs/events.jsonl``); its
layout (``<runs_dir>/<run_id>/``)::

    run.json                      the RunRecord: kind, status, pid, config, code version,
                                  agent ids, progress, best reward
    config.json                   the config of the newest attempt (no API keys)
    config_history.jsonl          earlier configs, when a resumed attempt changed it
    metrics.jsonl                 one line per finished iteration: ``step`` (= the checkpoint
                                  it produced) and the iteration's stats
    metrics.json                  the same stats as one list (rebuilt from
                                  the checkpoints, which are authoritative); with validated
                                  updates it holds ``accepted_updates`` (policies replaced)
                                  and ``validation_score`` (score of the kept policies)
    policies/iter_NNNN/           checkpoint N = the policies after N iterations
        <agent>.txt               one policy per agent (file names in manifest.json)
        manifest.json             written last: agent ids → files, stats of the iteration
                                  that produced it, policy updates; marks the checkpoint done
    trajectories/iter_NNNN/ep_NNNN.json   one Trajectory per episode
    evaluations/iter_NNNN/ep_NNNN.json    the critic's Evaluation of that episode
    gradients/iter_NNNN/ep_NNNN.json      agent id → Gradient for that episode
    gradients/iter_NNNN/aggregated.json   agent id → aggregated gradient text
    candidates/iter_NNNN.json     agent id → the candidate PolicyUpdates proposed in that
                                  iteration (reused when the iteration is resumed)
    updates.jsonl                 one UpdateDecision per candidate: iteration, agent_id,
                                  candidate, kind (rewrite/append/kept), policy text, score,
                                  incumbent_score, accepted, reason (see
                                  :mod:`langmarl.trainer.validation`)
    validation.json               the run's fixed validation batch: size, hash, task ids
    validation_scores.jsonl       one line per team scored on that batch: batch, team and
                                  epoch keys, score, per-task rewards (a cache: a team is
                                  scored once; failed scorings are not recorded)
    evals/<split>_iter_NNNN.json  held-out evaluations (``langmarl eval``)
    evals/<split>_compare.json    initial vs final (best) policies with 95% intervals
    .lock                         held (flock) by the process training the run
    logs/run.log                  human-readable log
    logs/events.jsonl             structured events (iteration start/end, episodes, errors)

Every file is written with a temp file + rename (JSONL lines are appended and fsynced), and
every text passes the store's :class:`Redactor` first, so secrets never reach disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import langmarl.store.kinds as kinds
from langmarl.core.deprecation import deprecated
from langmarl.core.errors import ConfigError
from langmarl.core.files import (
    append_jsonl,
    atomic_write_text,
    load_json_file,
    read_jsonl,
    read_text_file,
)
from langmarl.core.secrets import Redactor
from langmarl.store.lock import RunLock
from langmarl.store.run import METRICS_FILE, RUN_FILE, RunDir, RunStatus, check_schema, true_status

LEGACY_METRICS_FILE = "metrics.json"
"""The whole list of iteration stats, kept beside ``metrics.jsonl`` for older readers."""
CONFIG_FILE = "config.json"
UPDATES_FILE = "updates.jsonl"
VALIDATION_FILE = "validation.json"
VALIDATION_SCORES_FILE = "validation_scores.jsonl"


def iter_dir(kind: str, iteration: int) -> str:
    """``"<kind>/iter_NNNN"``."""
    return f"{kind}/iter_{iteration:04d}"


def episode_file(kind: str, iteration: int, episode_id: int) -> str:
    """``"<kind>/iter_NNNN/ep_NNNN.json"``."""
    return f"{iter_dir(kind, iteration)}/ep_{episode_id:04d}.json"


_REGENERATED = ("trajectories/", "evaluations/", "gradients/", "candidates/", "evals/")


def recovery_hint(relpath: str) -> str:
    """What to do about an unreadable run file ``relpath`` so the run resumes."""
    if relpath == RUN_FILE:
        return (
            f"Delete {RUN_FILE} to resume: the run's progress is rebuilt from its checkpoints "
            "(the seed is drawn again unless the config sets one)."
        )
    if relpath == "config.json":
        return "Delete it: it is written again from the config you train with."
    if relpath.startswith("policies/"):
        folder = relpath.rsplit("/", 1)[0]
        return (
            f"Delete the folder {folder} to resume from the checkpoint before it "
            "(that iteration is trained again)."
        )
    if relpath.startswith(_REGENERATED):
        return "Delete it: it is generated again when the run resumes."
    return "Restore or delete it, then run again."


class LocalStore:
    """Filesystem-backed storage of training runs.

    Args:
        runs_dir: The runs root, holding one sub-directory per run (a config's
            ``runs_dir``). The reference API's name ``base_dir=`` is still read, with one
            deprecation line.
        secrets: Values scrubbed from everything written (API keys); more can be added via
            ``store.redact.add``.
    """

    def __init__(
        self,
        runs_dir: str | Path | None = None,
        secrets: tuple[str, ...] | set[str] = (),
        *,
        base_dir: str | Path | None = None,
    ) -> None:
        if base_dir is not None:
            deprecated("LocalStore(base_dir=...)", "LocalStore(runs_dir=...)")
            runs_dir = base_dir if runs_dir is None else runs_dir
        if runs_dir is None:
            raise ConfigError("LocalStore needs runs_dir (the directory holding runs), e.g. 'runs'")
        self.runs_dir = Path(runs_dir)
        self.redact = Redactor(secrets)

    # -- primitives -------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        """The directory of run ``run_id``.

        Raises:
            ConfigError: if ``run_id`` would leave ``runs_dir``.
        """
        if not run_id or "/" in run_id or run_id in {".", ".."}:
            raise ConfigError(f"Invalid run id {run_id!r}: use letters, digits, '-', '_', '.'")
        return self.runs_dir / run_id

    def path(self, run_id: str, relpath: str) -> Path:
        """Absolute path of ``relpath`` inside the run."""
        return self.run_dir(run_id) / relpath

    def exists(self, run_id: str, relpath: str = RUN_FILE) -> bool:
        return self.path(run_id, relpath).exists()

    def write_text(self, run_id: str, relpath: str, text: str) -> None:
        """Write ``text`` atomically, secrets scrubbed."""
        atomic_write_text(self.path(run_id, relpath), self.redact(text))

    def read_text(self, run_id: str, relpath: str, default: str | None = None) -> str | None:
        """The file's text; ``default`` if it does not exist.

        Raises:
            RunFileError: if it is not UTF-8 (the message says how to recover).
        """
        path = self.path(run_id, relpath)
        return read_text_file(path, recovery_hint(relpath)) if path.exists() else default

    def write_json(self, run_id: str, relpath: str, data: Any) -> None:
        """Write ``data`` as JSON atomically, secrets scrubbed."""
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
        self.write_text(run_id, relpath, text)
        if relpath == CONFIG_FILE and self.exists(run_id):
            self.update_run(run_id, config=data)  # the run contract: run.json holds it too

    def read_json(self, run_id: str, relpath: str, default: Any = None) -> Any:
        """Read a JSON file; ``default`` if it does not exist.

        Raises:
            RunFileError: if it is corrupt (the message names it and how to recover).
        """
        path = self.path(run_id, relpath)
        return load_json_file(path, recovery_hint(relpath)) if path.exists() else default

    def append_event(self, run_id: str, relpath: str, record: dict[str, Any]) -> None:
        """Append one JSON line (secrets scrubbed)."""
        clean = json.loads(self.redact(json.dumps(record, ensure_ascii=False, default=str)))
        append_jsonl(self.path(run_id, relpath), clean)

    def read_events(self, run_id: str, relpath: str) -> list[Any]:
        return read_jsonl(self.path(run_id, relpath))

    def append_line(self, run_id: str, relpath: str, line: str) -> None:
        """Append one text line (secrets scrubbed)."""
        path = self.path(run_id, relpath)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(self.redact(line.rstrip("\n")) + "\n")

    def list_files(self, run_id: str, reldir: str, pattern: str = "*") -> list[Path]:
        """Files in ``reldir`` matching ``pattern``, sorted (temp files excluded)."""
        folder = self.path(run_id, reldir)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(pattern) if not p.name.startswith("."))

    def lock(self, run_id: str) -> RunLock:
        """The run's lock (not yet taken): hold it while training the run."""
        return RunLock(self.run_dir(run_id))

    # -- run metadata -----------------------------------------------------------------------
    def run(self, run_id: str) -> RunDir:
        """Run ``run_id`` under the run contract, writing through this store's redactor."""
        return RunDir(self.run_dir(run_id), redact=self.redact)

    def start_run(self, run_id: str, kind: str = "language", **fields: Any) -> dict[str, Any]:
        """Create or resume run ``run_id`` as a run of ``kind``: status ``running``, this
        process as owner (:meth:`RunDir.start`, the one writer of a new attempt, which also
        removes the temp files a killed writer left)."""
        self.read_json(run_id, RUN_FILE)  # a corrupt one is refused with how to recover
        return self.run(run_id).start(kind, **fields)

    def update_run(self, run_id: str, **fields: Any) -> dict[str, Any]:
        """Merge ``fields`` into ``run.json``."""
        return self.run(run_id).update(**fields)

    def set_status(self, run_id: str, status: RunStatus, error: str | None = None) -> None:
        """Record the run's status (``running``/``completed``/``failed``/``stopped``;
        ``stopped`` after SIGTERM is recorded as ``cancelled``, see
        :func:`~langmarl.store.run.interrupted_status`)."""
        if status == "running":
            self.update_run(run_id, status=status, error=error)
        else:
            self.run(run_id).finish(status, error)

    def run_info(self, run_id: str) -> dict[str, Any]:
        """``run.json`` with the status made true: a ``running`` run whose process is gone
        (killed, crashed) reads as ``failed`` with ``error`` saying so.

        Raises:
            ConfigError: if there is no such run.
        """
        info = self.read_json(run_id, RUN_FILE)
        if info is None:
            raise ConfigError(f"No run {run_id!r} in {self.runs_dir} (no {RUN_FILE}).")
        info = check_schema(self.path(run_id, RUN_FILE), info)
        return true_status(info, kinds.resume_hint(info.get("kind"), self.run_dir(run_id)))

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run's info (see :meth:`run_info`), newest first."""
        if not self.runs_dir.is_dir():
            return []
        runs = [self.run_info(path.parent.name) for path in self.runs_dir.glob(f"*/{RUN_FILE}")]
        return sorted(runs, key=lambda r: r.get("updated_at", 0), reverse=True)

    # -- per-iteration records --------------------------------------------------------------
    def save_evaluation(
        self, run_id: str, iteration: int, episode_id: int, evaluation: dict[str, Any]
    ) -> None:
        self.write_json(run_id, episode_file("evaluations", iteration, episode_id), evaluation)

    def load_evaluation(self, run_id: str, iteration: int, episode_id: int) -> Any:
        return self.read_json(run_id, episode_file("evaluations", iteration, episode_id))

    def save_gradients(
        self, run_id: str, iteration: int, episode_id: int, gradients: dict[str, Any]
    ) -> None:
        self.write_json(run_id, episode_file("gradients", iteration, episode_id), gradients)

    def load_gradients(self, run_id: str, iteration: int, episode_id: int) -> Any:
        return self.read_json(run_id, episode_file("gradients", iteration, episode_id))

    def save_aggregated(self, run_id: str, iteration: int, aggregated: dict[str, Any]) -> None:
        self.write_json(run_id, f"{iter_dir('gradients', iteration)}/aggregated.json", aggregated)

    def load_aggregated(self, run_id: str, iteration: int) -> Any:
        return self.read_json(run_id, f"{iter_dir('gradients', iteration)}/aggregated.json")

    def save_candidates(self, run_id: str, iteration: int, candidates: dict[str, Any]) -> None:
        """Agent id → candidate policy updates proposed in ``iteration``."""
        self.write_json(run_id, f"candidates/iter_{iteration:04d}.json", candidates)

    def load_candidates(self, run_id: str, iteration: int) -> Any:
        return self.read_json(run_id, f"candidates/iter_{iteration:04d}.json")

    def append_update_decision(self, run_id: str, decision: dict[str, Any]) -> None:
        """Append one update decision to ``updates.jsonl``."""
        self.append_event(run_id, UPDATES_FILE, decision)

    def load_update_decisions(self, run_id: str) -> list[dict[str, Any]]:
        """Every recorded update decision, in the order they were made."""
        return list(self.read_events(run_id, UPDATES_FILE))

    def save_validation_batch(self, run_id: str, batch: dict[str, Any]) -> None:
        self.write_json(run_id, VALIDATION_FILE, batch)

    def append_validation_score(self, run_id: str, record: dict[str, Any]) -> None:
        """Append one team's validation score to ``validation_scores.jsonl``."""
        self.append_event(run_id, VALIDATION_SCORES_FILE, record)

    def load_validation_scores(self, run_id: str) -> list[dict[str, Any]]:
        return list(self.read_events(run_id, VALIDATION_SCORES_FILE))

    def save_metrics(self, run_id: str, metrics: list[dict[str, Any]]) -> None:
        """Write the stats of the finished iterations: ``metrics.jsonl`` (the run contract's
        metrics stream, one line per iteration with ``step`` = the iteration number + 1,
        i.e. the checkpoint it produced) and ``metrics.json`` (the same list)."""
        lines = [
            json.dumps({"step": int(m.get("iteration", i)) + 1, **m}, default=str) + "\n"
            for i, m in enumerate(metrics)
        ]
        self.write_text(run_id, METRICS_FILE, "".join(lines))
        self.write_json(run_id, LEGACY_METRICS_FILE, metrics)

    def load_metrics(self, run_id: str) -> list[dict[str, Any]]:
        """Stats of the finished iterations, in order."""
        return list(self.read_json(run_id, LEGACY_METRICS_FILE, default=[]) or [])


BaseStore = LocalStore
"""The storage interface the trainer uses (the reference's ``BaseStore``)."""
