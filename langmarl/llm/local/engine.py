"""`LocalEngine`: the embedded model behind a dynamic batcher.

Requests are queued; a worker thread takes the first waiting request, waits up to
``batch_window`` seconds for more (up to ``max_batch``), and generates them together in one
batched decoding loop. Requests that arrive while a batch runs form the next batch, so
throughput rises with concurrency without delaying a lone request by more than the window.

Requests are isolated from their batch companions: bad settings are refused by ``GenJob``
before queueing, a request that fails on its own ends alone (see ``generation``), and when
the shared model call fails, the batch's requests are retried one at a time so only the one
that breaks the model fails (a streaming request that already sent text cannot be replayed
and gets the batch's error). The worker thread survives every failure.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langmarl.core.cpu import ThreadGovernor, explicit_threads
from langmarl.core.errors import ContextLengthError
from langmarl.llm.local.engines import EngineKind, Generate, load_engine, resolve_engine
from langmarl.llm.local.generation import GenJob, GenOutput, JobCancelled
from langmarl.llm.local.weights import MODEL_NAME
from langmarl.llm.types import Message, message_text

log = logging.getLogger(__name__)


Loader = Callable[[Any], tuple[Any, Any]]
"""``loader(cache_dir) -> (model, tokenizer)``."""


@dataclass
class _Pending:
    job: GenJob
    future: concurrent.futures.Future[GenOutput]
    streamed: bool = False  # some text already went to the job's on_text


@dataclass
class _Call:
    """A function of ``(model, tokenizer)`` to run on the worker thread, between batches."""

    fn: Callable[[Any, Any], Any]
    future: concurrent.futures.Future[Any]


LOAD_LOCK = threading.Lock()
"""Held while an engine loads its model. Two engines loading at once (two agents, each on
its own MAGRPO checkpoint) left parameters on the meta device — "Cannot copy out of meta
tensor" at the first request, measured here: transformers' and peft's loaders patch
process-wide state while they build a model, so loads take turns."""


class LocalEngine:
    """The embedded model, loaded once, serving batched requests from a worker thread.

    Args:
        cache_dir: Where the converted weights are cached (default: ``$LANGMARL_CACHE_DIR``
            or ``~/.cache/langmarl``).
        max_batch: Most requests generated together.
        batch_window: Seconds to wait for companions after the first request of a batch.
        threads: torch intra-op threads (default: ``$LANGMARL_TORCH_THREADS``, else the cores
            free when it starts, re-measured between batches: :mod:`langmarl.core.cpu`).
        loader: Loads ``(model, tokenizer)`` from ``cache_dir`` (default: the embedded
            SmolLM2 weights; :func:`shared_engine` passes another model's; tests pass a fake).
        model_name: The name requests and errors report.
        engine_kind: How the loaded model runs (:mod:`langmarl.llm.local.engines`; default: the
            environment's or default engine, ``"transformers"`` for a custom ``loader``).
    """

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        max_batch: int = 16,
        batch_window: float = 0.01,
        threads: int | None = None,
        loader: Loader | None = None,
        model_name: str = MODEL_NAME,
        engine_kind: EngineKind | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.loader = loader
        self.model_name = model_name
        self.engine_kind: EngineKind = engine_kind or resolve_engine(None, loader is None)
        self._generate: Generate | None = None
        self.max_batch = max_batch
        self.batch_window = batch_window
        self.threads = explicit_threads(threads) or 0  # 0: measured when the worker starts
        self._governor: ThreadGovernor | None = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.context_length = 0
        self.batches = 0
        self._queue: queue.Queue[_Pending | _Call | None] = queue.Queue()
        self._held: _Call | None = None  # met while collecting a batch: runs right after it
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def start(self) -> LocalEngine:
        """Load the model (converting it on first use) and start the worker. Idempotent.

        The worker thread loads the model itself and is the only thread that runs it: torch's
        OpenMP threads belong to the thread that first used them, and a second thread using
        torch then competes with them (measured here: one request ran at 18 instead of 31
        tokens/s when the model was loaded in another thread).

        Raises:
            Exception: whatever loading the model raised (the engine stays stopped).
        """
        with self._start_lock:
            if self._thread is not None:
                return self
            ready = threading.Event()
            failure: list[BaseException] = []
            thread = threading.Thread(
                target=self._run, args=(ready, failure), name="langmarl-local", daemon=True
            )
            thread.start()
            ready.wait()
            if failure:
                thread.join()
                raise failure[0]
            self._thread = thread
        return self

    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        try:
            self._governor = ThreadGovernor(self.threads or None)
            self.threads = self._governor.adjust()
            began = time.monotonic()
            with LOAD_LOCK:  # transformers/peft loading is not thread-safe (see LOAD_LOCK)
                self.model, self.tokenizer, self._generate = load_engine(
                    self.engine_kind, self.loader, self.cache_dir, self.threads
                )
            self.context_length = int(self.model.config.max_position_embeddings)
            log.info(
                "%s loaded in %.1f s (engine %s, %d torch threads)",
                self.model_name,
                time.monotonic() - began,
                self.engine_kind,
                self.threads,
            )
        except BaseException as exc:  # handed to start()'s caller
            failure.append(exc)
            return
        finally:
            ready.set()
        self._work()

    def close(self) -> None:
        """Stop the worker after the queued requests."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def encode_chat(
        self, messages: list[Message], max_new_tokens: int, truncate: bool = True
    ) -> list[int]:
        """Token ids of ``messages`` under the chat template, with the generation prompt.

        A prompt that leaves fewer than ``max_new_tokens`` of the context is truncated from
        the left (the oldest tokens go first) with a warning, or refused if not ``truncate``.

        Raises:
            ContextLengthError: if the prompt does not fit and ``truncate`` is false.
        """
        self.start()
        plain = [{"role": m["role"], "content": message_text(m)} for m in messages]
        encoded = self.tokenizer.apply_chat_template(
            plain, add_generation_prompt=True, tokenize=True
        )
        ids = list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded)
        room = max(self.context_length - max_new_tokens, 1)
        if len(ids) > room and not truncate:
            raise ContextLengthError(
                "local",
                self.model_name,
                f"the prompt has {len(ids)} tokens, and with max_tokens {max_new_tokens} it "
                f"exceeds the context of {self.context_length} tokens: shorten the messages "
                "or lower max_tokens",
            )
        if len(ids) > room:
            log.warning(
                "Prompt of %d tokens exceeds the embedded model's context (%d) minus "
                "max_tokens (%d); keeping the last %d tokens",
                len(ids),
                self.context_length,
                max_new_tokens,
                room,
            )
            ids = ids[-room:]
        return ids

    def submit(self, job: GenJob) -> concurrent.futures.Future[GenOutput]:
        """Queue ``job``; the future resolves when its batch finishes.

        The future holds ``job``'s own failure, if it fails: never a batch companion's.
        """
        self.start()
        future: concurrent.futures.Future[GenOutput] = concurrent.futures.Future()
        pending = _Pending(job, future)
        if job.on_text is not None:
            pending.job = dataclasses.replace(job, on_text=_noting_streamed(pending, job.on_text))
        self._queue.put(pending)
        return future

    def call(self, fn: Callable[[Any, Any], Any]) -> concurrent.futures.Future[Any]:
        """Run ``fn(model, tokenizer)`` on the worker thread, the only one that runs the model
        (between batches); the future holds its result or its exception."""
        self.start()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put(_Call(fn, future))
        return future

    def queued(self) -> int:
        """Jobs submitted and not yet taken into a batch."""
        return self._queue.qsize()

    async def agenerate(self, job: GenJob) -> GenOutput:
        """Async ``submit``: await the completion of ``job``."""
        return await asyncio.wrap_future(self.submit(job))

    def _collect(self, first: _Pending) -> list[_Pending]:
        batch = [first]
        deadline = time.monotonic() + self.batch_window
        while len(batch) < self.max_batch:
            try:
                item = self._queue.get(timeout=max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # let the outer loop see the stop signal
                break
            if isinstance(item, _Call):
                self._held = item
                break
            batch.append(item)
        return batch

    def _work(self) -> None:
        while True:
            first = self._held or self._queue.get()
            self._held = None
            if first is None:
                return
            if isinstance(first, _Call):
                self._run_call(first)
                continue
            batch = [p for p in self._collect(first) if p.future.set_running_or_notify_cancel()]
            if batch:
                self._run_batch(batch)

    def _run_call(self, call: _Call) -> None:
        if not call.future.set_running_or_notify_cancel():
            return
        try:
            with self._working():
                result = call.fn(self.model, self.tokenizer)
        except Exception as exc:
            call.future.set_exception(exc)
        else:
            call.future.set_result(result)

    def _run_batch(self, batch: list[_Pending]) -> None:
        """Generate ``batch`` and resolve each future with its own output or error."""
        try:
            with self._working():
                results = self._generate_jobs([p.job for p in batch])
        except Exception as exc:  # the shared model call failed
            results = self._one_at_a_time(batch, exc)
        self.batches += 1
        for pending, result in zip(batch, results, strict=True):
            if isinstance(result, GenOutput):
                pending.future.set_result(result)
                continue
            if isinstance(result, JobCancelled):
                log.debug("Embedded model request cancelled by its reader")
            else:
                log.warning("Embedded model request failed alone in its batch: %r", result)
            pending.future.set_exception(result)

    def _working(self) -> contextlib.AbstractContextManager[object]:
        """While a batch runs: torch's threads follow the free cores (and are shared with
        the process's other working engines) unless set explicitly."""
        return self._governor if self._governor is not None else contextlib.nullcontext()

    def _generate_jobs(self, jobs: list[GenJob]) -> list[GenOutput | Exception]:
        if self._generate is None:
            raise RuntimeError("the engine is not started")
        return self._generate(jobs)

    def _one_at_a_time(
        self, batch: list[_Pending], error: Exception
    ) -> list[GenOutput | Exception]:
        """Retry the requests of a failed batch alone, so only a culprit fails."""
        if len(batch) == 1:
            log.error("Embedded model generation failed", exc_info=error)
            return [error]
        log.warning("A batch of %d failed (%r); retrying its requests alone", len(batch), error)
        results: list[GenOutput | Exception] = []
        for pending in batch:
            if pending.streamed:  # its reader already has text: a replay would repeat it
                results.append(error)
                continue
            try:
                results += self._generate_jobs([pending.job])
            except Exception as exc:
                log.error("Embedded model generation failed", exc_info=exc)
                results.append(exc)
        return results


def _noting_streamed(pending: _Pending, on_text: Callable[[str], None]) -> Callable[[str], None]:
    """``on_text`` that first records that ``pending`` has streamed text."""

    def note(piece: str) -> None:
        pending.streamed = True
        on_text(piece)

    return note


_ENGINES: dict[str, LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def shared_engine(
    cache_dir: str | Path | None = None,
    model_string: str | None = None,
    engine: str | None = None,
) -> LocalEngine:
    """The process's engine for ``model_string`` (default: the embedded model), ``cache_dir``
    and ``engine`` (a name of :mod:`langmarl.llm.local.engines`; default: the environment's
    or the model's default): one copy of each model in memory however many clients.

    Kept process-wide on purpose: a model takes up to GBs and batching only helps when every
    client's requests meet in one queue.

    Raises:
        ConfigError: if ``model_string`` names no model (see :func:`resolve_model`) or
            ``engine`` no engine.
    """
    from langmarl.llm.local.models import load_source, resolve_model

    source = resolve_model(model_string)
    kind = resolve_engine(engine, embedded=source.kind == "embedded")
    if source.kind != "embedded" and kind == "transformers" and not engine:
        log.info("local engine: %s runs as loaded (fp32 transformers)", source.label)
    cache = str(Path(cache_dir).expanduser().resolve()) if cache_dir else ""
    key = f"{source.kind}:{source.location}|{cache}|{kind}"
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            loader = None if source.kind == "embedded" else functools.partial(load_source, source)
            _ENGINES[key] = LocalEngine(
                cache_dir, loader=loader, model_name=source.label, engine_kind=kind
            )
        return _ENGINES[key]
