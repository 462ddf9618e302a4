import pytest

from langmarl.core.errors import ParseError
from langmarl.p2p.agents.parsing import extract_code, extract_json, parse_score


def test_extract_code_prefers_the_block_defining_the_name():
    text = (
        "Here:\n```python\nx = 1\n```\nand\n```python\ndef reward_fn(o, a, n, i):\n    return 1\n"
    )
    assert extract_code(text, "reward_fn").startswith("def reward_fn")


def test_extract_code_handles_unclosed_fence_and_bare_code():
    assert extract_code("```python\ndef judge_fn(t, s):\n    return 1", "judge_fn").startswith(
        "def judge_fn"
    )
    assert extract_code("Sure! def reward_fn(o, a, n, i): return 1", "reward_fn").startswith("def ")


def test_extract_code_raises_on_prose():
    with pytest.raises(ParseError, match="reward_fn"):
        extract_code("I cannot help with that.", "reward_fn")


def test_extract_json():
    assert extract_json('text ```json\n{"learning_rate": 0.001}\n``` more') == {
        "learning_rate": 0.001
    }
    assert extract_json('set {"ent_coef": 0.01} please') == {"ent_coef": 0.01}
    assert extract_json("nothing") == {}


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("SCORE: 0.8\nREASON: good", 0.8),
        ("score = 7/10", 0.7),
        ("Score: 85%", 0.85),
        ("SCORE: 1.5", 0.15),
        ("**Score:** 42", 0.42),
    ],
)
def test_parse_score_rescales(text, score):
    assert parse_score(text)[0] == pytest.approx(score)


def test_parse_score_reason_and_failure():
    assert parse_score("SCORE: 0.5\nREASON: runs backwards")[1] == "runs backwards"
    with pytest.raises(ParseError):
        parse_score("looks fine to me")
