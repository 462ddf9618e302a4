"""Episode pictures: frames from the package's visualiser, written as a GIF."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from langmarl.envs.overcooked.render import record_greedy_episode, save_gif


def test_a_recorded_episode_is_saved_as_a_gif(tmp_path: Path) -> None:
    frames = record_greedy_episode("forced_coordination", ticks=3)
    assert len(frames) == 4  # the start and one frame per tick
    height, width, channels = frames[0].shape
    assert channels == 3 and height > 100 and width > 100
    assert (frames[0] != frames[-1]).any()  # the cooks moved
    path = save_gif(frames, tmp_path / "episode.gif", scale=0.5)
    with Image.open(path) as gif:
        assert gif.n_frames == 4 and gif.size == (width // 2, height // 2)
