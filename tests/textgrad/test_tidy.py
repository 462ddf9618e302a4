"""tidy_feedback: loops and cut-off fragments never reach a policy."""

from hypothesis import given
from hypothesis import strategies as st

from langmarl.textgrad.tidy import tidy_feedback


def test_a_looping_cut_off_reply_collapses_to_its_sentence() -> None:
    looped = 'The answer to "What is the capital of France?" is Paris.\n\n' * 5 + "The"
    assert tidy_feedback(looped) == 'The answer to "What is the capital of France?" is Paris.'


def test_repeats_ignore_case_and_spacing_and_keep_first_order() -> None:
    text = "Quote the fact. Be brief.\nquote   the FACT.\nAnswer in one word."
    assert tidy_feedback(text) == "Quote the fact. Be brief.\nAnswer in one word."


def test_numbered_lists_keep_their_markers() -> None:
    text = "1. Quote the fact.\n2. Answer in one word.\n1. Quote the fact."
    assert tidy_feedback(text) == "1. Quote the fact.\n2. Answer in one word."


def test_clean_text_is_unchanged() -> None:
    for text in ("Say yes next time.", "Say yes next time", "Use <Action> 5: take the centre."):
        assert tidy_feedback(text) == text
    assert tidy_feedback("  \n ") == ""


@given(st.text(alphabet="ab .?!\n1-", max_size=60))
def test_only_removes_never_invents(text: str) -> None:
    tidied = tidy_feedback(text)
    assert len(tidied) <= len(text)
    flat = " ".join(text.split())
    for line in tidied.splitlines():
        for word in line.split():
            assert word in flat
