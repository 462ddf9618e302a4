"""Records round-trip through JSON and keep the environment's agent ids."""

import json

import pytest

from langmarl.core.records import Evaluation, PolicyUpdate, Step, Trajectory


def _trajectory() -> Trajectory:
    return Trajectory(
        task={"question": "2+3?", "ground_truth": "5"},
        steps=[
            {"agent_id": "solver", "observation": "2+3?", "action": "5"},
            Step(agent_id="checker", observation="5", action="Answer: 5"),
        ],
        reward=1.0,
        agent_ids=["solver", "checker"],
    )


def test_trajectory_round_trips_through_json() -> None:
    traj = _trajectory()
    again = Trajectory.from_dict(json.loads(json.dumps(traj.to_dict())))
    assert again == traj
    assert isinstance(again.steps[0], Step)


def test_agent_ids_come_from_the_trajectory_not_invented() -> None:
    traj = _trajectory()
    assert traj.all_agent_ids() == ["solver", "checker"]
    assert traj.actions_of("checker") == ["Answer: 5"]
    assert traj.final_action() == "Answer: 5"
    no_ids = Trajectory(steps=traj.steps)
    assert no_ids.all_agent_ids() == ["solver", "checker"]


def test_records_allow_dict_style_access_like_the_reference() -> None:
    evaluation = Evaluation(raw_response="ok", per_agent={"a": "good"})
    assert evaluation["per_agent"] == {"a": "good"}
    assert evaluation.get("missing", 3) == 3
    with pytest.raises(KeyError):
        evaluation["nope"]


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValueError, match="extra"):
        PolicyUpdate.model_validate({"agent_id": "a", "method": "kept", "bogus": 1})


def test_trajectory_takes_the_reference_positional_form() -> None:
    steps = [{"agent_id": "solver", "observation": "2+3?", "action": "5", "thought": "add"}]
    trajectory = Trajectory({"question": "2+3?"}, steps, 1.0, {"source": "test"})
    assert trajectory.reward == 1.0 and trajectory.metadata == {"source": "test"}
    # extra step keys ("etc." in the reference) survive a JSON round trip
    assert trajectory.to_dict()["steps"][0]["thought"] == "add"
    assert Trajectory.from_dict(trajectory.to_dict()) == trajectory
    with pytest.raises(TypeError, match="both by position and by keyword"):
        Trajectory({}, task={})
    with pytest.raises(TypeError, match="at most 4"):
        Trajectory({}, [], 0.0, {}, ["a"])
