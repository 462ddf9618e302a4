"""A piston's text observation from a physics state."""

from __future__ import annotations

from langmarl.envs.pistonball.observation import observe
from langmarl.envs.pistonball.physics import BallState, PhysicsState


def _state(ball_x: float, vx: float = 0.0, vy: float = 0.0) -> PhysicsState:
    ball = BallState(x=ball_x, bottom=1.2, vx=vx, vy=vy, radius=1.0)
    return PhysicsState(heights=[3, 8, 16], tops=[0.3, 0.8, 1.6], ball=ball)


def test_observation_names_the_piston_its_height_and_the_reply_format() -> None:
    text = observe(_state(2.5), 0, cycle=4, max_cycles=50, action_mode="discrete")
    assert text.splitlines() == [
        "piston_0 (1 of 3 from the left wall), cycle 4 of 50.",
        "Your height: 3 of 16. Ball, in piston widths: 2.0 pistons to your right, 1.2 above "
        "the floor; at rest.",
        "Reply up, down or stay.",
    ]


def test_ball_above_a_piston_reports_the_gap_and_its_motion() -> None:
    text = observe(_state(1.6, vx=-0.25, vy=-0.1), 1, cycle=1, max_cycles=9,
                   action_mode="continuous")  # fmt: skip
    assert "Ball, in piston widths: over you, 0.4 above your head;" in text
    assert "; rolling left 0.25, falling 0.10 per cycle." in text
    assert text.endswith("\nReply a number from -1 (down) to 1 (up).")


def test_ball_to_the_left() -> None:
    text = observe(_state(0.9, vx=0.5), 2, cycle=1, max_cycles=9, action_mode="discrete")
    assert "Ball, in piston widths: 1.6 pistons to your left, 1.2 above the floor;" in text
    assert "; rolling right 0.50 per cycle." in text
