"""A driver for the Ray placement's end-of-run tests: two tiny random Llamas as Ray actors on
a local Ray this process starts (``ray_address`` null), a reward that sleeps so a signal
lands mid-step, SIGTERM handled as the ``langmarl`` command handles it. Writes ``pids.json``
(the driver's and its actors' pids) into RUN_DIR once the actors run.
Usage: ray_driver_target.py RUN_DIR"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from magrpo_kill_target import sleepy_reward, tiny_agents  # beside this script

from langmarl.core.signals import stop_on_signals
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def main(run_dir: Path) -> None:
    stop_on_signals()  # as the langmarl command does: SIGTERM ends the run "cancelled"
    models, tokenizer = tiny_agents()
    reward = sleepy_reward(1.0)

    args = MAGRPOConfig(
        output_dir=str(run_dir / "run"), num_generations=2, max_new_tokens=4, max_steps=1000,
        num_train_epochs=1000,
        use_chat_template=False, placement="ray", num_threads=1,
    )  # fmt: skip
    trainer = MAGRPOTrainer(models, reward, args, tokenizers=[tokenizer] * 2, train_dataset=DATA)
    actors = [info["pid"] for info in trainer.placement.details]
    (run_dir / "pids.json").write_text(json.dumps({"driver": os.getpid(), "actors": actors}))
    trainer.train()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
