"""`/api/runs/{id}/stream`: server-sent events of new metrics and events, through a real
uvicorn server, ending when the run ends."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from langmarl.store.run import RunDir
from langmarl.testing.asgi import live_server
from langmarl.web import create_app


def _messages(lines: list[str]) -> list[tuple[str, str]]:
    found, event = [], ""
    for line in lines:
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((event, line.removeprefix("data: ")))
    return found


def test_new_lines_stream_live_until_the_run_ends(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "runs" / "live")
    run.start("magrpo")  # owned by this process, so it reads as running
    run.log_metrics(1, reward_mean=0.1)  # before the client connects: not replayed

    def train() -> None:
        time.sleep(0.3)
        run.log_metrics(2, reward_mean=0.2)
        time.sleep(0.2)
        run.log_metrics(3, reward_mean=0.3)
        run.finish("completed")

    app = create_app(tmp_path / "runs", poll_interval=0.05)
    with live_server(app) as url:
        writer = threading.Thread(target=train)
        with httpx.stream("GET", f"{url}/api/runs/live/stream", timeout=30) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            writer.start()
            messages = _messages(list(response.iter_lines()))
        writer.join()
    metrics = [data for event, data in messages if event == "metrics"]
    assert metrics == ['{"step": 2, "reward_mean": 0.2}', '{"step": 3, "reward_mean": 0.3}']
    events = [data for event, data in messages if event == "event"]
    assert len(events) == 1 and '"run_end"' in events[0]
    statuses = [data for event, data in messages if event == "status"]
    assert statuses == ['{"status": "running"}', '{"status": "completed"}']
    assert messages[-1] == ("end", '{"status": "completed"}')


def test_a_run_that_starts_after_the_stream_opened_is_followed(tmp_path: Path) -> None:
    """A MAGRPO run writes its run file before ``run.json`` (its models still loading): the
    stream stays open through ``unknown``, says ``running`` once it starts, then streams."""
    folder = tmp_path / "runs" / "early"
    folder.mkdir(parents=True)
    (folder / "run_config.json").write_text('{"algorithm": "magrpo"}')  # listed, not started
    run = RunDir(folder)

    def train() -> None:
        time.sleep(0.3)
        run.start("magrpo")
        run.log_metrics(1, reward_mean=0.1)
        time.sleep(0.2)
        run.finish("completed")

    app = create_app(tmp_path / "runs", poll_interval=0.05)
    with live_server(app) as url:
        writer = threading.Thread(target=train)
        with httpx.stream("GET", f"{url}/api/runs/early/stream", timeout=30) as response:
            writer.start()
            messages = _messages(list(response.iter_lines()))
        writer.join()
    statuses = [data for event, data in messages if event == "status"]
    assert statuses[0] == '{"status": "unknown"}' and '{"status": "running"}' in statuses
    assert ("metrics", '{"step": 1, "reward_mean": 0.1}') in messages
    assert messages[-1] == ("end", '{"status": "completed"}')


def test_replay_a_finished_run_and_unknown_runs(tmp_path: Path, own_runs: Path) -> None:
    app = create_app(own_runs, poll_interval=0.05)
    with live_server(app) as url:
        with httpx.stream("GET", f"{url}/api/runs/mag/stream?replay=true", timeout=30) as response:
            messages = _messages(list(response.iter_lines()))
        assert [e for e, _ in messages].count("metrics") == 4
        assert messages[-1] == ("end", '{"status": "completed"}')
        missing = httpx.get(f"{url}/api/runs/nope/stream", timeout=30)
        assert missing.status_code == 404 and missing.json()["error"].startswith("no run")


def test_the_tail_waits_for_whole_lines_and_restarts_after_a_rewind(tmp_path: Path) -> None:
    from langmarl.web.routes.stream import FileTail

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n')
    tail = FileTail(path, from_start=False)
    assert tail.read() == (False, [])
    with path.open("a") as handle:
        handle.write('{"step": 2}\n{"step"')
    assert tail.read() == (False, ['{"step": 2}'])
    with path.open("a") as handle:
        handle.write(": 3}\n")
    assert tail.read() == (False, ['{"step": 3}'])
    path.write_text('{"step": 1}\n')  # a resumed run rewound its metrics
    assert tail.read() == (True, ['{"step": 1}'])
    assert FileTail(tmp_path / "absent.jsonl", from_start=False).read() == (False, [])
