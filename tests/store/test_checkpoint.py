"""PolicyCheckpoint keeps the environment's agent ids; agent_1..N only when none are known."""

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.store.checkpoint import DEFAULT_POLICY


def _ckpt(tmp_path: Path, **kw: object) -> PolicyCheckpoint:
    return PolicyCheckpoint(LocalStore(tmp_path), "run", 2, **kw)  # type: ignore[arg-type]


def test_defaults_then_latest_checkpoint(tmp_path: Path) -> None:
    ckpt = _ckpt(
        tmp_path,
        agent_ids=["solver", "checker"],
        default_policies={"solver": "s0", "checker": "c0"},
    )
    assert ckpt.get_policies() == {"solver": "s0", "checker": "c0"}
    ckpt.save_policies(0, {"solver": "s0", "checker": "c0"})
    ckpt.save_policies(1, {"solver": "s1\nmore", "checker": "c0"}, stats={"avg_reward": 0.5})
    assert ckpt.iterations() == [0, 1]
    assert ckpt.get_policies() == {"solver": "s1\nmore", "checker": "c0"}
    assert ckpt.get_policies(0)["solver"] == "s0"
    assert ckpt.all_stats() == [{"avg_reward": 0.5}]
    diff = ckpt.diff_policies(0, 1)
    assert "+s1" in diff["solver"] and diff["checker"] == ""
    # a policy without a final newline: its old and new lines stay separate lines
    assert diff["solver"].splitlines()[-3:] == ["-s0", "+s1", "+more"]


def test_default_policies_are_generated_without_a_checkpoint(tmp_path: Path) -> None:
    """The reference: get_policies "Generates default policies if no checkpoint exists"."""
    ckpt = _ckpt(tmp_path, agent_ids=["solver", "checker"])
    policies = ckpt.get_policies()
    assert list(policies) == ["solver", "checker"]
    assert policies["solver"] == DEFAULT_POLICY.format(agent_id="solver")
    ckpt.save_policies(0, policies)  # the generated policies fit the run's agents
    # with no agent ids at all, the reference's agent_1..N (and a warning)
    assert list(_ckpt(tmp_path / "other").get_policies()) == ["agent_1", "agent_2"]


def test_no_invented_ids(tmp_path: Path) -> None:
    ckpt = _ckpt(tmp_path, agent_ids=["solver", "checker"])
    with pytest.raises(ConfigError, match="environment's agents"):
        ckpt.save_policies(0, {"agent_1": "x", "agent_2": "y"})


def test_a_checkpoint_without_manifest_does_not_count(tmp_path: Path) -> None:
    ckpt = _ckpt(tmp_path)
    ckpt.save_policies(0, {"a/b": "x", "a_b": "y"})  # unsafe and colliding names
    assert ckpt.get_policies(0) == {"a/b": "x", "a_b": "y"}
    (tmp_path / "run" / "policies" / "iter_0001").mkdir()
    (tmp_path / "run" / "policies" / "iter_0001" / "a_b.txt").write_text("torn")
    assert ckpt.latest_iteration() == 0
    with pytest.raises(ConfigError, match="no policy checkpoint 1"):
        ckpt.get_policies(1)
