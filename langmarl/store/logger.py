"""`RunLogger`: a run's log, as text (``logs/run.log``) and events (``logs/events.jsonl``).

Messages also go to Python logging (logger ``langmarl.run``), so they reach the console
through whatever handlers the application configured. Secrets are scrubbed on the way.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langmarl.store.local import LocalStore
from langmarl.store.run import EVENTS_FILE

LOG_FILE = "logs/run.log"
_LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40}


class RunLogger:
    """Structured training logger writing to the run directory and to logging.

    Args:
        store: The store.
        run_id: The run.
        level: Least level written to ``run.log`` (``"DEBUG"``…``"ERROR"``).
    """

    def __init__(self, store: LocalStore, run_id: str, level: str = "INFO") -> None:
        self.store = store
        self.run_id = run_id
        self.level = _LEVELS.get(level.upper(), 20)
        self._log = logging.getLogger("langmarl.run")

    def _write(self, level: str, message: str) -> None:
        number = _LEVELS[level]
        self._log.log(number, "[%s] %s", self.run_id, self.store.redact(message))
        if number >= self.level:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            self.store.append_line(self.run_id, LOG_FILE, f"{stamp} {level:<7} {message}")

    def event(self, kind: str, **fields: Any) -> None:
        """Append a structured event to ``logs/events.jsonl``."""
        record = {"time": time.time(), "event": kind, **fields}
        self.store.append_event(self.run_id, EVENTS_FILE, record)

    def info(self, message: str) -> None:
        self._write("INFO", message)

    def debug(self, message: str) -> None:
        self._write("DEBUG", message)

    def warning(self, message: str) -> None:
        self._write("WARNING", message)

    def error(self, message: str) -> None:
        """Log an error and record it as an ``error`` event."""
        self._write("ERROR", message)
        self.event("error", message=message)

    def iteration_start(self, iteration: int, policies: dict[str, str]) -> None:
        self.info(f"iteration {iteration + 1} started ({len(policies)} agents)")
        self.event("iteration_start", iteration=iteration, agents=list(policies))

    def iteration_end(self, iteration: int, stats: dict[str, Any]) -> None:
        self.info(
            f"iteration {iteration + 1} done: avg reward {stats.get('avg_reward', 0.0):.3f}, "
            f"{stats.get('total_tokens', 0)} tokens, ${stats.get('cost_usd', 0.0):.4f}"
        )
        self.event("iteration_end", iteration=iteration, stats=stats)

    def episode_saved(self, iteration: int, episode_id: int, reward: float) -> None:
        self.debug(f"iteration {iteration + 1} episode {episode_id}: reward {reward:.3f}")
        self.event("episode", iteration=iteration, episode_id=episode_id, reward=reward)

    def evaluation_done(
        self, iteration: int, episode_id: int, paradigm: str, response: str
    ) -> None:
        self.debug(f"iteration {iteration + 1} episode {episode_id}: {paradigm} evaluation done")
        self.event(
            "evaluation",
            iteration=iteration,
            episode_id=episode_id,
            paradigm=paradigm,
            chars=len(response),
        )

    def gradient_saved(self, iteration: int, agent_name: str, num_gradients: int) -> None:
        self.debug(f"iteration {iteration + 1}: {num_gradients} gradients for {agent_name}")
        self.event("gradient", iteration=iteration, agent=agent_name, count=num_gradients)
