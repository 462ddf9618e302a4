"""Credit by numbers: counterfactual recombination, reported parts, and the team fallback."""

from langmarl.core.records import Step, Trajectory
from langmarl.envs.poster.env import PosterEnv
from langmarl.trainer.pool.credit import assign_credit

AGENTS = ["key_word", "tagline"]
TASK = {"id": "poster/0", "topic": "the ocean"}


def episode(key: str, tagline: str, reward: float = 0.0, parts: dict | None = None) -> Trajectory:
    steps = [
        Step(agent_id="key_word", observation="kw?", action=key),
        Step(agent_id="tagline", observation="tag?", action=tagline),
    ]
    metadata = {"agent_rewards": parts} if parts is not None else {}
    return Trajectory(task=TASK, steps=steps, reward=reward, agent_ids=AGENTS, metadata=metadata)


def test_recombining_finds_a_shared_word_no_single_episode_shows() -> None:
    env = PosterEnv()
    episodes = [
        episode("Ocean", "A long day at the sea shore"),  # key word fine, no shared word
        episode("The key word is sea", "The ocean calls you"),  # tagline uses "ocean"
    ]
    credit = assign_credit(episodes, AGENTS, env.score_outputs)
    assert credit.source == "counterfactual"
    best = credit.joint[0]
    assert best.reward == 1.0  # "Ocean" + "The ocean calls you": both bands, shared word
    assert best.answers["key_word"].output == "Ocean"
    assert best.answers["tagline"].output == "The ocean calls you"
    assert credit.answers["key_word"][0].output == "Ocean"
    assert credit.answers["key_word"][0].credit == 1.0


def test_reported_parts_are_each_agents_credit() -> None:
    episodes = [
        episode("a", "b", 0.5, {"key_word": 0.4, "tagline": 0.1}),
        episode("c", "d", 0.3, {"key_word": 0.0, "tagline": 0.3}),
    ]
    credit = assign_credit(episodes, AGENTS, scorer=None)
    assert credit.source == "parts"
    assert [a.output for a in credit.answers["tagline"]] == ["d", "b"]
    assert credit.answers["key_word"][0].credit == 0.4


def test_without_parts_every_answer_gets_the_team_reward() -> None:
    credit = assign_credit([episode("a", "b", 0.7), episode("c", "d", 0.2)], AGENTS, None)
    assert credit.source == "team"
    assert [(a.output, a.credit) for a in credit.answers["key_word"]] == [("a", 0.7), ("c", 0.2)]


def test_failed_episodes_earn_nothing() -> None:
    failed = episode("Ocean", "The ocean calls you")
    failed.metadata["error"] = "LLM down"
    credit = assign_credit([failed], AGENTS, PosterEnv().score_outputs)
    assert credit.joint == [] and credit.answers == {"key_word": [], "tagline": []}
