"""Pictures of an episode: frames from the package's pygame visualiser, saved as a GIF.

``python -m langmarl.envs.overcooked.render OUT.gif --layout cramped_room --ticks 120``
records two scripted greedy cooks (what ``docs/overcooked/episode.gif`` shows). The
visualiser draws off-screen (``SDL_VIDEODRIVER=dummy`` is set if unset), so no display is
needed; pygame and Pillow come with the ``games`` extra's ``overcooked`` package.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from langmarl.config.envs import OvercookedConfig
from langmarl.envs.overcooked.env import COOK_IDS, OvercookedEnv
from langmarl.envs.overcooked.episode import Episode
from langmarl.envs.overcooked.greedy import greedy_skill


class FrameRenderer:
    """Renders states of one layout to RGB arrays (``height x width x 3``, uint8)."""

    def __init__(self, env: OvercookedEnv) -> None:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        from overcooked.visualization.state_visualizer import StateVisualizer

        self.env = env
        self.visualizer = StateVisualizer()

    def frame(self, episode: Episode) -> Any:
        """The current state of ``episode`` with the score, tick and each cook's skill."""
        import pygame

        hud = {"timestep": episode.timestep, "score": f"{episode.reward:g}"}
        for cook, task in enumerate(episode.tasks):
            hud[COOK_IDS[cook]] = task.skill.value if task is not None else "-"
        surface = self.visualizer.render_state(episode.state, self.env.mdp.terrain_mtx, hud)
        return pygame.surfarray.array3d(surface).transpose(1, 0, 2)


def record_greedy_episode(layout: str, ticks: int) -> list[Any]:
    """Frames of two greedy cooks playing ``ticks`` ticks of ``layout`` (one per tick)."""
    config = OvercookedConfig.model_validate(
        {"layout": layout, "episode_horizon": ticks, "p0_agent": "greedy", "p1_agent": "greedy"}
    )
    env = OvercookedEnv(config)
    renderer = FrameRenderer(env)
    episode = env.new_episode()
    frames = []
    while not episode.done:
        for cook in episode.awaiting():
            episode.assign(cook, greedy_skill(env.kitchen, episode.state, cook))
        frames.append(renderer.frame(episode))
        episode.tick()
    frames.append(renderer.frame(episode))
    return frames


def save_gif(frames: list[Any], path: str | Path, fps: int = 8, scale: float = 1.0) -> Path:
    """Write ``frames`` as a looping GIF (downscaled by ``scale`` to keep the file small)."""
    from PIL import Image

    images = [Image.fromarray(f) for f in frames]
    if scale != 1.0:
        size = (int(images[0].width * scale), int(images[0].height * scale))
        images = [im.resize(size, Image.Resampling.NEAREST) for im in images]
    palette = [im.quantize(colors=64, method=Image.Quantize.MEDIANCUT) for im in images]
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    palette[0].save(
        out, save_all=True, append_images=palette[1:], duration=1000 // fps, loop=0, optimize=True
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Record two greedy cooks as a GIF.")
    parser.add_argument("out", help="GIF file to write")
    parser.add_argument("--layout", default="cramped_room")
    parser.add_argument("--ticks", type=int, default=120)
    parser.add_argument("--fps", type=int, default=8)
    args = parser.parse_args()
    path = save_gif(record_greedy_episode(args.layout, args.ticks), args.out, fps=args.fps)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
