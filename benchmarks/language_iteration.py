"""One language-space training iteration against a local OpenAI-compatible server with a
fixed latency: wall time vs. the critical path, and LLM calls/tokens per role.

The server (written here: asyncio, HTTP/1.1 keep-alive) answers every chat completion after
``L`` seconds, with a reply that fits the caller's role (critic JSON, gradients, rewrites,
actor answers) and usage counted in words. The iteration runs through the real HTTP client
path (``LLMClient`` → ``openai`` → HTTP).

Critical path of one iteration = N actor rounds (agents act in sequence) + 1 critic round
+ 1 gradient round + 1 aggregation round + 1 rewrite round, each taking L.

    python benchmarks/language_iteration.py [--latency 0.2] [--episodes 10] [--agents 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from machine_load import print_machine  # beside this script

from langmarl.api import build_trainer
from langmarl.config import LanguageTaskConfig


def reply_for(body: dict[str, Any]) -> str:
    """A plausible reply for the role that sent ``body`` (recognized by its system prompt)."""
    system = body["messages"][0]["content"] if body.get("messages") else ""
    if "critic" in system:
        return '{"researcher": "Quote the fact.", "answerer": "Answer in one word."}'
    if "merge improvement advice" in system:
        return "1. Quote the fact.\n2. Answer in one word."
    if "rewrite the instructions" in system:
        return "You are the answerer. Quote the fact from the context, then answer in one word."
    if "improve the instructions" in system:
        return "Quote the relevant fact first. Then give a one-word answer."
    return "The context says Paris.\nAnswer: Paris"


class LatencyServer:
    """An OpenAI-compatible chat server answering after ``latency`` seconds."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.requests = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LatencyServer:
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=256)
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = dict(
                    line.split(": ", 1)
                    for line in head.decode("latin-1").split("\r\n")[1:]
                    if ": " in line
                )
                length = int({k.lower(): v for k, v in headers.items()}.get("content-length", 0))
                body = json.loads(await reader.readexactly(length) or b"{}")
                await asyncio.sleep(self.latency)
                self.requests += 1
                writer.write(self._response(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    @staticmethod
    def _response(body: dict[str, Any]) -> bytes:
        text = reply_for(body)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        payload = json.dumps(
            {
                "id": "bench",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "bench"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(text.split()),
                    "total_tokens": len(prompt.split()) + len(text.split()),
                },
            }
        ).encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n"
        )
        return head.encode() + payload


class ServerProcess:
    """:class:`LatencyServer` in a child process, so its work does not share this
    process's GIL with the client being measured."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> ServerProcess:
        command = [sys.executable, __file__, "--serve", "--latency", str(self.latency)]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()


def run_iteration(
    base_url: str, episodes: int, agents: int, paradigm: str, workers: int
) -> list[tuple[float, dict[str, Any]]]:
    """Wall seconds and stats of two iterations run in one event loop: the first pays for
    connection pools and client setup, the second is the steady state of a training run."""
    llm = {
        "name": "bench",
        "model_string": "bench",
        "base_url": base_url,
        "requires_api_key": False,
        "max_concurrency": 64,
        "max_retries": 0,
    }
    with tempfile.TemporaryDirectory() as tmp:
        config = LanguageTaskConfig(
            exp_name="bench",
            task_type="qa",
            num_agents=agents,
            paradigm=paradigm,
            num_iterations=2,
            trajectories_per_iteration=episodes,
            llm=llm,
            runs_dir=tmp,
            checkpoint_dir=f"{tmp}/ckpt",
            max_workers=workers,
            episode_generation_workers=workers,
            optimizer_workers=workers * agents,
            seed=0,
        )
        trainer = build_trainer(config, callbacks=[])
        first = trainer._start(2)
        return asyncio.run(_timed_iterations(trainer, [first, first + 1]))


async def _timed_iterations(trainer: Any, iterations: list[int]) -> list[tuple[float, Any]]:
    results = []
    for iteration in iterations:
        started = time.perf_counter()
        stats = await trainer.arun_iteration(iteration)
        results.append((time.perf_counter() - started, stats))
    for client in trainer._clients():  # close the HTTP pools while their loop still runs
        for pool in list(getattr(client.backend, "_clients", {}).values()):
            await pool.close()
    return results


def reference_counts(episodes: int, agents: int, paradigm: str) -> dict[str, int]:
    """LLM calls per role of one reference iteration."""
    gradients = episodes * agents if paradigm == "central_credit" else episodes
    return {"actor": episodes * agents, "critic": episodes, "optimizer": gradients + 2 * agents}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--serve", action="store_true", help="only serve (child process)")
    args = parser.parse_args()
    if args.serve:
        with LatencyServer(args.latency) as server:
            print(server.base_url, flush=True)
            threading.Event().wait()
    k, n, latency = args.episodes, args.agents, args.latency
    rounds = n + 4
    print(
        f"K={k} episodes, N={n} agents, L={latency * 1000:.0f} ms, critical path = "
        f"{rounds} rounds = {rounds * latency:.2f} s"
    )
    with ServerProcess(latency) as server:
        run_iteration(server.base_url, 2, n, "central_credit", 2)  # warm-up: imports, pools
        cases = [("central_credit", k), ("central_global", k), ("central_credit", 1)]
        for paradigm, workers in cases:
            (cold, _), (wall, stats) = run_iteration(server.base_url, k, n, paradigm, workers)
            ref = reference_counts(k, n, paradigm)
            print(
                f"\n{paradigm}, workers={workers}: steady-state wall {wall:.2f} s, ratio to "
                f"critical path {wall / (rounds * latency):.2f} (first iteration {cold:.2f} s, "
                f"ratio {cold / (rounds * latency):.2f}); phases {stats['phase_seconds']}"
            )
            print(f"  {'role':<10}{'calls':>7}{'reference':>11}{'in tok':>9}{'out tok':>9}")
            for role, usage in stats["usage_by_role"].items():
                print(
                    f"  {role:<10}{usage['calls']:>7}{ref.get(role, 0):>11}"
                    f"{usage['input_tokens']:>9}{usage['output_tokens']:>9}"
                )


if __name__ == "__main__":
    print_machine()
    main()
