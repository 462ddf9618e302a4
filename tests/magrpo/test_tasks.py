import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.rollout import JointSample
from langmarl.magrpo.tasks import (
    coding_reward_levels,
    get_task,
    length_ratio_reward,
)


def test_length_ratio_reward_peaks_in_the_band():
    assert length_ratio_reward("one two", "a b c d e") == 1.0  # ratio 2.5
    assert length_ratio_reward("one two", "a b") == pytest.approx(0.5)  # ratio 1
    assert length_ratio_reward("x", "w " * 12) == 0.0  # ratio 12
    assert length_ratio_reward("", "anything") == 0.0


def test_coding_levels_are_graded():
    main = "def add(a, b):\n    return aux(a, b)"
    helper = "def aux(a, b):\n    return a + b"
    assert coding_reward_levels(helper, "def add(:", "add", None) == 0.0
    assert coding_reward_levels(helper, "def other(): pass", "add", 1.0) == 0.0
    assert coding_reward_levels("junk(", "def add(a, b): return a + b", "add", 0.0) == 1.0
    assert coding_reward_levels(helper, main, "add", 0.5) == 1.0 + 0.5 + 0.5 + 1.0
    assert coding_reward_levels(helper, main, "add", 1.0) == 4.0


def test_coding_reward_runs_the_tests_in_the_sandbox():
    task = get_task("coding")
    example = next(e for e in task.train_dataset + task.eval_dataset if e["entry_point"] == "add")
    good = (
        "def aux(a, b):\n    return a + b",
        "```python\ndef add(a, b):\n    return aux(a, b)\n```",
    )
    bad = ("def aux(a, b):\n    return a - b", "def add(a, b):\n    return aux(a, b)")
    samples = [JointSample(example, 0, pair, ("", ""), ((), ())) for pair in (good, bad)]
    rewards = task.reward_func(samples)
    assert rewards[0] == 4.0
    assert 2.0 <= rewards[1] < 4.0


def test_writing_task_shape():
    task = get_task("writing", num_train=3, num_eval=2)
    assert len(task.train_dataset) == 3 and len(task.eval_dataset) == 2
    assert "summary" in task.formatters[0](task.train_dataset[0])


def test_unknown_task_suggests():
    with pytest.raises(ConfigError, match="Did you mean 'coding'"):
        get_task("codng")
