"""Runtime check of reward code; runs INSIDE the sandbox (see :mod:`langmarl.p2p.validation`).

Usage: ``python _harness.py ENV_ID STEPS`` with ``reward_fn.py`` in the working directory.
Steps the env with random actions, calls the reward on every transition and prints one JSON
line: ``{"ok": bool, "error": str|null, "terms": {...}, "seen": [...], "call_us": float}``.
"""

import json
import sys
import time
import traceback

REWARD_FILE = "reward_fn.py"


def _where(exc: BaseException) -> str:
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(REWARD_FILE)
    ]
    line = f" (reward_fn.py line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    return f"{type(exc).__name__}: {exc}{line}"


def check(env_id: str, steps: int) -> dict:
    import gymnasium as gym
    import numpy as np

    from langmarl.p2p.reward import check_output, load_reward_file

    try:
        reward = load_reward_file(REWARD_FILE)
        declared = dict(reward.terms)
        _ = reward.latex
    except Exception as exc:
        return {"ok": False, "error": f"loading failed: {_where(exc)}"}
    if not declared:
        return {"ok": False, "error": "the reward declares no terms: list each term in `terms`"}
    env = gym.make(env_id)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    reward.reset()
    seen: set[str] = set()
    elapsed = 0.0
    for step in range(steps):
        action = env.action_space.sample()
        next_obs, _, terminated, truncated, info = env.step(action)
        started = time.perf_counter()
        try:
            output = reward.compute(np.copy(obs), action, np.copy(next_obs), dict(info))
            _, terms = check_output(output, declared)
        except Exception as exc:
            return {"ok": False, "error": f"step {step}: {_where(exc)}"}
        elapsed += time.perf_counter() - started
        seen.update(terms)
        obs = next_obs
        if terminated or truncated:
            obs, _ = env.reset()
            reward.reset()
    missing = sorted(set(declared) - seen)
    if missing:
        return {"ok": False, "error": f"declared terms never returned: {missing}"}
    return {
        "ok": True,
        "error": None,
        "terms": declared,
        "latex": str(reward.latex),
        "description": str(reward.description),
        "call_us": 1e6 * elapsed / steps,
    }


if __name__ == "__main__":
    print(json.dumps(check(sys.argv[1], int(sys.argv[2]))))
