"""Runtime check of reward code; runs INSIDE the sandbox (see :mod:`.validation`).

Usage: ``python _harness.py ENV_ID STEPS`` with ``reward_fn.py`` in the working directory.

Two processes, so the reward cannot write its own verdict. This process (the judge) never
loads the reward: it forks a child that does, with standard input and output on
``/dev/null``, and the two speak JSON over two pipes. The judge steps the env with random
actions, sends each transition, checks each answer itself (a ``(total, {term: value})`` of
finite numbers and declared terms) and prints one JSON line: ``{"ok": bool, "error":
str|null, "terms": {...}, "latex": str, "description": str, "call_us": float}``. It exits 0
only when the check passed: a reward that prints a report of its own, or ends the child
early, cannot make this process exit 0, and the host trusts a report only with exit 0.
"""

import json
import os
import signal
import sys
import time
import traceback

REWARD_FILE = "reward_fn.py"
FAILED_EXIT = 3


def _where(exc: BaseException) -> str:
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(REWARD_FILE)
    ]
    line = f" (reward_fn.py line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    return f"{type(exc).__name__}: {exc}{line}"


def _send(fd: int, message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _arrays(message: dict) -> dict:
    import numpy as np

    return {k: np.asarray(v["data"], dtype=v["dtype"]) for k, v in message.items()}


def _as_data(value) -> dict:
    import numpy as np

    array = np.asarray(value)
    return {"data": array.tolist(), "dtype": str(array.dtype)}


def serve_reward(requests, answers: int) -> None:
    """The child: load the reward, then answer each transition with its output."""
    from langmarl.p2p.reward.function import check_output, load_reward_file

    try:
        reward = load_reward_file(REWARD_FILE)
        hello = {"terms": dict(reward.terms), "latex": str(reward.latex),
                 "description": str(reward.description)}  # fmt: skip
    except Exception as exc:
        hello = {"error": f"loading failed: {_where(exc)}"}
    _send(answers, hello)
    for line in requests:
        message = json.loads(line)
        if message.get("reset"):
            reward.reset()
            continue
        step = _arrays(message["transition"])
        info = {k: (v.item() if v.ndim == 0 else v) for k, v in _arrays(message["info"]).items()}
        started = time.perf_counter()
        try:
            total, terms = check_output(
                reward.compute(step["obs"], step["action"], step["next_obs"], info)
            )
            answer = {"total": total, "terms": terms, "us": 1e6 * (time.perf_counter() - started)}
        except Exception as exc:
            answer = {"error": _where(exc)}
        _send(answers, answer)


def check(env_id: str, steps: int, requests: int, answers) -> dict:
    """The judge: drive the env, ask the child, decide."""
    import gymnasium as gym
    import numpy as np

    from langmarl.p2p.reward.function import check_output

    hello = json.loads(answers.readline() or "{}")
    if "error" in hello or "terms" not in hello:
        return {"ok": False, "error": hello.get("error", "the reward process ended at start")}
    declared = {str(k): str(v) for k, v in dict(hello["terms"]).items()}
    if not declared:
        return {"ok": False, "error": "the reward declares no terms: list each term in `terms`"}
    env = gym.make(env_id)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    seen: set[str] = set()
    elapsed = 0.0
    for step in range(steps):
        action = env.action_space.sample()
        next_obs, _, terminated, truncated, info = env.step(action)
        transition = {"obs": obs, "action": action, "next_obs": next_obs}
        numeric = {k: v for k, v in info.items() if np.asarray(v).dtype.kind in "biuf"}
        _send(requests, {"transition": {k: _as_data(v) for k, v in transition.items()},
                         "info": {k: _as_data(v) for k, v in numeric.items()}})  # fmt: skip
        line = answers.readline()
        if not line:
            return {"ok": False, "error": f"step {step}: the reward process ended"}
        answer = json.loads(line)
        if "error" in answer:
            return {"ok": False, "error": f"step {step}: {answer['error']}"}
        try:
            _, terms = check_output((answer.get("total"), dict(answer.get("terms", {}))), declared)
        except (TypeError, ValueError) as exc:
            return {"ok": False, "error": f"step {step}: {exc}"}
        elapsed += float(answer.get("us", 0.0))
        seen.update(terms)
        obs = next_obs
        if terminated or truncated:
            obs, _ = env.reset()
            _send(requests, {"reset": True})
    missing = sorted(set(declared) - seen)
    if missing:
        return {"ok": False, "error": f"declared terms never returned: {missing}"}
    return {"ok": True, "error": None, "terms": declared, "latex": str(hello.get("latex", "")),
            "description": str(hello.get("description", "")),
            "call_us": elapsed / steps}  # fmt: skip


def main(env_id: str, steps: int) -> int:
    child_reads, judge_writes = os.pipe()  # transitions
    judge_reads, child_writes = os.pipe()  # the reward's answers
    child = os.fork()
    if child == 0:  # the reward's process: nothing to print to, nothing but its two pipes
        os.close(judge_writes)
        os.close(judge_reads)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        try:
            serve_reward(os.fdopen(child_reads, "r"), child_writes)
        finally:
            os._exit(0)
    os.close(child_reads)
    os.close(child_writes)
    try:
        with os.fdopen(judge_reads, "r") as answers:
            report = check(env_id, steps, judge_writes, answers)
    except (OSError, ValueError) as exc:  # a broken pipe, an answer that is not JSON
        report = {"ok": False, "error": f"the reward process misbehaved: {exc}"}
    finally:
        os.close(judge_writes)
        os.kill(child, signal.SIGKILL)  # its work is done, or it stopped answering
        os.waitpid(child, 0)
    print(json.dumps(report), flush=True)
    return 0 if report["ok"] else FAILED_EXIT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
