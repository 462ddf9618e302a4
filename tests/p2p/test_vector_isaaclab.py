"""The IsaacLab backend without IsaacLab: the install error, and the calls it makes, checked
against a stand-in that follows IsaacLab 2.x's documented API (not IsaacLab itself)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
import torch

from langmarl.core.errors import MissingDependencyError
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector import isaaclab_backend
from langmarl.p2p.learner.vector.backend import make_backend
from langmarl.p2p.reward.isaaclab_specs import get_isaaclab_spec

ANT = TrainConfig.for_env("Isaac-Ant-Direct-v0", num_envs=3, batch_size=48, seed=9)


def test_without_isaaclab_the_error_names_the_extra_and_the_gpu(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "isaaclab", None)  # import fails as if not installed
    with pytest.raises(MissingDependencyError) as raised:
        make_backend(ANT)
    message = str(raised.value)
    assert "langmarl[isaaclab]" in message and raised.value.extra == "isaaclab"
    assert "NVIDIA GPU" in message and "Isaac Sim" in message and "gym_vector" in message


class StandInTask:
    """IsaacLab's direct-workflow step/reset shapes: ``({"policy": obs}, ...)``."""

    def __init__(self, num_envs: int) -> None:
        self.velocity = torch.arange(num_envs * 3, dtype=torch.float32).reshape(num_envs, 3)
        self.unwrapped = self
        self.num_envs = num_envs
        self.actions: list[torch.Tensor] = []

    def reset(self, seed: int | None = None) -> tuple[dict[str, torch.Tensor], dict]:
        return {"policy": torch.zeros(self.num_envs, 36)}, {}

    def step(self, action: torch.Tensor) -> tuple[Any, ...]:
        self.actions.append(action)
        done = torch.tensor([True] + [False] * (self.num_envs - 1))
        obs = {"policy": torch.ones(self.num_envs, 36)}
        return obs, torch.full((self.num_envs,), 0.5), done, ~done, {"log": {}}


def test_the_backend_drives_the_documented_calls(monkeypatch) -> None:
    calls: dict[str, Any] = {}
    task = StandInTask(3)

    class AppLauncher:
        def __init__(self, **kwargs: Any) -> None:
            calls.setdefault("launch", []).append(kwargs)
            self.app = object()

    def parse_env_cfg(env_id: str, device: str, num_envs: int) -> Any:
        calls["cfg"] = (env_id, device, num_envs)
        return types.SimpleNamespace(seed=None)

    def make(env_id: str, cfg: Any) -> StandInTask:
        calls["make"] = (env_id, cfg.seed)
        return task

    modules = {
        "isaaclab": types.ModuleType("isaaclab"),
        "isaaclab.app": types.SimpleNamespace(AppLauncher=AppLauncher),
        "isaaclab_tasks": types.ModuleType("isaaclab_tasks"),
        "isaaclab_tasks.utils": types.SimpleNamespace(parse_env_cfg=parse_env_cfg),
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(isaaclab_backend, "_APP", [])
    monkeypatch.setattr("gymnasium.make", make)
    backend = make_backend(ANT)
    assert calls["cfg"] == ("Isaac-Ant-Direct-v0", "cuda:0", 3)
    assert calls["make"] == ("Isaac-Ant-Direct-v0", 9)
    assert backend.exclusive and backend.action_space.shape == (8,)
    spec = get_isaaclab_spec("Isaac-Ant-Direct-v0")
    backend = isaaclab_backend.IsaacLabBackend(spec, 3, seed=9, device="cpu")  # no CUDA here
    assert calls["launch"] == [{"headless": True}]  # Isaac Sim starts once per process
    assert backend.reset(seed=1).shape == (3, 36)
    step = backend.step(torch.zeros(3, 8))
    assert step.next_obs is step.obs and step.done.tolist() == [True, True, True]
    assert step.terminated.tolist() == [True, False, False]
    assert step.info["x_velocity"].tolist() == [0.0, 3.0, 6.0]
    assert step.info["y_velocity"].tolist() == [1.0, 4.0, 7.0]
