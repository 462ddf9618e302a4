"""``ray.init`` as langmarl calls it: a Ray it starts on this machine runs its workers at the
priority of langmarl's own processes.

Ray starts its workers at niceness 15 (the raylet's ``worker_niceness``), below every
ordinary process: beside other work on the machine an agent actor got 2% of a core (two
SmolLM2 actors still in ``__init__`` after 3.7 min beside four busy processes, where the test
takes 27 s on a quiet machine). A Ray that langmarl starts gives its workers niceness 0, as
``placement="process"`` and local jobs run theirs, unless :data:`NICENESS_ENV_VAR` says
otherwise; a cluster langmarl joins keeps its own setting.

``ray`` is passed in (the callers import it and name their extra when it is missing).
"""

from __future__ import annotations

import os
from typing import Any

NICENESS_ENV_VAR = "RAY_worker_niceness"
"""Ray's own override of its workers' niceness; when set, langmarl leaves it to Ray."""
STARTED_HERE = {"worker_niceness": 0}
"""The ``_system_config`` of a Ray langmarl starts."""


def init_ray(ray: Any, address: str | None, **options: Any) -> None:
    """``ray.init(address=address, **options)``, a Ray this call starts running its workers at
    niceness 0.

    ``"local"`` always starts one. ``None`` joins the cluster ``ray.init`` finds by itself
    (``$RAY_ADDRESS``, or a ``ray start`` on this machine) and starts one only when there is
    none; Ray refuses a ``_system_config`` for a cluster it joins before it connects, so that
    answer means "join it as it is". Any other address is a cluster to join.
    """
    if address not in (None, "local") or NICENESS_ENV_VAR in os.environ:
        ray.init(address=address, **options)
        return
    try:
        ray.init(address=address, _system_config=STARTED_HERE, **options)
    except ValueError as exc:
        if address is not None or "existing cluster" not in str(exc):
            raise
        ray.init(address=address, **options)
