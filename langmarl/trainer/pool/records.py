"""``pool.jsonl``: every candidate of a pool-search run, one JSON line each, in order.

A round appends its children after they are scored. A round that was killed may have
appended some; on resume from checkpoint ``i`` the lines of rounds ``>= i`` are dropped
(the file is rewritten atomically) and the round is played again, so the file always
describes the rounds the checkpoints hold.
"""

from __future__ import annotations

from langmarl.core.errors import RunFileError
from langmarl.store import LocalStore
from langmarl.trainer.pool.candidates import Candidate

POOL_FILE = "pool.jsonl"


class PoolLog:
    """The candidates of one run on disk."""

    def __init__(self, store: LocalStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id

    def all(self) -> list[Candidate]:
        """Every recorded candidate.

        Raises:
            RunFileError: naming the file and line when a line is not a candidate.
        """
        candidates = []
        for number, line in enumerate(self.store.read_events(self.run_id, POOL_FILE), 1):
            try:
                candidates.append(Candidate.model_validate(line))
            except ValueError as exc:
                path = self.store.path(self.run_id, POOL_FILE)
                raise RunFileError(
                    path,
                    f"line {number} is not a pool candidate ({str(exc).splitlines()[0]})",
                    "Delete that line and the later ones; training again replays those rounds.",
                ) from None
        return candidates

    def load(self, before: int) -> list[Candidate]:
        """The candidates of rounds before ``before`` (and the starting one); lines of later
        rounds, left by a killed attempt, are removed from the file."""
        everything = self.all()
        kept = [c for c in everything if c.origin == "initial" or c.iteration < before]
        if len(kept) < len(everything):
            lines = "".join(c.model_dump_json() + "\n" for c in kept)
            self.store.write_text(self.run_id, POOL_FILE, lines)
        return kept

    def add(self, candidates: list[Candidate]) -> None:
        """Append ``candidates``."""
        for candidate in candidates:
            self.store.append_event(self.run_id, POOL_FILE, candidate.model_dump(mode="json"))
