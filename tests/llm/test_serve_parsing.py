"""Request parsing of `langmarl serve`, offline: what is accepted and how it is read."""

from __future__ import annotations

from typing import Any

import pytest

from langmarl.llm.server import ServeConfig
from langmarl.llm.server.errors import RequestError
from langmarl.llm.server.parsing import chat_requests, check_limits, decode_json, parse_request

HI = {"role": "user", "content": "hi"}


def parsed(**fields: Any) -> Any:
    request = parse_request({"messages": [HI], **fields})
    check_limits(request, ServeConfig())
    return request


def refusal(**fields: Any) -> RequestError:
    with pytest.raises(RequestError) as caught:
        parsed(**fields)
    return caught.value


def test_a_request_becomes_one_backend_request_per_choice() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    messages = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": parts}]
    request = parse_request(
        {"messages": messages, "n": 3, "seed": 7, "stop": "x", "max_completion_tokens": 9}
    )
    requests = chat_requests(request, ServeConfig())
    assert [r.seed for r in requests] == [7, 8, 9]
    assert requests[0].messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "a\nb"},
    ]
    assert requests[0].stop == ["x"] and requests[0].max_tokens == 9


def test_neutral_values_of_unsupported_features_and_ignored_fields_are_accepted() -> None:
    parsed(
        tools=[], tool_choice="none", response_format={"type": "text"}, logprobs=False,
        presence_penalty=0.0, frequency_penalty=0, user="u", metadata={"k": "v"}, store=False,
        model="gpt-4o", temperature=2, top_p=1, max_tokens=2048,
    )  # fmt: skip
    assert parsed().max_tokens is None
    assert chat_requests(parsed(), ServeConfig()).pop().max_tokens == 256


def test_server_limits_name_the_field() -> None:
    assert refusal(max_tokens=4, max_completion_tokens=5).param == "max_completion_tokens"
    assert refusal(stream_options={"include_usage": True}).param == "stream_options"
    assert refusal(max_tokens=2049).param == "max_tokens"
    assert refusal(n=5).param == "n"
    assert refusal(logit_bias={"5": 10}).code == "unsupported_parameter"


def test_unknown_fields_suggest_a_known_one() -> None:
    assert "did you mean 'content'" in refusal(messages=[{"role": "user", "contnet": "x"}]).message
    assert refusal(best_of=2).message == "Unrecognized request argument supplied: best_of"


def test_nested_errors_name_the_path_and_show_the_value() -> None:
    error = refusal(messages=[HI, {"role": "user", "content": [{"type": "text", "text": 3}]}])
    assert error.param == "messages[1].content[0].text"
    assert "(got 3)" in error.message and error.code == "invalid_type"


@pytest.mark.parametrize(
    "content_type",
    [None, "application/json", "application/json; charset=utf-8", "application/x+json"],
)
def test_json_content_types_are_accepted(content_type: str | None) -> None:
    assert decode_json(b'{"a": 1}', content_type) == {"a": 1}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_other_content_types_are_refused(content_type: str) -> None:
    with pytest.raises(RequestError, match="application/json"):
        decode_json(b'{"a": 1}', content_type)
