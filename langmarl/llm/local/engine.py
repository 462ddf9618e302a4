"""`LocalEngine`: the embedded model behind a dynamic batcher.

Requests are queued; a worker thread takes the first waiting request, waits up to
``batch_window`` seconds for more (up to ``max_batch``), and generates them together in one
batched decoding loop. Requests that arrive while a batch runs form the next batch, so
throughput rises with concurrency without delaying a lone request by more than the window.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langmarl.llm.local.generation import GenJob, GenOutput, generate_batch
from langmarl.llm.types import Message, message_text

log = logging.getLogger(__name__)

THREADS_ENV_VAR = "LANGMARL_TORCH_THREADS"


@dataclass
class _Pending:
    job: GenJob
    future: concurrent.futures.Future[GenOutput]


class LocalEngine:
    """The embedded model, loaded once, serving batched requests from a worker thread.

    Args:
        cache_dir: Where the converted weights are cached (default: ``$LANGMARL_CACHE_DIR``
            or ``~/.cache/langmarl``).
        max_batch: Most requests generated together.
        batch_window: Seconds to wait for companions after the first request of a batch.
        threads: torch intra-op threads (default: ``$LANGMARL_TORCH_THREADS`` or all cores).
    """

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        max_batch: int = 16,
        batch_window: float = 0.01,
        threads: int | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.max_batch = max_batch
        self.batch_window = batch_window
        self.threads = threads or int(os.environ.get(THREADS_ENV_VAR, 0)) or os.cpu_count() or 1
        self.model: Any = None
        self.tokenizer: Any = None
        self.context_length = 0
        self.batches = 0
        self._queue: queue.Queue[_Pending | None] = queue.Queue()
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
            import torch

            from langmarl.llm.local.weights import load_model

            torch.set_num_threads(self.threads)
            began = time.monotonic()
            self.model, self.tokenizer = load_model(self.cache_dir)
            self.context_length = int(self.model.config.max_position_embeddings)
            log.info("Embedded model loaded in %.1f s", time.monotonic() - began)
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

    def encode_chat(self, messages: list[Message], max_new_tokens: int) -> list[int]:
        """Token ids of ``messages`` under the chat template, with the generation prompt.

        A prompt that leaves fewer than ``max_new_tokens`` of the context is truncated from
        the left (the oldest tokens go first) with a warning.
        """
        self.start()
        plain = [{"role": m["role"], "content": message_text(m)} for m in messages]
        encoded = self.tokenizer.apply_chat_template(
            plain, add_generation_prompt=True, tokenize=True
        )
        ids = list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded)
        room = max(self.context_length - max_new_tokens, 1)
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
        """Queue ``job``; the future resolves when its batch finishes."""
        self.start()
        future: concurrent.futures.Future[GenOutput] = concurrent.futures.Future()
        self._queue.put(_Pending(job, future))
        return future

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
            batch.append(item)
        return batch

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [p for p in self._collect(first) if p.future.set_running_or_notify_cancel()]
            if not batch:
                continue
            try:
                outputs = generate_batch(self.model, self.tokenizer, [p.job for p in batch])
            except Exception as exc:  # delivered to every waiting caller
                log.exception("Embedded model generation failed")
                for pending in batch:
                    pending.future.set_exception(exc)
                continue
            self.batches += 1
            for pending, output in zip(batch, outputs, strict=True):
                pending.future.set_result(output)


_ENGINES: dict[str, LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def shared_engine(cache_dir: str | Path | None = None) -> LocalEngine:
    """The process's engine for ``cache_dir``: one model in memory however many clients.

    Kept process-wide on purpose: the model takes ~1 GB and batching only helps when every
    client's requests meet in one queue.
    """
    key = str(Path(cache_dir).expanduser().resolve()) if cache_dir else ""
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            _ENGINES[key] = LocalEngine(cache_dir)
        return _ENGINES[key]
