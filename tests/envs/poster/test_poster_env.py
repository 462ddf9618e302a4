"""`PosterEnv`: the weight-space poster task in language space, on the same held-out topics."""

import pytest

from langmarl.config.envs import PosterConfig
from langmarl.core.demos import Demonstration, DemoPolicy
from langmarl.core.errors import ConfigError, EnvError
from langmarl.envs.poster.env import PosterEnv
from langmarl.magrpo.rollout import JointSample
from langmarl.magrpo.tasks import get_task
from langmarl.testing import ScriptedLLM


def test_held_out_topics_and_prompts_are_the_weight_space_ones() -> None:
    env = PosterEnv()
    task = get_task("poster", num_eval=20)
    assert [t["topic"] for t in env.splits["test"]] == [e["prompt"] for e in task.eval_dataset]
    assert [t["topic"] for t in env.splits["train"]] == [e["prompt"] for e in task.train_dataset]
    first = env.splits["test"][0]
    observations = env.reset(first)
    example = {"prompt": first["topic"]}
    assert [observations[a] for a in env.agent_ids] == [f(example) for f in task.formatters]


def test_the_reward_and_its_per_agent_parts_match_the_weight_space_reward() -> None:
    env = PosterEnv()
    task = env.splits["test"][0]
    for pair in [("Ocean", "The ocean calls you home"), ("The key word is sea", "Waves")]:
        reward, credit = env.score_outputs(task, dict(zip(env.agent_ids, pair, strict=True)))
        sample = JointSample({"prompt": task["topic"]}, 0, pair, ("", ""), ((), ()))
        assert reward == pytest.approx(get_task("poster").reward_func([sample])[0])
        assert sum(credit.values()) == pytest.approx(reward)


async def test_an_episode_is_greedy_unless_exploring_and_sends_demonstrations() -> None:
    llm = ScriptedLLM(lambda request: "Ocean" if len(request.messages) > 2 else "x")
    env = PosterEnv(llm=llm)
    task = {**env.splits["train"][0], "sample_seed": 7}
    policy = DemoPolicy("Be brief.", (Demonstration("Give the key word of ...", "Sea"),))
    policies = {"key_word": policy.render(), "tagline": "Be brief."}
    episode = await env.acollect_trajectory(policies, task)
    requests = llm.backend.requests
    assert [r.temperature for r in requests] == [0.0, 0.0] and requests[0].seed is None
    assert [m["role"] for m in requests[0].messages] == ["system", "user", "assistant", "user"]
    assert [s.action for s in episode.steps] == ["Ocean", "x"]
    assert (
        episode.metadata["agent_rewards"]["key_word"] > episode.metadata["agent_rewards"]["tagline"]
    )
    with env.exploring(0.9):
        await env.acollect_trajectory(policies, task)
    assert {(r.temperature, r.seed) for r in requests[2:]} == {(0.9, 7)}
    assert env.temperature == 0.0


def test_bad_setups_say_what_to_change(tmp_path) -> None:
    with pytest.raises(ConfigError, match="lower num_eval"):
        PosterEnv(PosterConfig(num_eval=5), topics=["a", "b"])
    with pytest.raises(ConfigError, match="does not exist"):
        PosterEnv(PosterConfig(topics_path=str(tmp_path / "missing.txt")))
    topics = tmp_path / "topics.txt"
    topics.write_text("# mine\ntea\nsoup\nrain\n")
    env = PosterEnv(PosterConfig(topics_path=str(topics), num_eval=1))
    assert [t["topic"] for t in env.splits["test"]] == ["tea"]
    with pytest.raises(EnvError, match="simultaneous"):
        env.step("key_word", "tea")


def test_agents_can_act_with_their_own_models() -> None:
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.tracker import UsageLedger

    ledger = UsageLedger()
    actor = LLMClient(LLMConfig.from_preset("local"), role="actor", ledger=ledger)
    config = PosterConfig(agent_models={"tagline": "runs/q/checkpoints/step-000016/agent-1"})
    env = PosterEnv(config, llm=actor)
    mine = env.agent_llms["tagline"]  # made, not loaded: the model loads on first call
    assert mine.config.model_string == "runs/q/checkpoints/step-000016/agent-1"
    assert mine.role == "actor" and mine.ledger is ledger and "key_word" not in env.agent_llms
    with pytest.raises(ValueError, match="Did you mean 'tagline'"):
        PosterConfig(agent_models={"tagilne": "x"})


async def test_an_agent_with_its_own_model_answers_through_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langmarl.llm.client import LLMClient

    own = ScriptedLLM(["The ocean calls you home"])
    monkeypatch.setattr(LLMClient, "with_model", lambda self, model: own)
    env = PosterEnv(PosterConfig(agent_models={"tagline": "a/agent-1"}), llm=ScriptedLLM(["Sea"]))
    episode = await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
    assert [s.action for s in episode.steps] == ["Sea", "The ocean calls you home"]
    assert len(own.backend.requests) == 1
