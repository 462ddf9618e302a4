"""Recording an episode: frames, an mp4 or a gif, and the command line."""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import pytest

from langmarl.config.envs import PistonballConfig
from langmarl.envs.pistonball.episode import scripted_decider
from langmarl.envs.pistonball.record import main, ramp_reply, record_episode

CONFIG = PistonballConfig(num_pistons=5, max_cycles=8, random_drop=False, random_rotate=False)


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_recording_has_a_frame_per_cycle_and_a_readable_video(
    tmp_path: Path, suffix: str
) -> None:
    path = tmp_path / f"episode{suffix}"
    recording = record_episode(path, CONFIG, scripted_decider(lambda i, s: "up"), seed=0)
    cycles = recording.trajectory.metadata["cycles"]
    assert len(recording.frames) == cycles + 1  # the reset, then one per cycle
    assert recording.frames[0].shape == (560, 40 * (5 + 2), 3)
    assert path.is_file() and path.stat().st_size > 1000
    reader = imageio.get_reader(path, format="FFMPEG" if suffix == ".mp4" else None)
    assert reader.count_frames() if suffix == ".mp4" else len(imageio.mimread(path)) == cycles + 1
    assert reader.get_data(0).shape[:2] == (560, 280)


def test_the_command_line_records_the_ramp(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "ramp.gif"
    main([str(out), "--pistons", "6", "--cycles", "40", "--fps", "5"])
    printed = capsys.readouterr().out
    assert printed.startswith(f"{out}: ") and "ball at the wall: True" in printed
    assert out.is_file()


def test_the_ramp_raises_pistons_right_of_the_ball_and_holds_those_just_left() -> None:
    from langmarl.envs.pistonball.physics import BallState, PhysicsState

    state = PhysicsState([0] * 4, [0.0] * 4, BallState(x=2.0, bottom=1, vx=0, vy=0, radius=1))
    assert [ramp_reply(i, state) for i in range(4)] == ["down", "stay", "up", "up"]
