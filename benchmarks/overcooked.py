"""Overcooked env steps/s without an LLM: langmarl's OvercookedEnv next to the package's raw env.

Three rows, one process, the same layouts and horizon:

- ``raw OvercookedEnv.step``: the ``overcooked`` package's own env stepping uniformly random
  primitive joint actions (the cheapest possible driver: no planning at all);
- ``langmarl Episode.tick``: our episode with two scripted greedy cooks: skill choice, a BFS
  motion planner for both cooks every tick, skill bookkeeping, then the same MDP
  transition (``OvercookedGridworld.get_state_transition``);
- ``langmarl observations``: rendering a cook's text observation (paid once per LLM
  decision, not per tick).

The package's env computes an all-pairs motion planner on its first step and pickles it into
the installed package; it only reads it with ``display_phi=True``, so the raw row gives it a
placeholder instead (nothing is written, and the planner's one-off cost is left out).

Run: ``.venv/bin/python benchmarks/overcooked.py [--horizon 400] [--episodes 3]``.

Recorded 2026-11-24 21:40 UTC, load average 4.5 (2 cores shared), defaults::

    layout                 raw env steps/s  ours steps/s  ratio  obs/s  soups (3 episodes)
    cramped_room                     12420          7682   0.62  16268     36
    asymmetric_advantages            11141          8764   0.79  15774     39
    coordination_ring                10856          8935   0.82  16067      9
    forced_coordination              12478          6613   0.53  12740     33
    counter_circuit                  12804          9100   0.71  17509      9
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from machine_load import print_machine  # beside this script

# This file is called overcooked.py: drop its folder from the path, or ``import overcooked``
# would import this script instead of the package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from langmarl.config.envs import OvercookedConfig  # noqa: E402
from langmarl.envs.overcooked.env import OvercookedEnv  # noqa: E402
from langmarl.envs.overcooked.greedy import greedy_skill  # noqa: E402
from langmarl.envs.overcooked.layouts import LAYOUTS, load_mdp  # noqa: E402


def raw_steps_per_second(layout: str, horizon: int, episodes: int) -> float:
    """The package's ``OvercookedEnv.step`` with random joint actions."""
    from overcooked.mdp import Action
    from overcooked.mdp import OvercookedEnv as RawEnv

    env = RawEnv.from_mdp(load_mdp(layout), horizon=horizon, info_level=0)
    rng = random.Random(0)
    steps, start = 0, time.perf_counter()
    for _ in range(episodes):
        env.reset(regen_mdp=False)
        env._mp = object()  # placeholder: see the module docstring
        while not env.is_done():
            env.step([rng.choice(Action.ALL_ACTIONS), rng.choice(Action.ALL_ACTIONS)])
            steps += 1
    return steps / (time.perf_counter() - start)


def ours_steps_per_second(layout: str, horizon: int, episodes: int) -> tuple[float, int]:
    """Our episode ticks with two greedy cooks; also the soups they delivered."""
    env = OvercookedEnv(OvercookedConfig(layout=layout, episode_horizon=horizon))
    steps, soups, start = 0, 0, time.perf_counter()
    for _ in range(episodes):
        episode = env.new_episode()
        while not episode.done:
            for cook in episode.awaiting():
                episode.assign(cook, greedy_skill(env.kitchen, episode.state, cook))
            episode.tick()
            steps += 1
        soups += episode.soups
    return steps / (time.perf_counter() - start), soups


def observations_per_second(layout: str, count: int = 500) -> float:
    """Text observations rendered per second (mid-episode state)."""
    env = OvercookedEnv(OvercookedConfig(layout=layout, episode_horizon=40))
    episode = env.new_episode()
    while not episode.done:
        for cook in episode.awaiting():
            episode.assign(cook, greedy_skill(env.kitchen, episode.state, cook))
        episode.tick()
    start = time.perf_counter()
    for i in range(count):
        env.observe(episode, i % 2)
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=400)
    parser.add_argument("--episodes", type=int, default=3)
    args = parser.parse_args()
    columns = ("raw env steps/s", "ours steps/s", "ratio", "obs/s", "soups")
    header = f"{'layout':<22} " + " ".join(f"{c:>16}" for c in columns)
    print(f"horizon {args.horizon}, {args.episodes} episodes per layout")
    print(header)
    for layout in LAYOUTS:
        raw = raw_steps_per_second(layout, args.horizon, args.episodes)
        ours, soups = ours_steps_per_second(layout, args.horizon, args.episodes)
        obs = observations_per_second(layout)
        row = (f"{raw:.0f}", f"{ours:.0f}", f"{ours / raw:.2f}", f"{obs:.0f}", str(soups))
        print(f"{layout:<22} " + " ".join(f"{c:>16}" for c in row))


if __name__ == "__main__":
    print_machine()
    main()
