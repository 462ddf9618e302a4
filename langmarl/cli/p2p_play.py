"""`langmarl p2p play`: roll out (and render) the PPO policy a reward-space run saved.

Its own module so the ``p2p`` group registers it with one line (:mod:`langmarl.p2p.learner.play`
does the work)."""

from __future__ import annotations

from pathlib import Path

import typer

from langmarl.cli.common import console, require_dir


def play(
    run_dir: Path = typer.Argument(
        ..., help="An iteration or run directory, e.g. runs/session_…/iter_1."
    ),
    episodes: int = typer.Option(1, "--episodes", "-n", min=1, help="Episodes to play."),
    video: Path | None = typer.Option(
        None, "--video", help="Render the episodes, one after the other, to this mp4."
    ),
) -> None:
    """Play a trained policy: deterministic episodes of the run's saved policy, scored
    with the environment's own reward (the LLM-written reward runs only in the sandbox)."""
    import numpy as np

    from langmarl.p2p.learner.play import play as play_policy
    from langmarl.p2p.learner.ppo_policy import POLICY_FILE

    fix = "give an iteration or run directory of a reward-space session, e.g. runs/<session>/iter_1"
    require_dir(run_dir, "run directory", fix)
    with console.status(f"playing {episodes} episode(s) …"):
        result = play_policy(run_dir, episodes=episodes, video=video)
    console.print(f"policy: {result.run_dir / POLICY_FILE} on {result.env_id}")
    for index, (ret, length) in enumerate(zip(result.returns, result.lengths, strict=True)):
        console.print(f"  episode {index}: env return {ret:.2f} over {length} steps")
    console.print(f"mean env return: {float(np.mean(result.returns)):.2f}")
    if result.video is not None:
        console.print(f"video: {result.video}")
