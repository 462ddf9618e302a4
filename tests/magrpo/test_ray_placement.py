"""``placement="ray"`` (langmarl.magrpo.placement): the agents as Ray actors on a local
cluster of two Ray nodes (one CPU each), their runs against the in-process runs, a SIGKILLed
actor and the resume after it, and the one-line errors of bad input.

The cluster is two ``ray start`` nodes on this machine (``--head`` and ``--address``, one
CPU each), stopped by pid in the fixture's finalizer.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.core.processes import stat_fields
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.placement import AgentActorDied
from langmarl.magrpo.placement.cluster import check_reachable, check_resources
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.store.run import RunDir
from langmarl.testing.processes import alive, all_gone, command_line, descendants, free_port
from langmarl.testing.ray_nodes import ray_nodes

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}, {"prompt": "Count to three."}]


def length_reward(samples):
    return [float(len(s.completions[0]) - len(s.completions[1])) / 10 for s in samples]


def _trainer(models, tokenizers, run_dir: Path, reward=length_reward, **overrides):
    settings = {"output_dir": str(run_dir), "num_generations": 2, "max_new_tokens": 4,
                "max_steps": 2, "use_chat_template": False, "num_threads": 1,
                "agent_num_cpus": 1, **overrides}  # fmt: skip
    return MAGRPOTrainer(models, reward, MAGRPOConfig(**settings), tokenizers=tokenizers,
                         train_dataset=DATA)  # fmt: skip


def _losses_and_rewards(history: list[dict[str, Any]]) -> list[tuple[float, ...]]:
    return [(m["reward_mean"], m["agent-0/loss"], m["agent-1/loss"]) for m in history]


# -- bad input, one line each (no Ray started) -------------------------------------------------
def test_ray_placement_without_ray_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees when not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'langmarl\[ray\]'"):
        MAGRPOConfig(placement="ray")
    assert MAGRPOConfig().placement == "process"  # the default needs no Ray


def test_an_unreachable_ray_address_is_one_line() -> None:
    port = free_port()  # nothing listens there once the probe is closed
    with pytest.raises(ConfigError, match=rf"'127.0.0.1:{port}' is unreachable") as error:
        check_reachable(f"127.0.0.1:{port}")
    assert "\n" not in str(error.value) and "ray start --head" in str(error.value)
    with pytest.raises(ConfigError, match="is not host:port"):
        check_reachable("headnode")


def test_more_gpus_than_the_cluster_has_is_one_line() -> None:
    config = MAGRPOConfig(placement="ray", agent_num_gpus=1)
    with pytest.raises(ConfigError, match="ask for 2 GPUs but the Ray cluster has 1") as error:
        check_resources(config, {"CPU": 8.0, "GPU": 1.0})
    assert "\n" not in str(error.value)
    check_resources(config, {"CPU": 8.0, "GPU": 2.0})  # fits: no error
    with pytest.raises(ConfigError, match="ask for 6 CPUs but the Ray cluster has 2"):
        check_resources(MAGRPOConfig(placement="ray", agent_num_cpus=3), {"CPU": 2.0})


def test_a_trainer_without_ray_support_refuses_before_starting_ray(tiny_models, tmp_path):
    from langmarl.magrpo.base import WeightSpaceTrainer

    class InProcessOnly(WeightSpaceTrainer):
        pass

    models, tokenizers = tiny_models
    config = MAGRPOConfig(output_dir=str(tmp_path), placement="ray", max_new_tokens=2)
    with pytest.raises(ConfigError, match="not supported by InProcessOnly"):
        InProcessOnly(models, length_reward, config, tokenizers=tokenizers, train_dataset=DATA)


def test_an_unreachable_ray_address_stops_the_trainer_before_ray_starts(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConfigError, match="is unreachable"):
        _trainer(models, tokenizers, tmp_path, placement="ray", ray_address=address)


def _cli_error(monkeypatch, capsys, tmp_path: Path, *settings: str) -> str:
    """``langmarl magrpo train`` of the quickstart with ``--set`` ``settings``, as the
    command runs it (``run_app``): its exit 1 and its stderr."""
    from langmarl.cli import build_app
    from langmarl.cli.common import run_app

    sets = [f"runs_dir={tmp_path}", *settings]
    argv = ["langmarl", "magrpo", "train", "configs/magrpo/quickstart.json", "--no-plot"]
    monkeypatch.setattr(sys, "argv", argv + [a for s in sets for a in ("--set", s)])
    with pytest.raises(SystemExit) as ended:
        run_app(build_app())
    assert ended.value.code == 1
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (["trainer.agent_num_gpus=1"], "ask for 2 GPUs but"),  # this machine has none
        (["trainer.ray_address=127.0.0.1:{port}"], "'127.0.0.1:{port}' is unreachable"),
        (["trainer.agent_num_cpus=4096"], "ask for 8192 CPUs but"),
    ],
)
def test_the_command_says_bad_ray_input_in_one_line_before_ray_starts(
    monkeypatch, capsys, tmp_path, settings, said
) -> None:
    import ray

    port = free_port()
    already = ray.is_initialized()  # a cluster this process joined (-p no:xdist): checked too
    settings = [s.format(port=port) for s in ["trainer.placement=ray", *settings]]
    err = _cli_error(monkeypatch, capsys, tmp_path, *settings)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert said.format(port=port) in err
    assert ray.is_initialized() == already  # no local Ray was started to learn it


def test_the_command_without_ray_names_the_extra(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees when not installed
    err = _cli_error(monkeypatch, capsys, tmp_path, "trainer.placement=ray")
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ") and "pip install 'langmarl[ray]'" in err


# -- the actor's body, run in this process (no Ray) ------------------------------------------
def test_the_worker_samples_and_updates_as_the_in_process_agent_does(tiny_models, tmp_path):
    import copy

    import torch

    from langmarl.magrpo.generation import generate
    from langmarl.magrpo.placement.worker import AgentWorker
    from langmarl.magrpo.policy import build_agents
    from langmarl.magrpo.update import PolicyBatch, accumulate_policy_gradients, apply_gradients

    models, tokenizers = tiny_models
    config = MAGRPOConfig(num_agents=1, num_generations=2, max_new_tokens=4,
                          use_chat_template=False, num_threads=1)  # fmt: skip
    worker = AgentWorker(1, copy.deepcopy(models[1]), tokenizers[1], config)
    (agent,) = build_agents([models[1]], config, tokenizers=[tokenizers[1]])
    assert worker.agent.name == "agent-1" and worker.agent.device == "cpu"
    prompts = ["Say hi.", "Name a color."]
    batch = worker.generate(prompts, 2, False, seed=7)
    generator = torch.Generator().manual_seed(7)
    expected = generate(agent.sampler.model_for(agent.model), agent.tokenizer, prompts, 2,
                        config, generator=generator)  # fmt: skip
    assert batch.texts == expected.texts and torch.equal(batch.sequences, expected.sequences)
    parts = [PolicyBatch(batch, torch.tensor([0.5, -0.5, 1.0, -1.0]), group=2)]
    stats = worker.update(parts)
    wanted = accumulate_policy_gradients(agent, parts, config)
    apply_gradients(agent, config, wanted)
    assert stats.loss == pytest.approx(wanted.loss) and stats.loss != 0
    assert torch.equal(next(worker.agent.model.parameters()), next(agent.model.parameters()))
    assert set(worker.timings()) == {"generate", "update"} and worker.timings() == {}

    worker.save(str(tmp_path / "agent-1"), True)
    fresh = AgentWorker(1, copy.deepcopy(models[0]), tokenizers[0], config)
    fresh.load(str(tmp_path / "agent-1"), True, "step-000001")
    for saved, loaded in zip(worker.agent.model.parameters(), fresh.agent.model.parameters(),
                             strict=True):  # fmt: skip
        assert torch.equal(saved, loaded)
    assert fresh.agent.optimizer.state_dict()["state"]  # the optimizer's moments came along


@pytest.mark.parametrize("own_copy", [False, True])
def test_the_worker_hosts_a_critic_as_the_trainer_does(tiny_models, own_copy) -> None:
    """IAC/MAAC on Ray: a critic built in the actor (on its agent's model, or a copy) scores,
    fits, steps and round-trips its state as the in-process :class:`Critic` does."""
    import copy

    import torch

    from langmarl.magrpo.critic import Critic
    from langmarl.magrpo.placement.worker import AgentWorker

    models, tokenizers = tiny_models
    config = MAGRPOConfig(num_agents=1, num_generations=2, use_chat_template=False)
    worker = AgentWorker(0, copy.deepcopy(models[0]), tokenizers[0], config)
    here = Critic(copy.deepcopy(models[0]), tokenizers[0], 1e-2, owns_backbone=own_copy)
    number = worker.add_critic(own_copy, 1e-2)
    texts, targets = ["Say hi.", "Name a color."], [1.0, -0.5]
    for _ in range(2):  # the second score sees the stepped head
        assert worker.critic_score(number, texts, 32) == pytest.approx(here.score(texts, 32))
        assert worker.critic_fit(number, targets, 0.5, None) == pytest.approx(
            here.fit(targets, 0.5, None)
        )
        worker.critic_step(number)
        here.step()
    assert worker.critic_estimate(number, texts, 32) == pytest.approx(here.estimate(texts, 32))
    state = worker.critic_state(number)
    assert ("backbone" in state) == own_copy
    assert torch.equal(state["head"]["weight"], here.head.weight.detach())
    fresh = AgentWorker(0, copy.deepcopy(models[0]), tokenizers[0], config)
    fresh.critic_load(fresh.add_critic(own_copy, 1e-2), state)
    assert fresh.critic_estimate(0, texts, 32) == pytest.approx(here.estimate(texts, 32))


def test_process_placement_builds_the_agents_here(tiny_models):
    from langmarl.magrpo.placement import place_agents

    models, tokenizers = tiny_models
    config = MAGRPOConfig(num_generations=2, use_chat_template=False)
    placed, agents = place_agents(models, config, None, tokenizers, MAGRPOTrainer)
    assert placed is None and [a.worker for a in agents] == [None, None]
    assert [a.model for a in agents] == models


# -- on a two-node local cluster ---------------------------------------------------------------
RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")


@pytest.fixture(scope="session")
def ending_later() -> Iterator[list[tuple[str, list[int]]]]:
    """Processes that must end by themselves but may take minutes: ``(what, pids)`` appended
    by a test are checked when the session (this worker) ends, so no worker waits for them."""
    pending: list[tuple[str, list[int]]] = []
    yield pending
    lingering = [what for what, pids in pending if not all_gone(pids, 240)]
    assert not lingering, f"still running 4 min after they should have ended: {lingering}"


def _niceness(pid: int) -> int:
    return int((stat_fields(pid) or [])[16])


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[str]:
    """Two Ray nodes of one CPU each on this machine (``ray start --head`` and ``ray start
    --address``), this process joined as the driver. Yields the head's address."""
    with ray_nodes([1, 1]) as address:
        yield address


def completion_length(samples):
    """One agent's reward: its completion's length."""
    return [len(s.completions[0]) / 10 for s in samples]


@pytest.mark.slow
def test_rollouts_apart_on_two_nodes_train_as_in_process(two_nodes, tiny_models, tmp_path):
    """``rollout_placement="apart"``: the agent samples in a rollout actor of its own, on the
    other node (each node has one CPU), which loads the trained weights (every weight: no
    LoRA here) from the object store after each update. One agent: the rollout actor is
    per agent. Tolerance as for the embedded model below: the rollout actor holds the
    trained weights bit for bit and samples with the same seeded generator, so the texts and
    rewards are the in-process run's and the losses agree to float rounding (``rel=1e-5``)."""
    models, tokenizers = tiny_models
    one = {"num_agents": 1, "reward": completion_length}
    on_ray = _trainer(models[:1], tokenizers[:1], tmp_path / "ray", placement="ray",
                      rollout_placement="apart", **one)  # fmt: skip
    placed = on_ray.placement
    [agent], [rollout] = placed.details, placed.rollout_details
    assert len({agent["pid"], rollout["pid"], os.getpid()}) == 3  # each its own, none here
    assert agent["node_id"] != rollout["node_id"]  # the weights cross to the other node
    try:
        ray_history = on_ray.train()
    finally:
        on_ray.close()
    assert all_gone([agent["pid"], rollout["pid"]]), "an actor outlived trainer.close()"
    # The actors got copies of the models: these are still the untrained ones.
    process_history = _trainer(models[:1], tokenizers[:1], tmp_path / "process", **one).train()
    values = [[(m["reward_mean"], m["agent-0/loss"]) for m in h]
              for h in (ray_history, process_history)]  # fmt: skip
    assert any(loss != 0 for _, loss in values[0])
    assert values[0] == pytest.approx(values[1], rel=1e-5, abs=1e-7)
    weights = sum(p.numel() * 4 for p in models[0].parameters())  # fp32, tied embeddings once
    assert [m["agent-0/synced_mb"] for m in ray_history] == [weights / 1e6] * 2


@pytest.mark.slow
def test_more_gpus_than_the_two_nodes_have_fails_before_any_actor(two_nodes, tiny_models, tmp_path):
    models, tokenizers = tiny_models
    with pytest.raises(ConfigError, match="ask for 2 GPUs but the Ray cluster has 0"):
        _trainer(models, tokenizers, tmp_path, placement="ray", agent_num_gpus=1)


@pytest.mark.slow
def test_an_actor_that_cannot_build_its_agent_fails_the_start(two_nodes, tiny_models, tmp_path):
    models, tokenizers = tiny_models  # torch knows no such device: the actor's build fails
    one = {"num_agents": 1, "agent_devices": ["nodevice"]}  # one actor fails as two would
    with pytest.raises(AgentActorDied, match=r"agent-0's Ray actor died during its start .*fix"):
        _trainer(models[:1], tokenizers[:1], tmp_path, placement="ray", **one)


@pytest.mark.slow
def test_an_address_other_than_the_joined_cluster_is_refused(two_nodes, tiny_models, tmp_path):
    models, tokenizers = tiny_models
    with socket.socket() as other:  # something answers there, but not the joined cluster
        other.bind(("127.0.0.1", 0))
        other.listen()
        address = f"127.0.0.1:{other.getsockname()[1]}"
        with pytest.raises(ConfigError, match="already joined the Ray cluster at"):
            _trainer(models, tokenizers, tmp_path, placement="ray", ray_address=address)


@pytest.mark.slow
def test_the_embedded_model_on_two_nodes_matches_the_in_process_run(two_nodes, tmp_path):
    """Two SmolLM2 agents with LoRA, two MAGRPO steps, on Ray (one agent per node) and in
    process, same seed; the actors write their checkpoints into the driver's run directory
    and report their busy time, and none outlives ``close()``.

    Tolerance: both sides run one torch thread per agent and seed each agent's generator the
    same way, so they sample the same texts (then the rewards are equal exactly) and run the
    same kernels in the same order (then the losses agree to float rounding: ``rel=1e-5``
    leaves room for a different kernel choice, e.g. oneDNN's, in another process). Were the
    sampling to diverge by a token, the rewards would differ and this test would say so.
    """
    import ray

    settings = {"num_generations": 2, "max_new_tokens": 8, "max_steps": 2, "learning_rate": 3e-4,
                "lora": {"r": 16, "alpha": 32}, "save_steps": 1}  # fmt: skip
    on_ray = _trainer(["smollm2", "smollm2"], None, tmp_path / "ray", placement="ray",
                      placement_strategy="STRICT_SPREAD", **settings)  # fmt: skip
    nodes = {info["node_id"] for info in on_ray.placement.details}
    pids = [info["pid"] for info in on_ray.placement.details]
    assert len(nodes) == 2 and os.getpid() not in pids  # one agent per node, not here
    try:
        ray_history = on_ray.train()
        busy = ray.get([agent.worker.actor.timings.remote() for agent in on_ray.agents])
    finally:
        on_ray.close()
    assert all(b["generate"] > 0 and b["update"] > 0 for b in busy)  # what the benchmark reads
    assert all_gone(pids), "an agent actor outlived trainer.close()"
    for step in (1, 2):  # the actors wrote the checkpoints into the driver's run directory
        assert (tmp_path / "ray" / "checkpoints" / f"step-{step:06d}" / "agent-1").is_dir()
    assert RunDir(tmp_path / "ray").record().status == "completed"
    process_history = _trainer(["smollm2", "smollm2"], None, tmp_path / "process",
                               **settings).train()  # fmt: skip
    ray_values, process_values = (_losses_and_rewards(h) for h in (ray_history, process_history))
    assert [v[0] for v in ray_values] == [v[0] for v in process_values]  # the same texts
    assert any(loss != 0 for _, *losses in ray_values for loss in losses)
    assert ray_values == pytest.approx(process_values, rel=1e-5, abs=1e-7)


def turn_reward(samples):
    """Never 0, different per turn and per completion length (non-zero TD advantages)."""
    return [1.0 + s.turn + len(s.completions[0]) / 10 for s in samples]


def _actor_critic(cls, models, tokenizers, run_dir: Path, **overrides):
    from langmarl.magrpo.config import ActorCriticConfig
    from langmarl.magrpo.feedback import make_external

    settings = {"output_dir": str(run_dir), "max_new_tokens": 4, "max_steps": 2,
                "use_chat_template": False, "num_threads": 1, "save_steps": 2,
                "critic_learning_rate": 1e-2, **overrides}  # fmt: skip
    return cls(models, turn_reward, ActorCriticConfig(**settings), tokenizers=tokenizers,
               train_dataset=DATA, external_transition=make_external("plain"))  # fmt: skip


@pytest.mark.slow
def test_iac_on_two_nodes_trains_as_in_process(two_nodes, tiny_models, tmp_path):
    """Online IAC with value heads on the agents' own models: the value loss reaches each
    agent's weights in its actor before its policy update, as in process. (MAAC's critic,
    a copy of agent-0's model in its actor, differs only in where it is built: the
    worker's test covers it; one two-node MAAC run agreed to 1e-5 as well.)"""
    from langmarl.magrpo.actor_critic import IACTrainer
    from langmarl.magrpo.critic import RemoteCritic

    cls, settings = IACTrainer, {"num_turns": 2, "update_every": "turn"}
    models, tokenizers = tiny_models
    on_ray = _actor_critic(cls, models, tokenizers, tmp_path / "ray", placement="ray",
                           placement_strategy="STRICT_SPREAD", **settings)  # fmt: skip
    assert all(isinstance(critic, RemoteCritic) for critic in on_ray.critics)
    try:
        ray_history = on_ray.train()
    finally:
        on_ray.close()
    process_history = _actor_critic(cls, models, tokenizers, tmp_path / "process",
                                    **settings).train()  # fmt: skip
    keys = sorted(k for k in process_history[0] if k.endswith("loss") or k.startswith("reward"))
    assert any(k.endswith("value_loss") for k in keys) and "agent-1/loss" in keys
    ray_values = [m[k] for m in ray_history for k in keys]
    process_values = [m[k] for m in process_history for k in keys]
    assert any(v != 0 for v in ray_values)
    assert ray_values == pytest.approx(process_values, rel=1e-5, abs=1e-7)  # as for MAGRPO
    extra = tmp_path / "ray" / "checkpoints" / "step-000002" / "extra.pt"
    assert extra.is_file()  # the critics' states came back from the actors


def _flaky_subagents() -> Any:
    """PARL's sub-agents, scripted: every third call fails, so a group's plans get different
    rewards (and the orchestrator a non-zero loss); the calls come in the plans' order."""
    from langmarl.core.errors import LLMError
    from langmarl.testing import ScriptedLLM, scripted_config

    calls = iter(range(10_000))

    def reply(request: Any) -> str | BaseException:
        return LLMError("scripted", "scripted", "busy") if next(calls) % 3 == 2 else "ANSWER: 3"

    return ScriptedLLM(reply, config=scripted_config(max_retries=0))


def _parl_grpo(model, tokenizer, run_dir: Path, **placement):
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig

    env = ParallelTasksEnv(num_tasks=2, subagent_llm=_flaky_subagents(), max_subagent_steps=1)
    config = OrchestratorGRPOConfig(
        num_steps=2, num_generations=3, max_new_tokens=8, learning_rate=1e-2,
        output_dir=str(run_dir), num_threads=1, **placement,
    )  # fmt: skip
    return OrchestratorGRPO(env, config, model=model, tokenizer=tokenizer)


@pytest.mark.slow
def test_parl_grpo_on_ray_trains_as_in_process(two_nodes, tiny_models, tmp_path):
    """PARL GRPO with the orchestrator as a Ray actor: its plans are sampled and its update
    taken there, the sub-agents, PARL rewards and advantages here. Tolerance as for MAGRPO:
    one thread on both sides and the same seeded generator, so the same plans (then the PARL
    terms are equal exactly) and the losses agree to float rounding (``rel=1e-5``)."""
    (model, _), (tokenizer, _) = tiny_models
    on_ray = _parl_grpo(model, tokenizer, tmp_path / "ray", placement="ray")
    [info] = on_ray.placement.details
    assert info["pid"] != os.getpid() and on_ray.model is None  # the model lives in the actor
    try:
        ray_history = on_ray.train()
    finally:
        on_ray.close()
    assert all_gone([info["pid"]]), "the orchestrator's actor outlived trainer.close()"
    process_history = _parl_grpo(model, tokenizer, tmp_path / "process").train()
    keys = sorted(k for k, v in process_history[0].items()
                  if isinstance(v, float) and not k.endswith("seconds"))  # fmt: skip
    assert {"total_reward", "r_perf", "loss"} <= set(keys)
    ray_values = [m[k] for m in ray_history for k in keys]
    process_values = [m[k] for m in process_history for k in keys]
    assert [m["total_reward"] for m in ray_history] == [m["total_reward"] for m in process_history]
    assert any(m["loss"] != 0 for m in ray_history)
    assert ray_values == pytest.approx(process_values, rel=1e-5, abs=1e-7)
    run = tmp_path / "ray"  # the actor wrote the checkpoint and the model into the run
    assert (run / "checkpoints" / "step-000002" / "agent-0" / "optimizer.pt").is_file()
    assert (run / "model" / "config.json").is_file()
    assert RunDir(run).record().status == "completed"


class KillingReward:
    """A reward that SIGKILLs agent-1's actor while scoring step ``kill_at`` (0-based): the
    rollout is done, the update not yet sent."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at, self.step, self.trainer, self.killed = kill_at, 0, None, False

    def set_step(self, step: int) -> None:
        self.step = step

    def __call__(self, samples):
        if self.step == self.kill_at and not self.killed:
            self.killed = True
            os.kill(self.trainer.placement.details[1]["pid"], signal.SIGKILL)
        return length_reward(samples)


@pytest.mark.slow
def test_a_killed_actor_stops_the_step_and_the_run_resumes_every_step_once(
    two_nodes, tiny_models, tmp_path
):
    models, tokenizers = tiny_models
    reward = KillingReward(kill_at=1)
    first = _trainer(models, tokenizers, tmp_path, reward, placement="ray", max_steps=2,
                     save_steps=1, save_optimizer=True)  # fmt: skip
    reward.trainer = first
    pids = [info["pid"] for info in first.placement.details]
    with pytest.raises(AgentActorDied, match=r"agent-1's Ray actor died during its update"):
        first.train()
    assert reward.killed and all_gone(pids), "the surviving actor outlived the failed run"
    assert RunDir(tmp_path).record().status == "failed"
    assert [m["step"] for m in RunDir(tmp_path).metrics()] == [1]

    second = _trainer(models, tokenizers, tmp_path, placement="ray", max_steps=2,
                      save_steps=1, save_optimizer=True)  # fmt: skip
    pids = [info["pid"] for info in second.placement.details]
    history = second.train(resume_from="latest")
    second.close()
    assert [m["step"] for m in history] == [2]
    assert [m["step"] for m in RunDir(tmp_path).metrics()] == [1, 2]  # each step once
    assert RunDir(tmp_path).record().status == "completed"
    assert all_gone(pids)
    with pytest.raises(ConfigError, match="agent-0's Ray actor was stopped"):
        second.evaluate()


TARGET = Path(__file__).with_name("ray_driver_target.py")


@pytest.mark.slow
@pytest.mark.xdist_group("tests/magrpo/test_ray_placement.py")  # SIGTERM joins the two nodes
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_no_actor_or_ray_process_outlives_a_cancelled_or_killed_driver(
    tmp_path, signum, ending_later, request
):
    """SIGTERM (``langmarl jobs cancel``): the run stops, saved ``cancelled`` (Ray's own
    SIGTERM handler, set by ``ray.init`` whether it joins a cluster or starts one, does not
    replace langmarl's), its actors killed by ``close()``; this driver joins the two nodes
    (``ray_address``), a cluster that outlives it. SIGKILL: nothing
    runs in the driver, which started a local Ray of its own (``ray_address`` null), and Ray
    ends the actors of a driver that died and the local Ray it started. Either way nothing
    of the run remains."""
    joins = [request.getfixturevalue("two_nodes")] if signum == signal.SIGTERM else []
    driver = subprocess.Popen([sys.executable, str(TARGET), str(tmp_path), *joins],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "pids.json").is_file() and driver.poll() is None:
            assert time.monotonic() < deadline, "the driver's actors never started"
            time.sleep(0.5)
        time.sleep(2)  # into a step
        below = descendants({driver.pid}) - {driver.pid}  # the local Ray, the actors' workers
        actors = json.loads((tmp_path / "pids.json").read_text())["actors"]
        assert set(actors) <= below or all(alive(pid) for pid in actors)
        if not joins:  # a local Ray the run started: its actors at the run's priority
            assert [_niceness(pid) for pid in actors] == [0] * len(actors)
        driver.send_signal(signum)
        assert driver.wait(timeout=120) != 0
        ray = below | set(actors)
        if signum == signal.SIGKILL:
            # Ray's two node agents notice their raylet's end within 2 s, then try for 60 s
            # (a fixed timeout in Ray 2.x) to tell the GCS, which died with the driver: they
            # end about a minute later. That is checked when the session ends, not waited for.
            agents = {pid for pid in ray if command_line(pid).startswith(RAY_AGENTS)}
            ending_later.append(("the Ray agents of a SIGKILLed driver", sorted(agents)))
            ray -= agents
        assert all_gone(sorted(ray), 60), "a Ray process outlived the run"
        if signum == signal.SIGTERM:
            assert RunDir(tmp_path / "run").record().status == "cancelled"
    finally:
        if driver.poll() is None:
            driver.kill()
