"""What the hardening costs and what it holds, measured in one run.

1. Sandbox overhead: ``run_python("print(1)")`` (every layer of the confinement) against a
   plain ``python -I -c "print(1)"`` subprocess, interleaved, median of ``--runs`` each.
2. The review's bombs under the sandbox: 8 forked children × 400 MB with ``memory_mb=512``
   (peak of the whole tree, reason), and 64 files × 8 MB with ``max_disk_mb=32`` (bytes
   written, reason).
3. ``langmarl serve``: a 50 MB body with Content-Length and chunked — status, seconds to the
   refusal, server RSS before and after.
4. ``langmarl serve`` with abandoned requests: an 8-token request alone, then the same while
   four 1000-token requests whose clients gave up after 1 s are (or were) pending; and the
   server's CPU seconds in the 5 s after they were abandoned.
5. ``langmarl dashboard``: an unauthenticated 200 MB POST (Content-Length, then chunked):
   status and the server's RSS before and after.
6. A job's start with the filtered environment (issue 39): a job command
   (``python -c pass``) started through ``run_command`` with this process's whole
   environment against the allow-listed one (``job_environment``), interleaved, median of
   ``--runs`` each; and the variables each gets.

Usage: python benchmarks/hardening.py [--runs 20] [--no-server]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from machine_load import print_machine  # beside this script

from langmarl.sandbox import SandboxLimits, run_python
from langmarl.testing.processes import cpu_seconds, free_port, rss_mb

MB = 1024 * 1024
MEMORY_BOMB = """
import os, time
for index in range(8):
    if os.fork() == 0:
        block = b"x" * (400 * 1024 * 1024)
        print("allocated", index, flush=True)
        time.sleep(30)
        os._exit(0)
for _ in range(8):
    os.wait()
"""
DISK_BOMB = """
written = 0
try:
    for index in range(64):
        with open(f"fill{index}", "wb", buffering=0) as handle:
            for _ in range(8):
                written += handle.write(b"x" * (1024 * 1024))
finally:
    print(written, flush=True)
"""


def sandbox_overhead(runs: int) -> None:
    plain, boxed = [], []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "print(1)"], check=True, capture_output=True)
        plain.append(time.perf_counter() - began)
        began = time.perf_counter()
        result = run_python("print(1)")
        boxed.append(time.perf_counter() - began)
        assert result.ok, result.stderr
    p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    print(f"sandbox: plain subprocess {p:.0f} ms, run_python {b:.0f} ms (median of {runs}), ")
    print(f"  overhead {b - p:+.0f} ms ({b / p:.2f}x); layers missing: {result.degraded or 'none'}")


def job_start(runs: int) -> None:
    from langmarl.jobs.environment import job_environment
    from langmarl.jobs.process import run_command

    whole, filtered = [], []
    with tempfile.TemporaryFile() as log:
        for _ in range(runs):
            for env, times in ((dict(os.environ), whole), (None, filtered)):
                began = time.perf_counter()
                chosen = env if env is not None else job_environment(1)
                code = run_command([sys.executable, "-c", "pass"], env=chosen, log=log,
                                   stop_requested=lambda: False)  # fmt: skip
                times.append(time.perf_counter() - began)
                assert code == 0
    w, f = statistics.median(whole) * 1000, statistics.median(filtered) * 1000
    print(
        f"job start: whole environment {w:.0f} ms ({len(os.environ)} variables), filtered "
        f"{f:.0f} ms ({len(job_environment(1))} variables), median of {runs}"
    )


def bombs() -> None:
    began = time.perf_counter()
    memory = run_python(MEMORY_BOMB, limits=SandboxLimits(memory_mb=512, timeout_s=60))
    print(
        f"memory bomb (8 x 400 MB, memory_mb=512): {memory.killed_reason}, tree peak "
        f"{memory.memory_peak_mb} MiB, {memory.stdout.count('allocated')} child allocated, "
        f"stopped after {time.perf_counter() - began:.1f} s"
    )
    limits = SandboxLimits(max_disk_mb=32, max_file_bytes=16 * MB, timeout_s=30)
    disk = run_python(DISK_BOMB, limits=limits)
    written = int(disk.stdout.split()[0]) / MB if disk.stdout.strip() else float("nan")
    print(f"disk bomb (64 x 8 MB, max_disk_mb=32): {disk.killed_reason}, {written:.1f} MiB written")


def server_body_cap() -> None:
    port = free_port()
    env = {**os.environ, "LANGMARL_TORCH_THREADS": "1"}
    command = [sys.executable, "-m", "langmarl.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, "server down"
                time.sleep(0.3)
        body = json.dumps({"messages": [{"role": "user", "content": "x" * (50 * MB)}]}).encode()
        headers = {"Content-Type": "application/json"}
        before = rss_mb(process.pid)
        began = time.perf_counter()
        declared = httpx.post(f"{url}/chat/completions", content=body, headers=headers)
        declared_s = time.perf_counter() - began

        def chunks() -> Iterator[bytes]:
            for start in range(0, len(body), MB):
                yield body[start : start + MB]

        began = time.perf_counter()
        chunked = httpx.post(f"{url}/chat/completions", content=chunks(), headers=headers)
        chunked_s = time.perf_counter() - began
        after = rss_mb(process.pid)
        print(
            f"serve, 50 MB body: Content-Length -> {declared.status_code} in {declared_s:.3f} s, "
            f"chunked -> {chunked.status_code} in {chunked_s:.3f} s; "
            f"server RSS {before:.0f} -> {after:.0f} MB"
        )
    finally:
        process.terminate()
        process.wait(timeout=30)


def _served(command: list[str], ready: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server command with ``--port 0``; its URL once it prints ``ready``."""
    env = {**os.environ, "LANGMARL_TORCH_THREADS": "1"}
    process = subprocess.Popen([*command, "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, env=env)  # fmt: skip
    assert process.stdout is not None
    for line in iter(process.stdout.readline, b""):
        if ready.encode() in line:
            return process, "http://127.0.0.1:" + line.decode().split(ready)[1].split("/")[0]
    raise RuntimeError("the server did not start")


def serve_abandoned() -> None:
    process, base = _served([sys.executable, "-m", "langmarl.cli", "serve"], "http://127.0.0.1:")
    url = f"{base.split()[0]}/v1/chat/completions"
    short = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
    long = {"messages": [{"role": "user", "content": "Write a long story."}],
            "max_tokens": 1000, "temperature": 1.0}  # fmt: skip
    try:
        httpx.post(url, json=short, timeout=300)  # warm
        began = time.perf_counter()
        httpx.post(url, json=short, timeout=300)
        alone = time.perf_counter() - began
        for _ in range(4):
            with contextlib.suppress(httpx.ReadTimeout):  # the client gives up after 1 s
                httpx.post(url, json=long, timeout=httpx.Timeout(30, read=1.0))
        before = cpu_seconds(process.pid)
        time.sleep(5)
        spent = cpu_seconds(process.pid) - before
        began = time.perf_counter()
        reply = httpx.post(url, json=short, timeout=300)
        after = time.perf_counter() - began
        print(f"serve, 8-token request: alone {alone:.2f} s; after 4 abandoned 1000-token "
              f"requests {after:.2f} s (status {reply.status_code}); server CPU in the 5 s "
              f"after they were abandoned: {spent:.2f} s")  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)


def dashboard_body(tmp: Path) -> None:
    command = [sys.executable, "-m", "langmarl.cli", "dashboard", "--runs-dir", str(tmp)]
    process, base = _served(command, "http://127.0.0.1:")
    port = int(base.split(":")[2].split()[0])
    try:
        before = rss_mb(process.pid)
        head = (f"POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: "
                f"application/json\r\nContent-Length: {200 * MB}\r\n\r\n")  # fmt: skip
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(head.encode())
            declared = sock.recv(64).split(b"\r\n")[0].decode()

        def chunks() -> Iterator[bytes]:
            for _ in range(200):
                yield b" " * MB

        try:
            chunked = str(httpx.post(f"http://127.0.0.1:{port}/api/jobs", content=chunks(),
                                     headers={"Content-Type": "application/json"},
                                     timeout=60).status_code)  # fmt: skip
        except httpx.TransportError as exc:
            chunked = f"closed ({type(exc).__name__})"
        after = rss_mb(process.pid)
        print(f"dashboard, unauthenticated 200 MB POST: Content-Length -> {declared}; chunked "
              f"-> {chunked}; server RSS {before:.0f} -> {after:.0f} MB")  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    sandbox_overhead(args.runs)
    job_start(args.runs)
    bombs()
    if not args.no_server:
        server_body_cap()
        serve_abandoned()
        with tempfile.TemporaryDirectory() as tmp:
            dashboard_body(Path(tmp))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    print_machine()
    main()
