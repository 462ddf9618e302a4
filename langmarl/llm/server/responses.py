"""Running a validated request on the engine and shaping the OpenAI reply.

A plain request answers with one ``chat.completion``. A streaming one answers with
server-sent ``chat.completion.chunk`` events and always ends with ``data: [DONE]``: if
generation fails after the stream has started, an ``{"error": ...}`` event comes first (the
``openai`` client raises it as ``APIError``). When the reader goes away, or the request's time
(``request_timeout_s``) runs out, its jobs stop at their next token and its queued ones never
start (:class:`Stopper`): a client that leaves takes its generation with it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from langmarl.core.errors import ContextLengthError
from langmarl.llm.local.backend import LocalBackend
from langmarl.llm.local.generation import GenJob, GenOutput, JobCancelled, TextCallback
from langmarl.llm.server.errors import SERVER_ERROR, RequestError, server_fault, sse_error
from langmarl.llm.types import ChatRequest

log = logging.getLogger(__name__)

DONE = "data: [DONE]\n\n"

Event = tuple[int, "str | asyncio.Future[GenOutput]"]
"""``(choice index, a text piece or the choice's finished future)``."""


WATCH_S = 0.25
"""How often a plain request checks whether its client is still there."""


class Stopper:
    """Ends one request's generation early: its client left, or its time ran out."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.reason: str | None = None

    def stop(self, reason: str) -> None:
        self.reason = self.reason or reason

    def check(self) -> None:
        """Raise :class:`JobCancelled` once the request is to stop (called per new text)."""
        if self.reason is None and time.monotonic() > self.deadline:
            self.reason = "deadline"
        if self.reason is not None:
            raise JobCancelled(self.reason)

    def wrap(self, on_text: TextCallback | None) -> TextCallback:
        """``on_text`` that first checks this stopper."""

        def guarded(piece: str) -> None:
            self.check()
            if on_text is not None:
                on_text(piece)

        return guarded

    def timeout_error(self) -> RequestError:
        return RequestError(
            f"Generation took longer than the server's request_timeout_s ({self.timeout_s:g} "
            "s) and was stopped: ask for fewer max_tokens, or start the server with a larger "
            "--request-timeout",
            status=504,
            code="timeout",
            kind=SERVER_ERROR,
        )


class StreamSink:
    """Carries a stream's events from the engine thread to the response, in order.

    Text pieces are queued with ``call_soon_threadsafe`` before the engine resolves the
    choice's future, so a choice's end always comes after its last piece.
    """

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.closed = False

    def on_text(self, index: int) -> TextCallback:
        """The ``on_text`` callback of choice ``index``; raises once the stream is closed."""

        def put(piece: str) -> None:
            if self.closed:
                raise JobCancelled("the stream's reader has gone")
            self.loop.call_soon_threadsafe(self.events.put_nowait, (index, piece))

        return put

    def watch(self, index: int, future: asyncio.Future[GenOutput]) -> None:
        """Queue ``future`` as choice ``index``'s end event once it is done."""

        def finished(done: asyncio.Future[GenOutput]) -> None:
            if not done.cancelled():
                done.exception()  # retrieved here, so asyncio does not warn if unread
            self.events.put_nowait((index, done))

        future.add_done_callback(finished)


async def build_jobs(
    backend: LocalBackend,
    requests: list[ChatRequest],
    stopper: Stopper,
    sink: StreamSink | None = None,
) -> list[GenJob]:
    """The engine jobs of a request's choices (tokenizing off the event loop).

    Raises:
        RequestError: a 400 for a prompt the context cannot hold (OpenAI refuses those too;
            the server does not cut a conversation behind its client's back), a 500 if
            preparing the prompt failed otherwise.
    """

    def build() -> list[GenJob]:
        return [
            backend.job(
                request, stopper.wrap(sink.on_text(index) if sink else None), truncate=False
            )
            for index, request in enumerate(requests)
        ]

    try:
        return await asyncio.to_thread(build)
    except ContextLengthError as exc:
        raise RequestError(
            f"This model's context is too short for the request: {exc.cause}",
            param="messages",
            code="context_length_exceeded",
        ) from None
    except Exception as exc:
        log.error("Preparing the prompt failed", exc_info=exc)
        raise server_fault(exc, "preparing the prompt") from exc


async def complete(
    backend: LocalBackend,
    jobs: list[GenJob],
    request_id: str,
    stopper: Stopper,
    gone: Callable[[], Awaitable[bool]],
) -> dict[str, Any]:
    """Generate every choice and return the ``chat.completion`` body; stop them all once
    ``gone()`` says the client has left or the request's time runs out.

    Raises:
        RequestError: a 504 when time ran out, a 499 when the client left, a 500 if
            generation failed.
    """
    submitted = [backend.engine.submit(job) for job in jobs]
    futures = [asyncio.wrap_future(future) for future in submitted]
    while True:
        _, waiting = await asyncio.wait(futures, timeout=WATCH_S)
        if not waiting:
            break
        if stopper.reason is None and await gone():
            stopper.stop("the client has gone")
        if stopper.reason is None and time.monotonic() > stopper.deadline:
            stopper.stop("deadline")
        if stopper.reason is not None:
            for future in submitted:
                future.cancel()  # those still queued never start; running ones stop
    if stopper.reason == "deadline":
        raise stopper.timeout_error()
    if stopper.reason is not None:
        raise RequestError("The client closed the connection", status=499, code="client_gone")
    results = [f.exception() or f.result() for f in futures]
    outputs = []
    for result in results:
        if isinstance(result, BaseException):
            log.error("Chat completion %s failed", request_id, exc_info=result)
            raise server_fault(result, "generating") from result
        outputs.append(result)
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": backend.engine.model_name,
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": output.text},
                "finish_reason": output.finish_reason,
            }
            for index, output in enumerate(outputs)
        ],
        "usage": usage(jobs, outputs),
    }


async def stream(
    backend: LocalBackend,
    jobs: list[GenJob],
    sink: StreamSink,
    request_id: str,
    stopper: Stopper,
    include_usage: bool = False,
) -> AsyncIterator[str]:
    """Server-sent events of every choice, ending with ``[DONE]`` whatever happens."""
    chunk = _Chunks(request_id, backend.engine.model_name)
    try:
        for index, job in enumerate(jobs):
            sink.watch(index, asyncio.wrap_future(backend.engine.submit(job)))
            yield chunk(index, {"role": "assistant", "content": ""})
        outputs: dict[int, GenOutput] = {}
        while len(outputs) < len(jobs):
            index, event = await sink.events.get()
            if isinstance(event, str):
                yield chunk(index, {"content": event})
                continue
            outputs[index] = event.result()  # raises the choice's failure
            yield chunk(index, {}, outputs[index].finish_reason)
        if include_usage:
            yield chunk.usage(usage(jobs, [outputs[i] for i in range(len(jobs))]))
    except JobCancelled:
        yield sse_error(stopper.timeout_error())  # the reader is still there: time ran out
    except Exception as exc:
        log.error("Streamed chat completion %s failed", request_id, exc_info=exc)
        yield sse_error(server_fault(exc, "generating"))
    finally:
        sink.closed = True  # stops this stream's remaining jobs at their next token
    yield DONE


def usage(jobs: list[GenJob], outputs: list[GenOutput]) -> dict[str, int]:
    """OpenAI usage: the prompt once, the completion tokens of every choice."""
    prompt = len(jobs[0].prompt_ids)
    completion = sum(len(output.token_ids) for output in outputs)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Chunks:
    """Formats the ``chat.completion.chunk`` events of one stream."""

    def __init__(self, request_id: str, model: str) -> None:
        self.head = {
            "id": request_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

    def __call__(self, index: int, delta: dict[str, str], finish: str | None = None) -> str:
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({**self.head, 'choices': [choice]})}\n\n"

    def usage(self, counts: dict[str, int]) -> str:
        return f"data: {json.dumps({**self.head, 'choices': [], 'usage': counts})}\n\n"
