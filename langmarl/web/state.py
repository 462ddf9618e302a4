"""What every route reads: the runs directory, its index and trash, the jobs backend, and
a ``Request`` → :class:`Dashboard` dependency."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request

from langmarl.core.secrets import REDACTED, Redactor, environment_secrets
from langmarl.jobs.backend import Backend
from langmarl.web.index import RunEntry, RunIndex
from langmarl.web.trash import Trash

SECRET_KEY = re.compile(r"(^|[_-])(api_?key|token|secret|password)$", re.IGNORECASE)
"""Config keys whose values are never shown, whatever they hold (``api_key``, ``hf_token``;
not ``max_tokens`` or ``api_key_env``, which name no secret)."""


@dataclass
class Dashboard:
    """The state of one app (:func:`langmarl.web.app.create_app`)."""

    root: Path
    """The runs directory."""
    backend: Backend | None = None
    """The jobs backend (``langmarl.jobs``), or ``None``: the jobs routes answer 503."""
    poll_interval: float = 0.5
    """Seconds between two looks at a streamed run's files."""
    index: RunIndex = field(init=False)
    trash: Trash = field(init=False)
    redact: Redactor = field(init=False)

    def __post_init__(self) -> None:
        self.index = RunIndex(self.root)
        self.trash = Trash(self.root)
        self.redact = Redactor(environment_secrets())

    def run(self, run_id: str) -> RunEntry:
        """The run ``run_id`` (ApiError 404 if there is none)."""
        return self.index.get(run_id)

    def scrub(self, data: Any) -> Any:
        """``data`` with secret-named keys' values and the environment's secrets replaced."""
        if isinstance(data, dict):
            return {
                k: REDACTED if SECRET_KEY.search(str(k)) and v else self.scrub(v)
                for k, v in data.items()
            }
        if isinstance(data, list):
            return [self.scrub(v) for v in data]
        return self.redact(data) if isinstance(data, str) else data


def dashboard(request: Request) -> Dashboard:
    state: Dashboard = request.app.state.dashboard
    return state


DashboardDep = Annotated[Dashboard, Depends(dashboard)]
"""Route parameter type: ``def route(board: DashboardDep)``."""
