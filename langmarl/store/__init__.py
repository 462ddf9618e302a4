"""Runs on disk: the run contract every space follows (`RunDir`, `RunRecord`), the registry
of kinds of run (`RunKindSpec`, :mod:`langmarl.store.kinds`), the language-space store
(`LocalStore`, `PolicyCheckpoint`, `TrajectoryStore`, `RunLogger`), `RunLock`, and the
catalog of runs of every kind (`find_runs`, `describe`).

See ``langmarl/store/run.py`` for what every run directory holds and
``langmarl/store/local.py`` for the rest of a language run's layout.
"""

from langmarl.store.catalog import RunSummary, describe, find_runs
from langmarl.store.checkpoint import PolicyCheckpoint
from langmarl.store.kinds import RunKindSpec
from langmarl.store.local import BaseStore, LocalStore
from langmarl.store.lock import RunLock
from langmarl.store.logger import RunLogger
from langmarl.store.run import RunDir, RunRecord, RunStatus
from langmarl.store.trajectories import TrajectoryStore

__all__ = [
    "BaseStore",
    "LocalStore",
    "PolicyCheckpoint",
    "RunDir",
    "RunKindSpec",
    "RunLock",
    "RunLogger",
    "RunRecord",
    "RunStatus",
    "RunSummary",
    "TrajectoryStore",
    "describe",
    "find_runs",
]
