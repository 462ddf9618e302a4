"""Runs of every kind for the API tests, made the cheapest way each is made, and a real
server to serve an app:

* ``lang``: a real language run (MonteCarloTrainer, scripted LLM: 2 iterations of the qa
  task) with policies, trajectories, evaluations, gradients and update decisions;
* ``weights~mag``: a finished MAGRPO run written through RunDir (metrics, eval.jsonl, a
  checkpoint, held-out report with sample completions), as tests/store does;
* ``grpo``: a PARL GRPO run with its curves;
* ``pool``: a real pool-search run of the poster task (PoolTrainer, a scripted model that
  copies the form of its demonstrations: 2 rounds) with ``pool.jsonl``;
* ``session``: a Prompt2Policy session written through SessionRecord (reward code with
  LaTeX, judgment, per-term scalars, a video), and ``bench_1`` a benchmark table over one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from langmarl.llm.types import ChatRequest, message_text
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.roles import role_of_system

REPLIES = {
    "critic": '{"researcher": "quote the fact", "answerer": "answer in one word"}',
    "aggregate": "Quote the fact, then answer in one word.",
    "rewrite": "You answer with one word after quoting the fact from the context.",
    "gradient": "Quote the fact, then answer in one word.",
    "actor": "Answer: Paris",
}
REWARD_CODE = '''def reward_fn(obs, action, next_obs, info):
    """Keep the pole upright.
    LaTeX: r = 1 - |\\\\theta|
    """
    up = 1.0 - abs(float(next_obs[1]))
    return up, {"upright": up}
'''


def _reply(request: ChatRequest) -> str:
    system = message_text(request.messages[0]) if request.messages else ""
    return REPLIES[role_of_system(system)]


def language_run(root: Path, name: str = "lang") -> Path:
    """A real 2-iteration language run of the qa task under ``root``."""
    from langmarl.config import LanguageTaskConfig
    from langmarl.envs.language.env import LanguageEnv
    from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
    from langmarl.trainer import MonteCarloTrainer

    config = LanguageTaskConfig(
        exp_name=name, task_type="qa", num_iterations=2, trajectories_per_iteration=2,
        runs_dir=str(root), checkpoint_dir=str(root.parent / "ck"), seed=3,
        validation_size=1,
    )  # fmt: skip
    llm = ScriptedLLM(_reply, config=scripted_config(max_retries=0))
    env = LanguageEnv(config, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    MonteCarloTrainer(
        config, env, critic, PolicyGradientOptimizer(scripted_config(), llm=llm)
    ).train()
    return root / name


def _poster_reply(request: ChatRequest) -> str:
    """Short answers once the chat holds a short demonstration (or, exploring, every other
    seed), else a ramble: demonstrations help, so the pool search keeps some."""
    ask = message_text(request.messages[-1])
    topic = re.search(r"about (.+?)(?:\. Answer| that uses)", ask)
    word = (topic.group(1) if topic else "things").split()[-1]
    shown = [message_text(m) for m in request.messages if m["role"] == "assistant"]
    exploring = (request.temperature or 0) > 0 and (request.seed or 0) % 2 == 0
    short = exploring or any(len(d.split()) <= 6 for d in shown)
    if ask.startswith("Give the key word"):
        return word.capitalize() if short else f"The key word of a poster about {word} is this"
    return f"The {word} calls you home" if short else f"so many words about {word} on and on"


def pool_run(root: Path, name: str = "pool") -> Path:
    """A real 2-round pool-search run of the poster task under ``root``."""
    from langmarl.config.envs import PosterConfig
    from langmarl.envs.poster.env import PosterEnv
    from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
    from langmarl.trainer.pool.search import PoolTrainer

    config = PosterConfig(
        exp_name=name, search="pool", num_iterations=2, trajectories_per_iteration=8,
        validation_size=3, num_eval=2, runs_dir=str(root), checkpoint_dir=str(root / "ck"),
        seed=3, pool={"children": 3, "samples_per_task": 2, "max_demonstrations": 2},
    )  # fmt: skip
    llm = ScriptedLLM(_poster_reply, config=scripted_config(max_retries=0))
    words = ("ocean", "coffee", "moon", "river", "bread", "cat", "snow", "tea", "lamp", "kite")
    topics = [f"topic {w}" for w in words]
    env = PosterEnv(config, topics=topics, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    PoolTrainer(config, env, critic, optimizer).train()
    return root / name


def magrpo_run(path: Path) -> Path:
    run = RunDir(path)
    run.start("magrpo", config={"algorithm": "magrpo", "api_key": "sk-not-shown-1234"},
              total_steps=4)  # fmt: skip
    for step in range(1, 5):
        run.log_metrics(step, reward_mean=step / 4, loss=1.0 / step)
    run.append("eval.jsonl", {"step": 4, "eval_return": 0.8, "eval_reward_turn1": 0.8})
    state = path / "checkpoints" / "step-000004"
    state.mkdir(parents=True)
    (state / "trainer_state.json").write_text(json.dumps({"algorithm": "magrpo", "step": 4}))
    (path / "checkpoints" / ".step-000006.tmp").mkdir()  # a staging dir: not a checkpoint
    interval = {"mean": 0.5, "low": 0.4, "high": 0.6, "n": 2}
    sample = {"prompt": "Name a colour.", "completions": [["red"]], "return": 1.0}
    run.write_json("heldout.json", {
        "task": "poster",
        "before": {"label": "untrained", "interval": interval, "returns": [0.4, 0.6],
                   "samples": [sample]},
        "after": {"label": "step-000004", "interval": {**interval, "mean": 0.9},
                  "returns": [0.9, 0.9], "samples": [{**sample, "return": 0.9}]},
    })  # fmt: skip
    run.finish("completed")
    return path


def grpo_run(path: Path) -> Path:
    run = RunDir(path)
    run.start("parl_grpo", total_steps=2)
    for step in range(2):
        run.log_metrics(step, total_reward=0.25 * (step + 1))
    rows = [{"step": s, "task_id": f"t{s}", "critical_steps": 2.0, "serial_steps": 4.0}
            for s in range(2)]  # fmt: skip
    run.write_json("parl_curves.json", {"curve": [{"step": 0, "speedup": 2.0}], "episodes": rows})
    run.finish("completed")
    return path


def session_run(path: Path) -> Path:
    from langmarl.p2p.session.contracts import JudgmentResult, RewardSpec
    from langmarl.p2p.session.records import SessionRecord

    session = SessionRecord(path)
    session.start("balance the pole", "InvertedPendulum-v5", {"env_id": "InvertedPendulum-v5"})
    session.save_metadata({**session.read_metadata(), "prompt": "balance the pole"})
    it = session.new_iteration(1)
    it.save_reward_source(REWARD_CODE)
    it.save_reward_spec(RewardSpec(latex=r"r = 1 - |\theta|", terms={"upright": "1 - angle"},
                                   origin="author"))  # fmt: skip
    it.save_judgment(JudgmentResult(intent_score=0.9, passed=True, diagnosis="stays up"))
    it.scalars_path.parent.mkdir(parents=True)
    rows = [{"type": "train", "step": 50, "upright": 0.5}, {"type": "eval", "step": 100,
            "mean_return": 3.0, "upright": 1.0}]  # fmt: skip
    it.scalars_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    it.videos_dir.mkdir()
    (it.videos_dir / "eval_100_median.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42fake")
    it.set_status("completed")
    session.record_iteration(1, intent_score=0.9, mean_return=3.0, best_score=0.9)
    listed = [  # a search iteration's two candidates, the first kept
        {"name": "c_1", "origin": "structured", "proposal": "upright: 1 alive", "judged": True,
         "score": 0.9, "mean_return": 3.0},
        {"name": "c_2", "origin": "random", "proposal": "random: 2 cart_position",
         "judged": True, "score": 0.4, "mean_return": 1.0},
    ]  # fmt: skip
    history = {"iterations": [{"iteration": 1, "iteration_id": "iter_1", "intent_score": 0.9,
                               "reward_origin": "structured", "mean_return": 3.0,
                               "candidates": listed, "winner": "c_1"}],
               "best_iteration": 1, "best_score": 0.9, "status": "passed"}  # fmt: skip
    session.save_history(history)
    session.set_status("passed")
    return path


def stage_running(
    built: Path, served: Path, lines: dict[str, int], trajectories: bool = True
) -> None:
    """``served`` as the run ``built`` stood while it ran: every file of it, but of each
    JSONL file named in ``lines`` only its first lines (how many: the value; 0: no file), the
    trajectories only if ``trajectories``, and a ``run.json`` that says it runs (owned by
    this process, so the status is believed). Called again with more lines, the run grows.
    Each file is replaced whole, as the run's writers write theirs: a copy the server read
    half-written was a torn JSON file no run leaves (one such read answered 500)."""
    import os

    from langmarl.core.files import atomic_write_bytes, atomic_write_text
    from langmarl.core.processes import process_start

    for path in sorted(p for p in built.rglob("*") if p.is_file()):
        relpath = path.relative_to(built).as_posix()
        if relpath == "run.json" or (relpath.startswith("trajectories/") and not trajectories):
            continue
        target = served / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        if lines.get(relpath) == 0:  # not written yet
            target.unlink(missing_ok=True)
        elif relpath in lines:
            kept = path.read_text().splitlines(keepends=True)[: lines[relpath]]
            atomic_write_text(target, "".join(kept))
        else:
            atomic_write_bytes(target, path.read_bytes())
    info = json.loads((built / "run.json").read_text())
    pid = os.getpid()
    info.update(status="running", error=None, pid=pid, pid_started=process_start(pid))
    if "metrics.jsonl" in lines:
        info["completed_iterations"] = lines["metrics.jsonl"]
    atomic_write_text(served / "run.json", json.dumps(info))


def line_of(path: Path, event: str, nth: int = 1) -> int:
    """How many lines of the JSONL ``path`` come up to its ``nth`` line whose ``event`` is
    ``event`` (that line included)."""
    seen = 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        seen += json.loads(line).get("event") == event
        if seen == nth:
            return number
    raise AssertionError(f"{path} has fewer than {nth} {event!r} events")
