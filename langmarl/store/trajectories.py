"""`TrajectoryStore`: one JSON file per episode, grouped by iteration."""

from __future__ import annotations

from langmarl.core.records import Trajectory
from langmarl.store.local import LocalStore, episode_file, iter_dir


class TrajectoryStore:
    """Saves and loads the episodes of a run.

    Args:
        store: The store.
        run_id: The run.
    """

    def __init__(self, store: LocalStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def save(self, iteration: int, episode_id: int, trajectory: Trajectory) -> None:
        """Save one episode (atomically; an existing file is replaced)."""
        path = episode_file("trajectories", iteration, episode_id)
        self.store.write_json(self.run_id, path, trajectory.to_dict())

    def load_one(self, iteration: int, episode_id: int) -> Trajectory | None:
        """One episode, or ``None`` if it was not saved."""
        data = self.store.read_json(
            self.run_id, episode_file("trajectories", iteration, episode_id)
        )
        return None if data is None else Trajectory.from_dict(data)

    def load(self, iteration: int, limit: int | None = None) -> list[Trajectory]:
        """The episodes of ``iteration`` in episode order (at most ``limit``)."""
        folder = iter_dir("trajectories", iteration)
        files = self.store.list_files(self.run_id, folder, "ep_*")
        files = files[:limit] if limit is not None else files
        return [
            Trajectory.from_dict(self.store.read_json(self.run_id, f"{folder}/{p.name}"))
            for p in files
        ]

    def count(self, iteration: int) -> int:
        """How many episodes of ``iteration`` are stored."""
        return len(self.store.list_files(self.run_id, iter_dir("trajectories", iteration), "ep_*"))
