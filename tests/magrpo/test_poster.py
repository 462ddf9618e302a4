import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.poster import (
    band_score,
    builtin_topics,
    poster_reward,
    poster_scores,
    shares_key_word,
    word_count,
)
from langmarl.magrpo.rollout import JointSample
from langmarl.magrpo.tasks import get_task


def test_word_count_ignores_punctuation_and_keeps_contractions():
    assert word_count('"Sea."') == 1
    assert word_count("The ocean's well-kept secret!") == 4
    assert word_count("  \n") == 0


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, 0.0), (1, 1 / 3), (3, 1.0), (6, 1.0), (10, 0.5), (14, 0.0), (40, 0.0)],
)
def test_band_score_is_one_in_the_band_and_linear_outside(count, expected):
    assert band_score(count, 3, 6, 8) == pytest.approx(expected)


def test_key_word_must_be_one_word_found_in_the_tagline():
    assert shares_key_word("Ocean.", "The ocean's endless blue")
    assert shares_key_word("Mountains", "A mountain calls")
    assert not shares_key_word("The ocean", "The ocean calls")  # two words
    assert not shares_key_word("Blue", "The ocean calls")
    assert not shares_key_word("", "anything")
    assert shares_key_word("Gas", "gas prices rise")  # short words keep their s


def test_reward_parts_and_weights():
    perfect = poster_scores("Ocean", "The ocean calls you home")
    assert perfect == {"key_word": 1.0, "tagline": 1.0, "shared": 1.0, "reward": 1.0}
    rambling = poster_scores("The key word of the poster is ocean", "x " * 30)
    assert rambling["shared"] == 0.0 and rambling["tagline"] == 0.0
    assert rambling["reward"] == pytest.approx(0.35 * (1 - 6 / 6))
    apart = poster_scores("Blue", "Waves under a silver sky")
    assert apart["reward"] == pytest.approx(0.7)


def test_poster_reward_scores_each_joint_sample():
    example = {"prompt": "the ocean"}
    samples = [
        JointSample(example, 0, pair, ("", ""), ((), ()))
        for pair in [("Ocean", "The ocean calls you home"), ("", "")]
    ]
    assert poster_reward(samples) == [1.0, 0.0]


def test_task_holds_out_the_first_topics():
    topics = builtin_topics()
    assert len(topics) == len(set(topics)) >= 100
    task = get_task("poster", num_eval=30)
    assert [e["prompt"] for e in task.eval_dataset] == list(topics[:30])
    assert len(task.train_dataset) == len(topics) - 30
    assert not {e["prompt"] for e in task.eval_dataset} & {e["prompt"] for e in task.train_dataset}
    label, tagline = (f(task.eval_dataset[0]) for f in task.formatters)
    assert "key word" in label and topics[0] in label
    assert "three to six words" in tagline and topics[0] in tagline


def test_task_reads_a_topic_file_and_names_a_missing_one(tmp_path):
    path = tmp_path / "topics.txt"
    path.write_text("# my topics\nrivers\n\nbridges\ncastles\n", encoding="utf-8")
    task = get_task("poster", dataset_path=str(path), num_eval=1)
    assert task.eval_dataset == [{"prompt": "rivers"}]
    assert [e["prompt"] for e in task.train_dataset] == ["bridges", "castles"]
    with pytest.raises(ConfigError, match="one topic per line"):
        get_task("poster", dataset_path=str(tmp_path / "missing.txt"))


def test_a_tagline_that_echoes_the_instruction_earns_nothing():
    echo = poster_scores("Coffee", "Coffee's Key Word")
    assert echo == {"key_word": 1.0, "tagline": 0.0, "shared": 0.0, "reward": 0.35}
    assert poster_scores("Coffee", "A poster about coffee")["tagline"] == 0.0
    assert poster_scores("Coffee", "Coffee wakes the world")["reward"] == 1.0  # "world" is fine
