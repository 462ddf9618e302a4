"""Session process for the Prompt2Policy kill/resume test: a scripted LLM (the judge never
passes), the real sandboxed validator and real PPO in executor processes at a tiny budget.
Starts the session in SESSION_DIR, or resumes it when SESSION_DIR already holds one; with
CANDIDATES > 1, a random search (no model) of that many candidates per iteration, one
after the other, scored by the pendulum's shipped check.
Usage: p2p_kill_target.py SESSION_DIR ITERATIONS [CANDIDATES]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PENDULUM_REWARD

from langmarl.llm.types import ChatRequest
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.p2p.session.resume import resume_session
from langmarl.testing import ScriptedLLM

REWARD = f"```python\n{PENDULUM_REWARD.strip()}\n```"


def reply(request: ChatRequest) -> str:
    system = str(request.messages[0]["content"])
    if "SCORE" in system:
        return "SCORE: 0.2"
    if "improve" in system:
        return REWARD + '\n```json\n{"learning_rate": 0.001}\n```'
    return REWARD


CHECK = Path(__file__).parents[2] / "configs" / "p2p" / "checks" / "inverted_pendulum_balance.py"


def main(session_dir: Path, iterations: int, candidates: int = 1) -> None:
    llm = ScriptedLLM(reply)
    if (session_dir / "run.json").is_file():
        result = resume_session(session_dir, llm=llm)
    else:
        search = {"author": "random", "check": str(CHECK)} if candidates > 1 else {}
        config = LoopConfig(
            env_id="InvertedPendulum-v5", max_iterations=iterations, pass_threshold=1.0,
            elaborate=False, review=False, code_judge=False, max_fix_attempts=0,
            total_timesteps=128, max_parallel=1, candidates=candidates, **search,
            train={"num_steps": 128, "batch_size": 64, "n_epochs": 1, "num_evals": 1,
                   "eval_episodes": 2, "max_episode_steps": 50, "record_video": False},
        )  # fmt: skip
        result = run_loop(
            "balance", config, llm=llm, runs_dir=session_dir.parent, session_id=session_dir.name
        )
    if result.status != "max_iterations":
        sys.exit(f"session ended {result.status}: {result.error}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), *(int(arg) for arg in sys.argv[2:]))
