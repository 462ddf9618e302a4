"""The real path: two SmolLM2-135M agents trained, saved, reloaded and continued (tiny budgets)."""

import pytest
import torch

from langmarl.magrpo.config import LoRAConfig, MAGRPOConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.tasks import get_task
from langmarl.magrpo.trainer import MAGRPOTrainer

pytestmark = pytest.mark.slow


def _trainer(cls, config, task):
    return cls(
        ["smollm2", "smollm2"],
        task.reward_func,
        config,
        formatters=task.formatters,
        train_dataset=task.train_dataset,
        eval_dataset=task.eval_dataset,
        external_transition=make_external("plain"),
    )


def _config(tmp_path, joint_mode, max_steps, lora):
    return MAGRPOConfig(
        output_dir=str(tmp_path / joint_mode),
        num_generations=2,
        num_turns=2,
        joint_mode=joint_mode,
        max_new_tokens=4,
        max_prompt_tokens=96,
        max_steps=max_steps,
        num_train_epochs=3,
        num_threads=1,
        lora=lora,
    )


def test_two_smollm2_agents_train_save_reload_continue(tmp_path):
    """One step in ``align`` mode (G=2, 2 turns: 4 leaves), saved and reloaded into agents
    that continue in ``cross`` mode (16 leaves): both joint modes train on the real model,
    each once. Plain fp32 sampling: the ``w16`` twins are built by the tests below. The two
    LoRA agents hold one copy of SmolLM2's frozen base (tests/magrpo/test_shared_base.py)."""
    task = get_task("writing", num_train=1, num_eval=2)
    lora = LoRAConfig(r=4, alpha=8)
    config = _config(tmp_path, "align", 1, lora).model_copy(update={"sampling_precision": "fp32"})
    trainer = _trainer(MAGRPOTrainer, config, task)
    first, second = (dict(agent.model.named_parameters()) for agent in trainer.agents)
    frozen = {name: p for name, p in first.items() if not p.requires_grad}
    assert frozen and all(second[name] is p for name, p in frozen.items())  # one SmolLM2 base
    history = trainer.train()
    assert [m["step"] for m in history] == [1] and history[0]["leaves"] == 4
    assert all(torch.isfinite(torch.tensor(history[0][f"agent-{i}/loss"])) for i in (0, 1))
    checkpoint = tmp_path / "align" / "checkpoints" / "step-000001" / "agent-0"
    assert (checkpoint / "adapter_model.safetensors").is_file()  # LoRA keeps saves small
    trained = {
        k: v.detach().clone()
        for k, v in trainer.agents[0].model.named_parameters()
        if v.requires_grad
    }
    del trainer

    crossed = config.model_copy(update={"joint_mode": "cross", "max_steps": 2})
    resumed = _trainer(MAGRPOTrainer, crossed, task)
    resumed.load_checkpoint("latest")
    params = dict(resumed.agents[0].model.named_parameters())
    assert all(torch.equal(params[k], v) for k, v in trained.items())
    history = resumed.train()
    assert [m["step"] for m in history] == [2] and history[0]["leaves"] == 16
    assert all(torch.isfinite(torch.tensor(history[0][f"agent-{i}/loss"])) for i in (0, 1))
    assert (tmp_path / "align" / "checkpoints" / "step-000002").is_dir()


def test_cli_trains_the_poster_task_and_reports_heldout_before_and_after(tmp_path):
    import json

    from typer.testing import CliRunner

    from langmarl.cli import build_app

    run_dir = tmp_path / "poster"
    settings = {
        "task.num_eval": "2",
        "runs_dir": str(run_dir.parent),
        "run_id": run_dir.name,
        "trainer.max_steps": "1",
        "trainer.num_generations": "2",
        "trainer.max_new_tokens": "6",
        "trainer.per_device_train_batch_size": "1",
        "trainer.num_threads": "1",
    }
    overrides = [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    args = ["magrpo", "train", "configs/magrpo/poster.json", *overrides]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Held-out reward: ")  # one unwrapped closing line
    assert "(n=2 poster examples, greedy; 95% CI" in lines[-1]
    report = json.loads((run_dir / "heldout.json").read_text(encoding="utf-8"))
    assert report["before"]["interval"]["n"] == report["after"]["interval"]["n"] == 2
    assert report["after"]["label"] == "step 1"
    assert (run_dir / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run_dir / "checkpoints" / "step-000001" / "agent-1").is_dir()

    again = CliRunner().invoke(build_app(), args)  # the same run dir: refused, nothing lost
    assert again.exit_code != 0
    said = str(again.exception) + again.output
    assert "holds a finished run" in said and "--set run_id=" in said
    assert (run_dir / "checkpoints" / "step-000001" / "agent-1").is_dir()

    # `langmarl eval` on a MAGRPO run is `magrpo eval` (issue 27): --episodes, --iteration
    evaluated = ["eval", str(run_dir), "--episodes", "1", "--iteration", "1"]
    result = CliRunner().invoke(build_app(), evaluated)
    assert result.exit_code == 0, result.output
    report = json.loads((run_dir / "heldout.json").read_text(encoding="utf-8"))
    assert report["before"]["interval"]["n"] == 1 and report["after"]["label"] == "step 1"
    assert len(report["before"]["returns"]) == len(report["after"]["returns"]) == 1
    assert "Held-out reward: " in result.output


def test_smollm2_agents_sampled_in_parallel_match_sequential_and_train_with_bf16(tmp_path):
    """One pair of agents (sampling from their bf16 twins) sampled both ways, then trained
    with parallel updates: the same weights by construction, so the same texts."""
    task = get_task("writing", num_train=1, num_eval=2)
    before = torch.get_num_threads()
    texts = {}
    # one torch thread: the agents' updates still run on two threads (one each), and a
    # second thread per product would only spin on a busy machine
    config = _config(tmp_path / "bf16", "align", 1, LoRAConfig(r=4, alpha=8))
    config = config.model_copy(
        update={"num_threads": 1, "parallel_updates": True, "sampling_precision": "bf16"}
    )
    try:
        trainer = _trainer(MAGRPOTrainer, config, task)
        for parallel in (False, True):  # rollouts read parallel_agents per call
            trainer.args = config.model_copy(update={"parallel_agents": parallel})
            torch.manual_seed(7)
            _, levels = trainer.rollout(trainer.batch_for(0))
            texts[parallel] = [b.texts for level in levels for b in level.batches]
        assert texts[True] == texts[False] and any(t for b in texts[True] for t in b)
        trainer.args = config
        history = trainer.train()
    finally:
        torch.set_num_threads(before)
    assert history[0]["leaves"] == 4
    assert all(torch.isfinite(torch.tensor(history[0][f"agent-{i}/loss"])) for i in (0, 1))
    twin = trainer.agents[1].sampler.model_for(trainer.agents[1].model)
    assert next(twin.parameters()).dtype == torch.bfloat16
