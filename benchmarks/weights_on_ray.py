"""Seconds per MAGRPO step with the agents in process vs as Ray actors (issue 41, item 4).

The weight-space quickstart (``configs/magrpo/quickstart.json``: two SmolLM2-135M agents
with LoRA, the poster task) trains ``--steps`` steps in process, then the same config with
``trainer.placement="ray"`` on a local cluster of two Ray nodes (two raylets on this machine,
``--cpus-per-node`` CPUs each, one agent per node: ``STRICT_SPREAD``), or on ``--address``.
The first step of each is a warm-up and is left out of the means.

What the difference is made of, per step (means over the measured steps):

- compute: the seconds the slowest agent's actor spent in ``generate`` / ``update`` (the
  actors report them, ``AgentWorker.timings``); the agents run at once, so the slowest one
  sets the pace;
- serialisation: pickling the step's payloads (prompts out, token ids and masks back, the
  update's batches and advantages out, statistics back), timed here on the driver with the
  same pickler Ray uses for the arguments;
- transfer and waiting: the rest of the driver's wall time of the rollout and the update
  (sending, scheduling, the object store, and waiting on the slower agent).

    .venv/bin/python benchmarks/weights_on_ray.py --steps 4

``--rollout-apart`` adds a third run: the same cluster with ``rollout_placement="apart"``
(each agent's sampling in a rollout actor of its own, half of each node's CPUs to each
kind), and what crosses per step for it: the trained weights each agent's actor puts into
the object store and its rollout actor loads (the run's ``<agent>/synced_mb``), and the
seconds that sync takes (put, transfer and load, timed in the agent's actor).

``--set trainer.max_new_tokens=4`` (any dotted override, its value read as YAML:
``--set trainer.lora=null`` for full fine-tuning) shrinks the run for a quick check.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_load import LoadSampler, print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "magrpo" / "quickstart.json"


def train(overrides: dict[str, Any], out: Path) -> tuple[list[dict[str, Any]], list[dict]]:
    """Train the quickstart with ``overrides``; return its metrics and, on Ray, per step
    the actors' compute seconds and the driver's serialisation figures."""
    from langmarl.magrpo.run import build_magrpo_trainer, load_run_config

    run = load_run_config(CONFIG, {"runs_dir": str(out), **overrides})
    trainer = build_magrpo_trainer(run)
    per_step: list[dict[str, Any]] = []
    if trainer.placement is not None:
        payload = Payload()
        payload.watch()

        def after_step(metrics: dict[str, Any]) -> None:
            import ray

            busy = ray.get([a.worker.actor.timings.remote() for a in trainer.agents])
            rollouts = [a.worker.rollout for a in trainer.agents if a.worker.rollout is not None]
            sampled = ray.get([rollout.timings.remote() for rollout in rollouts]) or busy
            per_step.append({**payload.take(),
                             "generate": max(b.get("generate", 0) for b in sampled),
                             "update": max(b.get("update", 0) for b in busy),
                             "sync": max(b.get("sync", 0) for b in busy)})  # fmt: skip

        trainer.after_step = after_step
    try:
        history = trainer.train()
    finally:
        trainer.close()
    return history, per_step


class Payload:
    """Pickles every payload the driver sends to or gets from an agent's actor (sizes and
    seconds), by wrapping ``AgentHandle``'s calls and ``Pending.result``."""

    def __init__(self) -> None:
        self.bytes, self.seconds = 0, 0.0

    def _count(self, value: Any) -> None:
        started = time.perf_counter()
        self.bytes += len(pickle.dumps(value, protocol=5))
        self.seconds += time.perf_counter() - started

    def watch(self) -> None:
        from langmarl.magrpo.placement import remote

        call, result = remote.AgentHandle._call, remote.Pending.result

        def counted_call(handle: Any, method: str, what: str, *args: Any, **kw: Any) -> Any:
            self._count(args)
            return call(handle, method, what, *args, **kw)

        def counted_result(pending: Any) -> Any:
            value = result(pending)
            self._count(value)
            return value

        remote.AgentHandle._call = counted_call  # type: ignore[method-assign]
        remote.Pending.result = counted_result  # type: ignore[method-assign]

    def take(self) -> dict[str, Any]:
        taken = {"payload_mb": self.bytes / 1e6, "pickle_s": self.seconds}
        self.bytes, self.seconds = 0, 0.0
        return taken


def mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.mean(row[key] for row in rows)


def two_nodes(cpus: int) -> Any:
    """A local cluster of two Ray nodes, this process joined to it."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": cpus, "include_dashboard": False})  # fmt: skip
    cluster.add_node(num_cpus=cpus)
    ray.init(address=cluster.address, logging_level="WARNING")
    return cluster


def report_apart(apart: list[dict], parts: list[dict], base: float) -> None:
    """The rollout-apart run: its seconds per step and what crossed for the weight sync."""
    step = mean(apart, "step_seconds")
    synced = {key for key in apart[0] if key.endswith("/synced_mb")}
    total = statistics.mean(sum(row[key] for key in synced) for row in apart)
    print(f"\nrollouts apart (4 actors): {step:.2f} s/step ({(step / base - 1) * 100:+.1f} % vs "
          f"process), rollout {mean(apart, 'rollout_seconds'):.2f} s, update "
          f"{mean(apart, 'update_seconds'):.2f} s, of which the weight sync "
          f"{mean(parts, 'sync'):.2f} s (slowest agent: put, transfer, load)")  # fmt: skip
    print(f"weights synced per step: {total:.2f} MB ({total / len(synced):.2f} MB per agent, "
          "agent actor -> its rollout actor through the object store); the driver's own "
          f"payload: {mean(parts, 'payload_mb'):.2f} MB")  # fmt: skip


def report(process: list[dict], on_ray: list[dict], parts: list[dict], load: str) -> None:
    base, ray_step = mean(process, "step_seconds"), mean(on_ray, "step_seconds")
    print(f"\nload during the runs: {load}; {len(process)} measured steps each")
    print("| placement | s/step | rollout s | update s |")
    print("|---|---|---|---|")
    for name, rows in (("process", process), ("ray (2 nodes)", on_ray)):
        step, rollout = mean(rows, "step_seconds"), mean(rows, "rollout_seconds")
        print(f"| {name} | {step:.2f} | {rollout:.2f} | {mean(rows, 'update_seconds'):.2f} |")
    print(f"\nRay vs process: {ray_step - base:+.2f} s/step ({(ray_step / base - 1) * 100:+.1f} %)")
    rollout, update = mean(on_ray, "rollout_seconds"), mean(on_ray, "update_seconds")
    generate, train_ = mean(parts, "generate"), mean(parts, "update")
    pickling = mean(parts, "pickle_s")
    print("| on Ray, per step | rollout | update |")
    print("|---|---|---|")
    print(f"| driver wall s | {rollout:.2f} | {update:.2f} |")
    print(f"| compute s (slowest actor) | {generate:.2f} | {train_:.2f} |")
    print(f"| transfer + waiting + rewards s | {rollout - generate:.2f} | {update - train_:.2f} |")
    print(f"\nserialisation: {mean(parts, 'payload_mb'):.2f} MB pickled per step in "
          f"{pickling * 1000:.1f} ms on the driver (part of the rows above)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="steps per run (first: warm-up)")
    parser.add_argument("--cpus-per-node", type=int, default=1)
    parser.add_argument("--address", default=None, help="a running Ray cluster instead")
    parser.add_argument(
        "--rollout-apart",
        action="store_true",
        help="also run with rollout_placement='apart' (needs a 2-node cluster)",
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    options = parser.parse_args()
    print_machine()
    from langmarl.config.overrides import parse_assignment

    overrides: dict[str, Any] = dict(parse_assignment(item) for item in options.set)
    overrides["trainer.max_steps"] = options.steps
    with tempfile.TemporaryDirectory() as out, LoadSampler() as load:
        process, _ = train({**overrides, "run_id": "process"}, Path(out))
        cluster = None if options.address else two_nodes(options.cpus_per_node)
        apart: tuple[list[dict[str, Any]], list[dict]] | None = None
        ray_overrides = {"trainer.placement": "ray", "trainer.placement_strategy": "STRICT_SPREAD",
                         "trainer.agent_num_cpus": options.cpus_per_node}  # fmt: skip
        if options.address:
            ray_overrides["trainer.ray_address"] = options.address
        try:
            on_ray, parts = train({**overrides, **ray_overrides, "run_id": "ray"}, Path(out))
            if options.rollout_apart:
                half = options.cpus_per_node / 2
                apart_overrides = {**ray_overrides, "trainer.rollout_placement": "apart",
                                   "trainer.agent_num_cpus": half,
                                   "trainer.rollout_num_cpus": half, "run_id": "apart"}  # fmt: skip
                apart = train({**overrides, **apart_overrides}, Path(out))
        finally:
            if cluster is not None:
                import ray

                ray.shutdown()
                cluster.shutdown()
    skip = 1 if options.steps > 1 else 0
    report(process[skip:], on_ray[skip:], parts[skip:], load.summary())
    if apart is not None:
        history, apart_parts = apart
        report_apart(history[skip:], apart_parts[skip:], mean(process[skip:], "step_seconds"))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.chdir(ROOT)
    main()
