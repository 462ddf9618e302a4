"""Credit parsing: JSON, bracket markers, documented fallback."""

from hypothesis import given
from hypothesis import strategies as st

from langmarl.textgrad.credit import parse_credit
from langmarl.textgrad.optimizer import PolicyGradientOptimizer

AGENTS = ["solver", "checker"]


def test_json_object_inside_a_fence() -> None:
    reply = 'Here:\n```json\n{"Solver": "show work", "checker": {"credit": 0.2, "note": "x"}}\n```'
    per_agent, status = parse_credit(reply, AGENTS)
    assert status == "json"
    assert per_agent == {"solver": "show work", "checker": "credit: 0.2; note: x"}


def test_json_list_of_agent_objects() -> None:
    reply = '[{"agent": "solver", "feedback": "good"}, {"agent": "checker", "feedback": "bad"}]'
    assert parse_credit(reply, AGENTS) == ({"solver": "good", "checker": "bad"}, "json")


def test_bracket_markers() -> None:
    reply = "[Solver]: add the numbers.\nmore\n[Agent checker] verify the sum."
    per_agent, status = parse_credit(reply, AGENTS)
    assert status == "markers"
    assert per_agent == {"solver": "add the numbers.\nmore", "checker": "verify the sum."}


def test_missing_agent_gets_the_whole_reply() -> None:
    reply = '{"solver": "ok"}'
    per_agent, _ = parse_credit(reply, AGENTS)
    assert per_agent["checker"] == reply


def test_fallback_is_the_whole_reply_for_everyone() -> None:
    reply = "The team did fine."
    assert PolicyGradientOptimizer.parse_credit_response(reply, AGENTS) == {
        "solver": reply,
        "checker": reply,
    }
    assert parse_credit(reply, AGENTS)[1] == "fallback"


@given(st.text(max_size=300))
def test_parsing_never_raises_and_covers_every_agent(reply: str) -> None:
    per_agent, status = parse_credit(reply, AGENTS)
    assert set(per_agent) == set(AGENTS)
    assert status in {"json", "markers", "fallback"}


def test_markers_anywhere_in_a_line() -> None:
    reply = (
        "Overall fine.\nFeedback for [Solver]: add the numbers.\nmore\n"
        "- **[checker]** verify the sum.\n"
    )
    per_agent, status = parse_credit(reply, AGENTS)
    assert status == "markers"
    # the words introducing a marker belong to no section
    assert per_agent == {"solver": "add the numbers.\nmore", "checker": "verify the sum."}


def test_two_markers_on_one_line_and_bold_colon() -> None:
    reply = "**[solver]:** ok. [checker]: recheck.\n**[solver]:**\n- **[checker]** and the units"
    per_agent, _ = parse_credit(reply, AGENTS)
    assert per_agent == {"solver": "ok.", "checker": "recheck.\nand the units"}
