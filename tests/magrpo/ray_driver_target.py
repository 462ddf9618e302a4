"""A driver for the Ray placement's end-of-run tests: one agent (a tiny random Llama) as a Ray
actor on a local Ray this process starts (``ray_address`` null), a reward that sleeps so a signal
lands mid-step, SIGTERM handled as the ``langmarl`` command handles it. Writes ``pids.json``
(the driver's and its actor's pid) into RUN_DIR once the actor runs. With ADDRESS the
driver joins the Ray cluster there (``ray_address``) instead of starting a local Ray.
Usage: ray_driver_target.py RUN_DIR [ADDRESS]"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from magrpo_kill_target import tiny_agents  # beside this script

from langmarl.core.signals import stop_on_signals
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def sleepy_reward(samples):
    """The completion's length, after a second's sleep (so a signal lands mid-step)."""
    time.sleep(1.0)
    return [len(s.completions[0]) / 10 for s in samples]


def main(run_dir: Path, address: str | None) -> None:
    stop_on_signals()  # as the langmarl command does: SIGTERM ends the run "cancelled"
    models, tokenizer = tiny_agents()

    args = MAGRPOConfig(
        output_dir=str(run_dir / "run"), num_agents=1, num_generations=2, max_new_tokens=4,
        max_steps=1000, num_train_epochs=1000, use_chat_template=False, placement="ray",
        num_threads=1, ray_address=address,
    )  # fmt: skip
    trainer = MAGRPOTrainer(models[:1], sleepy_reward, args, tokenizers=[tokenizer],
                            train_dataset=DATA)  # fmt: skip
    actors = [info["pid"] for info in trainer.placement.details]
    (run_dir / "pids.json").write_text(json.dumps({"driver": os.getpid(), "actors": actors}))
    trainer.train()


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None)
