import pytest

from langmarl.p2p.session.guardrails import check_guardrails, dominant_term, plateau, term_shares


def test_term_shares_sum_to_one():
    shares = term_shares({"a": 3.0, "b": -1.0})
    assert shares == {"a": 0.75, "b": 0.25}
    assert term_shares({"a": 0.0}) == {"a": 0.0}


def test_dominant_term_flags_one_term():
    warning = dominant_term({"alive": 9.5, "speed": 0.5})
    assert warning is not None and "'alive'" in warning and "95%" in warning
    assert dominant_term({"alive": 0.6, "speed": 0.4}) is None
    assert dominant_term({"only": 5.0}) is None


@pytest.mark.parametrize(
    ("values", "flagged"),
    [
        ([10.0, 10.1, 10.05], True),
        ([1.0, 5.0, 10.0], False),
        ([0.1, 0.12, 0.11], True),
        ([1.0, 1.0], False),
    ],
)
def test_plateau(values, flagged):
    assert (plateau(values) is not None) is flagged


def test_check_guardrails_collects_both():
    warnings = check_guardrails({"a": 10.0, "b": 0.1}, [5.0, 5.0, 5.0])
    assert len(warnings) == 2
