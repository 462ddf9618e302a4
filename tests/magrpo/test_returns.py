import pytest

from langmarl.magrpo.returns import (
    discounted_returns,
    generation_returns,
    node_value,
    propagate_returns,
    td_targets,
)
from langmarl.magrpo.tree import TreeNode


def test_discounted_returns_add_the_child_value():
    assert discounted_returns([1.0, 2.0], [None, 4.0], 0.5) == [1.0, 4.0]


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="child values"):
        discounted_returns([1.0], [None, None], 0.9)


def test_node_value_is_the_mean():
    assert node_value([1.0, 3.0]) == 2.0
    with pytest.raises(ValueError):
        node_value([])


def test_propagate_returns_from_leaves_to_root():
    leaf_a = TreeNode(1, {}, ["p"], [[]], [[]], joint=[(0,), (1,)], rewards=[1.0, 3.0])
    leaf_a.children = [None, None]
    root = TreeNode(0, {}, ["p"], [[]], [[]], joint=[(0,), (1,)], rewards=[0.0, 1.0])
    root.children = [leaf_a, None]
    value = propagate_returns(root, discount=0.5)
    assert leaf_a.returns == [1.0, 3.0]
    assert root.returns == [0.0 + 0.5 * 2.0, 1.0]
    assert value == pytest.approx(1.0)


def test_generation_returns_align_uses_one_joint_action_each():
    values = generation_returns([1.0, 5.0], [(0, 0), (1, 1)], num_agents=2, num_generations=2)
    assert values == [[1.0, 5.0], [1.0, 5.0]]


def test_generation_returns_cross_averages_over_partners():
    # joint (a0, a1): (0,0)=1, (0,1)=3, (1,0)=5, (1,1)=7
    values = generation_returns([1, 3, 5, 7], [(0, 0), (0, 1), (1, 0), (1, 1)], 2, 2)
    assert values[0] == [2.0, 6.0]  # agent 0's completion 0 met partners with 1 and 3
    assert values[1] == [3.0, 5.0]


def test_generation_returns_requires_every_completion_used():
    with pytest.raises(ValueError, match="at least one joint action"):
        generation_returns([1.0], [(0, 0)], 2, 2)


def test_td_targets_stop_at_done():
    assert td_targets([1.0, 2.0], [10.0, 10.0], [False, True], 0.5) == [6.0, 2.0]
