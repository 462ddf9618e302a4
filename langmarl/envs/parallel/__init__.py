"""The orchestrator/sub-agent environment for PARL (``make_env("parallel_tasks")``)."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "ParallelTasksEnv": "langmarl.envs.parallel.env",
    "make_parallel_tasks": "langmarl.envs.parallel.env",
    "EpisodeSettings": "langmarl.envs.parallel.runner",
    "execute_plan": "langmarl.envs.parallel.runner",
    "run_episode": "langmarl.envs.parallel.runner",
    "ExecutionTrace": "langmarl.envs.parallel.trace",
    "Stage": "langmarl.envs.parallel.trace",
    "SubAgentRun": "langmarl.envs.parallel.trace",
    "ParallelTask": "langmarl.envs.parallel.tasks",
    "SubTask": "langmarl.envs.parallel.tasks",
    "load_task_set": "langmarl.envs.parallel.tasks",
    "Plan": "langmarl.envs.parallel.plan",
    "parse_plan": "langmarl.envs.parallel.plan",
    "score_traces": "langmarl.envs.parallel.reward",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.envs.parallel.env import ParallelTasksEnv, make_parallel_tasks
    from langmarl.envs.parallel.plan import Plan, parse_plan
    from langmarl.envs.parallel.reward import score_traces
    from langmarl.envs.parallel.runner import EpisodeSettings, execute_plan, run_episode
    from langmarl.envs.parallel.tasks import ParallelTask, SubTask, load_task_set
    from langmarl.envs.parallel.trace import ExecutionTrace, Stage, SubAgentRun
