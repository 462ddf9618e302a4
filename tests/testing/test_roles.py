"""The role helpers recognise every built-in language-space system prompt."""

import pytest

from langmarl.testing.roles import role_of_body, role_of_system, role_responder
from langmarl.textgrad import prompts


@pytest.mark.parametrize(
    ("system", "role"),
    [
        (prompts.CRITIC_SYSTEM, "critic"),
        (prompts.GRADIENT_SYSTEM, "gradient"),
        (prompts.AGGREGATE_SYSTEM, "aggregate"),
        (prompts.REWRITE_SYSTEM, "rewrite"),
        ("You are the answerer of a team.", "actor"),
    ],
)
def test_each_built_in_prompt_maps_to_its_role(system: str, role: str) -> None:
    assert role_of_system(system) == role
    assert role_of_body({"messages": [{"role": "system", "content": system}]}) == role


def test_responder_answers_by_role() -> None:
    respond = role_responder({"critic": "{}", "actor": "Answer: 5"})
    assert respond({"messages": [{"role": "system", "content": prompts.CRITIC_SYSTEM}]}) == "{}"
    assert respond({"messages": []}) == "Answer: 5"
