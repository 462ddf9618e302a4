"""Demonstrations for a model that writes reward code (issue 38): verified reward functions
for other intents and environments, the most similar shown as earlier chat turns before the
real request. Small models copy such turns far better than they follow instructions
(:mod:`langmarl.core.demos`), and a copied reward is verified code.

Where they come from:

- **the catalog**: every objective of every env (:mod:`~.catalog`) as an intent ("make the
  swimmer move backwards") and its compiled reward; ``tests/p2p/test_demonstrations.py``
  validates each one in the sandbox;
- **accepted rewards**: a session whose check passed adds its best reward to
  ``<runs_dir>/demonstrations.jsonl`` (:func:`accept`), so the sessions after it in that
  runs directory see it.

Choosing (:func:`choose`): the demonstrations of *other* environments that read only what
the session's env has (its ``info`` keys and observation size: :func:`fits`) and whose
intents share the most words with the session's (an accepted reward of the same
environment counts too: it was checked on that body), the best first; ties keep the
catalog's order. The request
then shows each as the user's request for its env and the assistant's code.

A reward the model writes that is a demonstration's code with few changes (a ``difflib``
ratio of 0.9 or more) is recorded with ``origin: demonstration`` (adapted), anything else
as ``author``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from langmarl.core.files import append_jsonl, read_jsonl
from langmarl.p2p.design.catalog import OBJECTIVES, compile_for_env, objective_proposal
from langmarl.p2p.reward.env_specs import MujocoEnvSpec, get_env_spec

LIBRARY_FILE = "demonstrations.jsonl"
"""Accepted rewards, in the runs directory that the sessions share."""
ADAPTED_RATIO = 0.9
"""How close to a shown demonstration's code a reward must be to count as adapted from it."""
BODIES = {
    "HalfCheetah-v5": "cheetah", "Hopper-v5": "hopper", "Walker2d-v5": "walker",
    "Ant-v5": "ant", "Humanoid-v5": "humanoid", "Swimmer-v5": "swimmer",
    "Reacher-v5": "arm", "InvertedPendulum-v5": "cart",
}  # fmt: skip
"""What an intent calls each env's body."""
_IGNORED = {"the", "a", "an", "make", "to", "and", "of", "it", "its", "is"}


@dataclass(frozen=True)
class RewardDemo:
    """A verified reward for an intent on an env."""

    intent: str
    env_id: str
    code: str
    source: str = "catalog"
    """``catalog``, or the session whose check accepted it."""


def catalog_demos() -> list[RewardDemo]:
    """Every objective of every env, as its intent and compiled reward."""
    found = []
    for env_id, choices in OBJECTIVES.items():
        for objective in choices:
            intent = f"make the {BODIES[env_id]}{objective.phrase.rstrip('.')}"
            code = compile_for_env(objective_proposal(env_id, objective))
            found.append(RewardDemo(intent, env_id, code))
    return found


def accepted_demos(runs_dir: Path) -> list[RewardDemo]:
    """The rewards earlier sessions in ``runs_dir`` had accepted by their checks."""
    rows = read_jsonl(runs_dir / LIBRARY_FILE)
    return [
        RewardDemo(str(r["intent"]), str(r["env_id"]), str(r["code"]), str(r["source"]))
        for r in rows
        if isinstance(r, dict) and {"intent", "env_id", "code", "source"} <= set(r)
    ]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower())) - _IGNORED


def choose(intent: str, env_id: str, k: int, runs_dir: Path | None = None) -> list[RewardDemo]:
    """The ``k`` demonstrations most similar to ``intent`` (shared words over all words), of
    other envs, or accepted for ``env_id`` itself (module docstring)."""
    if k <= 0:
        return []
    accepted = accepted_demos(runs_dir) if runs_dir is not None else []
    pool = [d for d in catalog_demos() if d.env_id != env_id] + accepted
    spec = get_env_spec(env_id)
    pool = [d for d in pool if fits(d.code, spec)]
    wanted = _words(intent)

    def similarity(demo: RewardDemo) -> float:
        words = _words(demo.intent)
        return len(wanted & words) / max(len(wanted | words), 1)

    return sorted(pool, key=similarity, reverse=True)[:k]


def fits(code: str, spec: MujocoEnvSpec) -> bool:
    """Whether ``code`` reads only what ``spec``'s env has: its ``info`` keys and
    observation indices (a demonstration a model copies should run on the session's env:
    the cheetah has no ``reward_survive``)."""
    keys = set(re.findall(r'info\["(\w+)"\]', code))
    indices = [int(i) for i in re.findall(r"(?:next_)?obs\[(\d+)", code)]
    return keys <= set(spec.info_keys) and all(i < spec.obs_dim for i in indices)


def adapted_from(code: str, shown: list[RewardDemo]) -> RewardDemo | None:
    """The shown demonstration ``code`` is a close copy of (None: the model's own)."""
    for demo in shown:
        if difflib.SequenceMatcher(None, demo.code, code).ratio() >= ADAPTED_RATIO:
            return demo
    return None


def accept(runs_dir: Path, intent: str, env_id: str, code: str, session_id: str) -> bool:
    """Add a reward a session's check passed to the library of ``runs_dir`` (not again when
    the library holds that code for that env); whether it was added."""
    if any(d.env_id == env_id and d.code == code for d in accepted_demos(runs_dir)):
        return False
    row = {"intent": intent, "env_id": env_id, "code": code, "source": session_id}
    append_jsonl(runs_dir / LIBRARY_FILE, row)
    return True
