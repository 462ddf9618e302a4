"""Credit by region: the critic judges regions, every piston gets its region's feedback."""

from __future__ import annotations

from types import SimpleNamespace

from langmarl.config.envs import PistonballConfig
from langmarl.envs.pistonball.credit import (
    RegionCredit,
    RegionCreditHook,
    pistonball_training_hooks,
)
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.pistonball.episode import play_episode, scripted_decider
from langmarl.llm.types import message_text
from langmarl.testing.scripted import ScriptedLLM
from langmarl.textgrad.critic import CentralizedCritic

CONFIG = PistonballConfig(num_pistons=7, max_cycles=6, credit="region", region_size=3)
REPLY = "[region_0] Rise earlier.\n[region_1]: Go down as the ball comes.\n[region_2] Wait."


async def _trajectory(env: PistonballEnv):  # type: ignore[no-untyped-def]
    result = await play_episode(env.settings, scripted_decider(lambda i, s: "up"), seed=0)
    return env.trajectory(result, {"seed": 0})


async def test_region_feedback_reaches_each_piston_of_the_region() -> None:
    env = PistonballEnv(CONFIG)
    llm = ScriptedLLM([REPLY])
    critic = RegionCredit(CentralizedCritic(CONFIG, llm=llm), env.regions(), segments=2)
    evaluation = await critic.aevaluate(await _trajectory(env), env.default_policies())
    assert evaluation.parse_status == "markers"
    assert evaluation.per_agent == {
        "piston_0": "Rise earlier.", "piston_1": "Rise earlier.", "piston_2": "Rise earlier.",
        "piston_3": "Go down as the ball comes.", "piston_4": "Go down as the ball comes.",
        "piston_5": "Go down as the ball comes.", "piston_6": "Wait.",
    }  # fmt: skip
    prompt = message_text(llm.backend.requests[0].messages[1])  # type: ignore[attr-defined]
    assert "Use exactly these agent ids: region_0, region_1, region_2." in prompt
    assert "- region_2: pistons piston_6 to piston_6" in prompt
    assert prompt.count("=== Contribution of region_") == 3
    assert "Contribution of piston_" not in prompt
    assert prompt.count("pistons 3-5, cycles ") == 2  # two segments per region
    assert critic.llm is llm


async def test_piston_credit_asks_for_every_piston_by_its_id() -> None:
    config = CONFIG.model_copy(update={"credit": "piston"})
    env = PistonballEnv(config)
    llm = ScriptedLLM(['{"piston_0": "a", "piston_6": "b"}'])
    evaluation = await CentralizedCritic(config, llm=llm).aevaluate(
        await _trajectory(env), env.default_policies(), env.describe(), env.agent_roles()
    )
    assert evaluation.per_agent["piston_0"] == "a" and evaluation.per_agent["piston_6"] == "b"
    assert list(evaluation.per_agent) == env.agent_ids
    prompt = message_text(llm.backend.requests[0].messages[1])  # type: ignore[attr-defined]
    assert prompt.count("=== Contribution of piston_") == 7


def test_the_hook_wraps_the_critic_once_and_ignores_other_hooks() -> None:
    env = PistonballEnv(CONFIG)
    (hook,) = pistonball_training_hooks(env, CONFIG)
    assert isinstance(hook, RegionCreditHook)
    inner = CentralizedCritic(CONFIG, llm=ScriptedLLM(["x"]))
    trainer = SimpleNamespace(critic=inner)
    hook.on_iteration_start(0, trainer)
    wrapped = trainer.critic
    assert isinstance(wrapped, RegionCredit) and wrapped.critic is inner
    hook.on_iteration_start(1, trainer)
    assert trainer.critic is wrapped
    assert hook.on_phase_start(0, "load", 1) is None
    assert hook.on_train_end("completed", trainer) is None
    try:
        hook.not_a_hook  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("only on_* hooks are answered")


def test_piston_credit_needs_no_hook() -> None:
    config = CONFIG.model_copy(update={"credit": "piston"})
    assert pistonball_training_hooks(PistonballEnv(config), config) == []
