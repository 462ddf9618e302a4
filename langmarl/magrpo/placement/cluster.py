"""Joining the Ray cluster a run asks for, and the checks that make bad input one line.

Each check runs before any actor starts: ``ray_address`` is probed with a TCP connection
(5 s) before ``ray.init``, which would otherwise retry for about a minute; the GPUs and CPUs
the agents ask for are compared with the cluster's totals, as a placement group that cannot
fit waits forever instead of failing (with ``ray_address`` null, with this machine's first,
so a run that cannot fit does not start a local Ray to learn it).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Mapping
from typing import Any

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.core.ray_start import init_ray
from langmarl.magrpo.config import TrainerConfig

PROBE_TIMEOUT_S = 5.0
"""How long :func:`check_reachable` waits for the head's port to answer."""
LOCAL_ADDRESSES = frozenset({"auto", "local"})
"""``ray_address`` values ``ray.init`` resolves itself (no host to probe)."""


def ray_module() -> Any:
    """``import ray``, or the error that names the extra."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "placement='ray'") from None
    return ray


def check_reachable(address: str) -> None:
    """Probe ``host:port`` (``ray://`` client addresses included) with a TCP connection.

    Raises:
        ConfigError: if the address has no port or nothing answers there.
    """
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"ray_address {address!r} is not host:port: give the head's address (e.g. "
            "'10.0.0.5:6379'), 'auto' for the cluster started on this machine, or null to "
            "start a local Ray"
        )
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"ray_address {address!r} is unreachable ({reason}): start the cluster's head "
            f"there (ray start --head --port {port}), fix ray_address, or leave it null to "
            "start a local Ray"
        ) from None


def connect(config: TrainerConfig) -> bool:
    """Join ``config.ray_address`` (or start a local Ray when it is None), unless this
    process already joined a cluster. Returns whether this call started the connection
    (then the run shuts it down when it ends).

    Raises:
        ConfigError: for an unreachable address, or one where no Ray cluster answers.
    """
    ray = ray_module()
    address = config.ray_address
    if address is not None and address not in LOCAL_ADDRESSES:
        check_reachable(address)
    if ray.is_initialized():
        _check_joined(address, ray.get_runtime_context().gcs_address)
        return False
    if address is None:  # the local Ray would get this machine's CPUs and GPUs: check first
        check_resources(config, this_machine(), where="this machine (ray_address is null)")
    on_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        # null: a new local Ray ("local"; its workers at niceness 0, core.ray_start), never a
        # cluster ray.init would find by itself (RAY_ADDRESS, or the file a `ray start` on
        # this machine left in /tmp/ray)
        init_ray(ray, address or "local", include_dashboard=False, logging_level="WARNING")
    except ConnectionError as exc:
        raise ConfigError(
            f"ray_address {address!r}: no Ray cluster answers there ({exc}): start one "
            "(ray start --head) or leave ray_address null to start a local Ray"
        ) from None
    if callable(on_sigterm) and threading.current_thread() is threading.main_thread():
        # ray.init replaces SIGTERM's handler with a sys.exit; the one installed before
        # (the langmarl command's: a cancelled job ends its run "cancelled") stays.
        signal.signal(signal.SIGTERM, on_sigterm)
    return True


def _check_joined(address: str | None, joined: str) -> None:
    """Refuse a ``ray_address`` whose port is not that of the cluster this process joined
    (``ray.init`` once per process: the run cannot reach another cluster)."""
    if address is None or address in LOCAL_ADDRESSES:
        return
    if address.rpartition(":")[2] != joined.rpartition(":")[2]:
        raise ConfigError(
            f"ray_address {address!r}, but this process already joined the Ray cluster at "
            f"{joined!r}: set ray_address to it (or null), or call ray.shutdown() first"
        )


def this_machine() -> dict[str, float]:
    """At most what a local Ray started here gets: the CPUs (Ray may count fewer, under a
    cgroup quota) and the CUDA devices torch sees (``CUDA_VISIBLE_DEVICES`` applied)."""

    import torch

    return {"CPU": float(os.cpu_count() or 1), "GPU": float(torch.cuda.device_count())}


def check_resources(
    config: TrainerConfig, cluster: Mapping[str, float], where: str = "the Ray cluster"
) -> None:
    """Check that the agents' actors fit the cluster's totals (``ray.cluster_resources()``,
    or :func:`this_machine` before a local Ray starts).

    With ``rollout_placement="apart"`` each agent's rollout actor counts too.

    Raises:
        ConfigError: if the agents ask for more GPUs or CPUs than ``where`` has.
    """
    agents, apart = config.num_agents, config.rollout_placement == "apart"
    for what, fields in (
        ("GPU", (("agent_num_gpus", config.agent_num_gpus),
                 ("rollout_num_gpus", config.rollout_num_gpus))),
        ("CPU", (("agent_num_cpus", config.agent_num_cpus),
                 ("rollout_num_cpus", config.rollout_num_cpus))),
    ):  # fmt: skip
        used = fields if apart else fields[:1]  # the rollout actors, one per agent, if apart
        asked = agents * sum(each for _, each in used)
        present = float(cluster.get(what, 0.0))
        if asked > present:
            named = " and ".join(f"{field}={each:g}" for field, each in used)
            lower = " or ".join(field for field, _ in used)
            raise ConfigError(
                f"{agents} agents with {named} ask for {asked:g} {what}s but {where} "
                f"has {present:g}: lower {lower} or join a larger cluster (ray_address)"
            )
