"""Listings a space offers beside its runs, read through the entry points its kind of run
registers (:attr:`langmarl.store.kinds.RunKindSpec.catalogs`): ``GET /api/envs`` (what a
reward can read in each environment) and ``GET /api/reward-templates`` (reward space)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from langmarl.store import kinds

router = APIRouter(tags=["catalogs"])


def catalog(name: str) -> list[dict[str, Any]]:
    """Every registered kind's listing ``name``, each item tagged with its kind."""
    found: list[dict[str, Any]] = []
    for spec in kinds.all_kinds():
        entry = spec.catalogs.get(name)
        if entry is not None:
            found += [{"kind": spec.name, **item} for item in kinds.load(entry)()]
    return found


@router.get("/envs")
def envs() -> list[dict[str, Any]]:
    """The environments a reward can be written for: per env the sizes of ``obs`` and
    ``action``, the keys of ``info`` and the description the reward author reads."""
    return catalog("envs")


@router.get("/reward-templates")
def reward_templates() -> list[dict[str, Any]]:
    """The reward templates per env (the env's own reward terms, what a session trains when
    no authored reward validates), as code."""
    return catalog("reward-templates")
