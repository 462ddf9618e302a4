"""PolicyCheckpoint keeps the environment's agent ids and never invents agent_1..N."""

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.store import LocalStore, PolicyCheckpoint


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


def test_no_invented_ids(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="default_policies"):
        _ckpt(tmp_path).get_policies()
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
