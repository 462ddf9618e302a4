"""replay(): a run's metrics.jsonl exported to trackers after the fact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langmarl.core.errors import RunFileError
from langmarl.tracking import make_trackers, replay


def _metrics(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_every_record_is_logged_in_order_and_a_torn_tail_is_skipped(
    tmp_path: Path, recorder: Any
) -> None:
    path = _metrics(
        tmp_path,
        json.dumps({"step": 1, "loss": 1.0, "eval": {"acc": 0.5}}),
        json.dumps({"step": 2, "event": "checkpoint"}),  # no numbers: nothing logged
        json.dumps({"step": 3, "loss": 0.5}),
        '{"step": 4, "lo',  # torn by a crash
    )
    assert replay(path, recorder) == 3
    assert recorder.logged == [({"loss": 1.0, "eval/acc": 0.5}, 1), ({"loss": 0.5}, 3)]
    assert recorder.closed == 0  # the caller closes


@pytest.mark.parametrize(
    ("line", "problem"),
    [('{"loss": 1.0}', "record 1: a metrics record needs 'step'"), ("[1, 2]", "not an object")],
)
def test_a_bad_record_names_the_file_and_record(
    tmp_path: Path, line: str, problem: str, recorder: Any
) -> None:
    path = _metrics(tmp_path, line, '{"step": 9}')
    with pytest.raises(RunFileError, match=problem) as info:
        replay(path, [recorder])
    assert info.value.path == path


def test_a_missing_file_is_an_error(tmp_path: Path, recorder: Any) -> None:
    with pytest.raises(RunFileError, match="no such metrics file"):
        replay(tmp_path / "metrics.jsonl", recorder)


def test_a_finished_run_exports_to_tensorboard(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    path = _metrics(tmp_path, *(json.dumps({"step": s, "reward": s / 4}) for s in range(4)))
    with make_trackers(["tensorboard"], tmp_path, "old-run", {"seed": 0}) as group:
        assert replay(path, group) == 4
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("reward")] == [
        (0, 0.0),
        (1, 0.25),
        (2, 0.5),
        (3, 0.75),
    ]
    assert events.Tags()["tensors"] == ["config/text_summary"]  # the config, as text
