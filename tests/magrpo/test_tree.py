import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.tree import (
    TreeNode,
    count_leaves,
    joint_actions_per_node,
    joint_indices,
    leaf_count,
    level_sizes,
    node_count,
)


def test_align_pairs_the_gth_completion_of_every_agent():
    assert joint_indices(3, 2, "align") == [(0, 0, 0), (1, 1, 1)]


def test_cross_is_the_cartesian_product():
    joint = joint_indices(2, 3, "cross")
    assert len(joint) == 9
    assert len(set(joint)) == 9
    assert joint[0] == (0, 0) and joint[-1] == (2, 2)


@pytest.mark.parametrize(
    ("n", "g", "t", "align", "cross"),
    [(1, 2, 1, 2, 2), (2, 2, 2, 4, 16), (2, 4, 1, 4, 16), (3, 2, 2, 4, 64), (2, 3, 3, 27, 729)],
)
def test_leaf_counts(n, g, t, align, cross):
    assert leaf_count(n, g, t, "align") == align == g**t
    assert leaf_count(n, g, t, "cross") == cross == g ** (n * t)


def test_level_sizes_and_node_count():
    assert level_sizes(2, 2, 3, "cross") == [1, 4, 16]
    assert node_count(2, 2, 3, "cross") == 21
    assert joint_actions_per_node(2, 4, "align") == 4


def test_unknown_mode_names_the_choices():
    with pytest.raises(ConfigError, match="'align' or 'cross'"):
        joint_indices(2, 2, "product")


def _node(turn, joints):
    return TreeNode(turn, {}, ["p"], [[]], [[]], joint=joints)


def test_count_leaves_of_a_tree_with_early_termination():
    root = _node(0, [(0,), (1,)])
    child = _node(1, [(0,), (1,)])
    child.children = [None, None]
    root.children = [child, None]  # the second branch ended at turn 0
    assert count_leaves(root) == 3
