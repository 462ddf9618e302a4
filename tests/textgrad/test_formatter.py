"""TrajectoryFormatter hides ground truth and groups turns by agent."""

from langmarl.core.records import Trajectory
from langmarl.textgrad.formatter import TrajectoryFormatter

EPISODE = {
    "task": {"question": "2+3?", "ground_truth": "5"},
    "transitions": [
        {"agent_id": "solver", "action": "It is 5."},
        {"agent_id": "checker", "action": "Answer: 5", "info": {"error": "none"}},
    ],
    "reward": 1.0,
}


def test_global_format_lists_turns_and_hides_answers() -> None:
    text = TrajectoryFormatter.format_trajectory(EPISODE)
    assert "Turn 1 — solver:" in text and "It is 5." in text
    assert "ground_truth" not in text
    assert "Final reward: 1.000" in text


def test_credit_format_has_a_section_per_agent_including_silent_ones() -> None:
    traj = Trajectory.model_validate(
        {
            **{k: v for k, v in EPISODE.items() if k != "transitions"},
            "steps": EPISODE["transitions"],
            "agent_ids": ["solver", "checker", "judge"],
        }
    )
    text = TrajectoryFormatter.format_for_credit_assignment(traj)
    assert text.index("=== Contribution of solver ===") < text.index("=== Contribution of checker")
    assert "=== Contribution of judge ===\n(did not act)" in text


def test_minimal_format_is_one_line_per_turn() -> None:
    long = {**EPISODE, "transitions": [{"agent_id": "a", "action": "x\n" * 500}]}
    lines = TrajectoryFormatter.format_trajectory_minimal(long).splitlines()
    assert len(lines) == 2 and lines[0].startswith("a: ") and "chars cut" in lines[0]
