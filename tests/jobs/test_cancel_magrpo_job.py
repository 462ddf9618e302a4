"""A weight-space job (MAGRPO on the embedded model) cancelled mid-training ends its run
`cancelled`, its files whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.jobs import JobSpec, LocalBackend
from langmarl.store.run import RunDir
from langmarl.testing.processes import wait_until

CONFIG = Path(__file__).parents[2] / "configs" / "magrpo" / "writing_tiny.json"


@pytest.mark.slow
def test_a_cancelled_magrpo_job_ends_cancelled(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "runs", grace_s=60)
    overrides = {"trainer.max_steps": 50, "trainer.num_turns": 1, "trainer.max_new_tokens": 4,
                 "trainer.eval_interval": 100, "heldout": False}  # fmt: skip
    job_id = backend.submit(JobSpec(kind="magrpo", config=str(CONFIG), overrides=overrides))
    run = RunDir(tmp_path / "runs" / job_id)
    wait_until(lambda: len(run.metrics()) >= 1 or backend.status(job_id).done, what="step 1")
    backend.cancel(job_id)
    record = backend.wait(job_id, timeout_s=120)
    assert (record.state, record.exit_code) == ("cancelled", 143), backend.logs(job_id)
    info = run.record()
    assert info.kind == "magrpo" and info.status == "cancelled"
    assert 1 <= len(run.metrics()) < 50
    assert run.events()[-1] == {**run.events()[-1], "event": "run_end", "status": "cancelled"}
    assert not list(run.path.rglob(".*.tmp"))
    saved = json.loads((run.path / "run_config.json").read_text())
    assert (saved["runs_dir"], saved["run_id"]) == (str(run.path.parent), job_id)
