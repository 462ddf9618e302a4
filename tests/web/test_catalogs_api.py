"""``GET /api/envs`` and ``GET /api/reward-templates``: listings a space offers beside its runs,
read through the entry points its kind of run registers (the server imports no space)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from langmarl.store import kinds
from langmarl.store.kinds import RunKindSpec
from langmarl.web import create_app


def test_envs_and_reward_templates_of_the_reward_space(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path))
    envs = {e["env_id"]: e for e in client.get("/api/envs").json()}
    cheetah = envs["HalfCheetah-v5"]
    assert cheetah["kind"] == "p2p" and cheetah["obs_dim"] == 17 and cheetah["act_dim"] == 6
    assert "x_velocity" in cheetah["info_keys"] and cheetah["description"]
    templates = {t["env_id"]: t for t in client.get("/api/reward-templates").json()}
    assert set(templates) == set(envs)
    assert templates["HalfCheetah-v5"]["code"].startswith("def reward_fn(obs, action, next_obs")
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/envs", "/api/reward-templates", "/api/resources/status"} <= set(paths)
    p2p = {k["name"]: k for k in client.get("/api/kinds").json()}["p2p"]
    assert p2p["catalogs"] == ["envs", "reward-templates"]


def test_a_registered_kind_adds_to_a_listing(tmp_path: Path) -> None:
    kinds.register(
        RunKindSpec("toy_envs", "toy", catalogs={"envs": lambda: [{"env_id": "Toy-v0"}]})
    )
    try:
        envs = TestClient(create_app(tmp_path)).get("/api/envs").json()
    finally:
        kinds.unregister("toy_envs")
    assert {"kind": "toy_envs", "env_id": "Toy-v0"} in envs
