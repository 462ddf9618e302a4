"""Answer extraction and part matching."""

from __future__ import annotations

from langmarl.envs.parallel.scoring import extract_answer, matches, score_parts


def test_extract_answer_prefers_the_last_marked_line() -> None:
    assert extract_answer("thinking...\nANSWER: 7\nanswer: 8") == ("8", True)
    assert extract_answer("3 + 4 = 7\n\n") == ("3 + 4 = 7", False)
    assert extract_answer("") == ("", False)


def test_numbers_match_on_the_last_number_only() -> None:
    assert matches("7", "3 + 4 = 7")
    assert not matches("7", "7 is not it, it is 8")
    assert matches("1931", "It opened in 1931.")
    assert not matches("3", "What is 3 + 4?")


def test_text_matches_whole_words_ignoring_case_and_plural() -> None:
    assert matches("Grey Hills", "It starts in the grey hills.")
    assert matches("Monday", "It is closed on Mondays")
    assert not matches("blue", "blueberry")


def test_score_parts_checks_each_expected_answer_against_each_line() -> None:
    final = "1. What is 2 + 2? 4\n2. 9; 3. unknown"
    assert score_parts(["4", "9", "5"], final) == [True, True, False]
