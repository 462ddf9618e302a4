"""`PolicyCheckpoint`: versioned policy snapshots, one text file per agent per version."""

from __future__ import annotations

import difflib
import logging
import re
from typing import Any

from langmarl.core.errors import ConfigError, RunFileError
from langmarl.core.records import AgentId, Policies
from langmarl.store.local import LocalStore, iter_dir, recovery_hint

MANIFEST = "manifest.json"
DEFAULT_POLICY = (
    "You are {agent_id}, one agent of a team solving a task together. Read the task and what "
    "your teammates did before you, do your part carefully, and state your result clearly."
)
"""The policy ``get_policies`` generates for an agent when the run has no checkpoint and no
``default_policies`` were given (the reference generates default policies there)."""

logger = logging.getLogger(__name__)


def policy_file_names(agent_ids: list[AgentId]) -> dict[AgentId, str]:
    """A safe, unique file name per agent id (``"planner"`` → ``"planner.txt"``)."""
    names: dict[AgentId, str] = {}
    taken: set[str] = set()
    for agent_id in agent_ids:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", agent_id).strip("._") or "agent"
        name, n = f"{stem}.txt", 1
        while name in taken or name == MANIFEST:
            n += 1
            name = f"{stem}_{n}.txt"
        taken.add(name)
        names[agent_id] = name
    return names


class PolicyCheckpoint:
    """Policy versions of one run: checkpoint ``N`` holds the policies after ``N`` training
    iterations (checkpoint 0, or ``start_iteration``, the starting policies).

    A checkpoint is complete once its ``manifest.json`` exists; it is written after every
    policy file, so a crash mid-save leaves no half checkpoint behind. The manifest records
    each policy's length, so a policy file deleted or emptied later is an error naming the
    file, never an agent silently trained on an empty prompt (editing a policy by hand is
    fine).

    Args:
        store: The store.
        run_id: The run.
        num_agents: Number of agents (checked against what is saved).
        agent_ids: The environment's agent ids. Unlike the reference implementation, which
            invents ``agent_1..N`` for default policies (so policies never match the
            environment's agents and training silently optimizes nothing), ids come from
            the environment or a saved checkpoint; ``agent_1..N`` are generated only when
            no ids were given at all.
        default_policies: Policies returned when no checkpoint exists yet (normally
            ``env.default_policies()``). Without them, :data:`DEFAULT_POLICY` is generated
            for each of ``agent_ids`` — or, with no ``agent_ids`` either, for ``agent_1`` ..
            ``agent_N`` as the reference does (logged as a warning: pass the environment's
            agent ids so the policies match its agents).
    """

    def __init__(
        self,
        store: LocalStore,
        run_id: str,
        num_agents: int,
        agent_ids: list[AgentId] | None = None,
        default_policies: Policies | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.num_agents = num_agents
        self.agent_ids = list(agent_ids) if agent_ids else None
        self.default_policies = dict(default_policies) if default_policies else None

    def iterations(self) -> list[int]:
        """Numbers of the complete checkpoints, ascending."""
        found = []
        for manifest in self.store.list_files(self.run_id, "policies", f"iter_*/{MANIFEST}"):
            found.append(int(manifest.parent.name.removeprefix("iter_")))
        return sorted(found)

    def latest_iteration(self) -> int | None:
        """The newest complete checkpoint, or ``None``."""
        done = self.iterations()
        return done[-1] if done else None

    def manifest(self, iteration: int) -> dict[str, Any]:
        """The manifest of checkpoint ``iteration``.

        Raises:
            ConfigError: if that checkpoint does not exist.
        """
        data = self.store.read_json(self.run_id, f"{iter_dir('policies', iteration)}/{MANIFEST}")
        if data is None:
            raise ConfigError(
                f"Run {self.run_id!r} has no policy checkpoint {iteration}; "
                f"available: {self.iterations() or 'none'}."
            )
        return dict(data)

    def get_policies(self, iteration: int | None = None) -> Policies:
        """Policies of checkpoint ``iteration`` (``None``: the latest); the default
        policies when there is no checkpoint yet (generated if none were given, see the
        class docstring).

        Raises:
            ConfigError: for a missing checkpoint ``iteration``.
        """
        if iteration is None:
            iteration = self.latest_iteration()
            if iteration is None:
                if self.default_policies is None:
                    return self._generated_defaults()
                return dict(self.default_policies)
        manifest = self.manifest(iteration)
        folder = iter_dir("policies", iteration)
        lengths = manifest.get("lengths", {})
        policies = {}
        for agent_id, name in manifest["files"].items():
            relpath = f"{folder}/{name}"
            text = self.store.read_text(self.run_id, relpath)
            if text is None or (not text.strip() and lengths.get(agent_id, 1) > 0):
                hint = recovery_hint(relpath)
                raise RunFileError(
                    self.store.path(self.run_id, relpath),
                    f"the policy of {agent_id!r} is {'missing' if text is None else 'empty'}",
                    f"Restore it, or {hint[0].lower()}{hint[1:]}",
                )
            policies[agent_id] = text
        return policies

    def _generated_defaults(self) -> Policies:
        agent_ids = self.agent_ids
        if agent_ids is None:
            agent_ids = [f"agent_{n}" for n in range(1, self.num_agents + 1)]
            logger.warning(
                "Run %r: no checkpoint, default policies or agent ids; generated default "
                "policies for %s. Pass agent_ids=env.agent_ids so they match the environment.",
                self.run_id,
                agent_ids,
            )
        return {agent_id: DEFAULT_POLICY.format(agent_id=agent_id) for agent_id in agent_ids}

    def save_policies(
        self,
        iteration: int,
        policies: Policies,
        stats: dict[str, Any] | None = None,
        updates: list[dict[str, Any]] | None = None,
    ) -> None:
        """Save ``policies`` as checkpoint ``iteration`` (policy files first, manifest last).

        Raises:
            ConfigError: if the agents differ from ``agent_ids`` or ``num_agents``.
        """
        self._check_agents(list(policies))
        names = policy_file_names(list(policies))
        folder = iter_dir("policies", iteration)
        for agent_id, text in policies.items():
            self.store.write_text(self.run_id, f"{folder}/{names[agent_id]}", text)
        manifest = {
            "iteration": iteration,
            "agent_ids": list(policies),
            "files": names,
            "lengths": {agent_id: len(text.strip()) for agent_id, text in policies.items()},
            "stats": stats,
            "updates": updates or [],
        }
        self.store.write_json(self.run_id, f"{folder}/{MANIFEST}", manifest)

    def _check_agents(self, agent_ids: list[AgentId]) -> None:
        expected = self.agent_ids
        if expected is not None and sorted(agent_ids) != sorted(expected):
            raise ConfigError(
                f"Policies are for agents {agent_ids}, but the environment's agents are "
                f"{expected}; keep the environment's agent ids unchanged."
            )
        if len(agent_ids) != self.num_agents:
            raise ConfigError(
                f"Got {len(agent_ids)} policies but num_agents={self.num_agents}; "
                "set num_agents to the environment's number of agents."
            )

    def diff_policies(self, iter_a: int, iter_b: int) -> dict[AgentId, str]:
        """Unified diff per agent between checkpoints ``iter_a`` and ``iter_b``
        ("" where a policy did not change)."""
        a, b = self.get_policies(iter_a), self.get_policies(iter_b)
        diffs = {}
        for agent_id in dict.fromkeys([*a, *b]):
            lines = difflib.unified_diff(
                a.get(agent_id, "").splitlines(),
                b.get(agent_id, "").splitlines(),
                fromfile=f"{agent_id}@{iter_a}",
                tofile=f"{agent_id}@{iter_b}",
                lineterm="",  # one line per line, also when a policy ends without "\n"
            )
            diffs[agent_id] = "\n".join(lines)
        return diffs

    def all_stats(self) -> list[dict[str, Any]]:
        """The stats stored with each checkpoint that has them, in order."""
        stats = []
        for iteration in self.iterations():
            entry = self.manifest(iteration).get("stats")
            if entry:
                stats.append(entry)
        return stats
