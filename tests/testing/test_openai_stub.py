"""The scripted OpenAI server stays quiet when a client it plays ``hang`` for hangs up."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from langmarl.testing.openai_stub import OpenAIStub


def _answering() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "process_request_thread" in t.name}


def test_a_client_that_timed_out_on_hang_leaves_nothing_on_stderr(capsys) -> None:
    body = json.dumps({"model": "hang", "messages": []}).encode()
    others = _answering()  # other tests' servers may still hold connections
    with OpenAIStub(hang_seconds=0.5) as stub:
        request = urllib.request.Request(f"{stub.base_url}/chat/completions", data=body)
        with pytest.raises(TimeoutError):
            urllib.request.urlopen(request, timeout=0.1)  # hangs up before the answer
        deadline = time.monotonic() + 30
        while _answering() - others and time.monotonic() < deadline:  # answering no one
            time.sleep(0.05)
        assert not _answering() - others
        assert stub.hits["hang"] == 1
    assert capsys.readouterr().err == ""
