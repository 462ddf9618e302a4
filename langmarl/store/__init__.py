"""Runs on disk: `LocalStore`, `PolicyCheckpoint`, `TrajectoryStore`, `RunLogger`, `RunLock`.

See ``langmarl/store/local.py`` for the layout of a run directory.
"""

from langmarl.store.checkpoint import PolicyCheckpoint
from langmarl.store.local import BaseStore, LocalStore, RunStatus
from langmarl.store.lock import RunLock
from langmarl.store.logger import RunLogger
from langmarl.store.trajectories import TrajectoryStore

__all__ = [
    "BaseStore",
    "LocalStore",
    "PolicyCheckpoint",
    "RunLock",
    "RunLogger",
    "RunStatus",
    "TrajectoryStore",
]
