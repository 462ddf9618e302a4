"""The reference game: the generator's conditions and splits, the channel and the pick, and
scripted teams: the listener alone scores chance, a speaker naming the distinguishing
attribute lets a literal listener score 1.0 (the task is solvable and needs the message)."""

import itertools
import random
from collections import Counter

import pytest

from langmarl.config.envs import ReferenceConfig
from langmarl.config.loading import load_config
from langmarl.core.errors import ConfigError, EnvError
from langmarl.envs.reference.env import ReferenceEnv
from langmarl.envs.reference.episodes import (
    ATTRIBUTES,
    Episode,
    describe,
    episode_from_record,
    episode_record,
    make_episode,
    make_episodes,
    split_items,
)
from langmarl.envs.reference.scoring import (
    channel,
    distinguishing_word,
    matching_items,
    parse_pick,
    reference_reward,
)
from langmarl.envs.registry import make_env
from langmarl.testing import ScriptedLLM

CONDITIONS = ("far", "close")
MANY = 3000
CHANCE_TOLERANCE = 0.04
"""|mean - 1/N| allowed over MANY episodes: the mean's standard deviation there is
sqrt(1/3 * 2/3 / 3000) = 0.0086, so this is 4.6 of them."""


def _blind_listeners(seed: int):
    """Listeners that see the labelled items but no message."""
    rng = random.Random(seed)
    return {
        "always A": lambda e: "A",
        "random": lambda e: rng.choice(e.labels),
        "first in word order": lambda e: e.labels[e.items.index(min(e.items))],
        "odd one out": lambda e: e.labels[_odd_one_out(e)],
    }


def _odd_one_out(episode: Episode) -> int:
    """The item sharing the fewest values with the others (a listener exploiting structure)."""
    shared = [
        sum(len(set(item) & set(other)) for other in episode.items if other is not item)
        for item in episode.items
    ]
    return shared.index(min(shared))


def _literal_pick(episode: Episode, heard: str) -> str:
    """A scripted listener: the first item containing the heard word, else A."""
    matches = matching_items(episode, heard)
    return episode.labels[matches[0]] if matches else "A"


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_listener_without_the_message_scores_chance(condition, split):
    episodes = make_episodes(condition, split, MANY)
    for name, listener in _blind_listeners(seed=1).items():
        mean = sum(reference_reward(e, listener(e)) for e in episodes) / MANY
        assert abs(mean - 1 / 3) < CHANCE_TOLERANCE, (name, mean)


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize("split", ["train", "test"])
def test_a_speaker_naming_the_distinguishing_attribute_lets_a_literal_listener_win(
    condition, split
):
    episodes = make_episodes(condition, split, 500)
    rewards = [
        reference_reward(e, _literal_pick(e, channel(distinguishing_word(e)))) for e in episodes
    ]
    assert rewards == [1.0] * len(episodes)


def test_in_close_episodes_a_word_the_items_share_does_not_tell_the_target_apart():
    episodes = make_episodes("close", "train", 500)
    names = list(ATTRIBUTES)
    shared_words = [
        e.target_item[names.index(next(a for a in names if a != e.varying))] for e in episodes
    ]
    mean = sum(
        reference_reward(e, _literal_pick(e, w))
        for e, w in zip(episodes, shared_words, strict=True)
    ) / len(episodes)
    assert abs(mean - 1 / 3) < 0.1  # the literal listener's first match: chance again


def test_far_items_share_no_value_and_close_distractors_differ_in_one_attribute():
    for e in make_episodes("far", "train", 300) + make_episodes("far", "test", 300):
        for a, b in itertools.combinations(e.items, 2):
            assert not set(a) & set(b), e
    names = list(ATTRIBUTES)
    for e in make_episodes("close", "train", 300) + make_episodes("close", "test", 300):
        k = names.index(e.varying)
        assert len({item[k] for item in e.items}) == len(e.items)
        for d in e.distractors:
            assert [j for j in range(len(names)) if d[j] != e.target_item[j]] == [k]


def test_close_episodes_vary_each_attribute_about_as_often_in_both_splits():
    """A speaker learns to name only what training episodes vary: the shares must match."""
    for split in ("train", "test"):
        counts = Counter(e.varying for e in make_episodes("close", split, 300))
        assert set(counts) == set(ATTRIBUTES) and min(counts.values()) > 300 / 4, (split, counts)


def test_held_out_targets_are_combinations_no_training_episode_contains():
    held = set(split_items("test"))
    assert held and not held & set(split_items("train"))
    assert len(held) + len(split_items("train")) == 90
    for k, values in enumerate(ATTRIBUTES.values()):  # every value is seen in training
        assert {item[k] for item in split_items("train")} == set(values)
    for condition in CONDITIONS:
        train = make_episodes(condition, "train", 2000)
        seen = {item for e in train for item in e.items}
        assert not seen & held
        targets = {e.target_item for e in make_episodes(condition, "test", 200)}
        assert targets <= held and len(targets) > 10


def test_episodes_are_deterministic_and_the_target_place_is_uniform():
    assert make_episodes("close", "test", 50) == make_episodes("close", "test", 50)
    assert make_episodes("close", "test", 50) != make_episodes("close", "test", 50, seed=1)
    places = [e.target for e in make_episodes("far", "train", MANY)]
    for place in range(3):
        assert abs(places.count(place) / MANY - 1 / 3) < CHANCE_TOLERANCE
    two = make_episode("close", "train", 3, num_items=2)
    assert len(two.items) == 2 and two.labels == "AB"
    e = make_episode("far", "test", 7)
    assert episode_from_record(episode_record(e)) == e


def test_bad_generator_arguments_say_what_to_use():
    with pytest.raises(ConfigError, match="'far' or 'close'"):
        make_episode("near", "train", 0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'train' or 'test'"):
        make_episode("far", "dev", 0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="use 2 to 3"):
        make_episode("far", "train", 0, num_items=4)


def test_the_channel_keeps_the_first_words_and_the_pick_is_a_capital_label():
    assert channel("Green, I think.") == "green"
    assert channel("  large red star\n", 2) == "large red"
    assert channel("...") == ""
    assert parse_pick(" B\n", "ABC") == "B"
    assert parse_pick("Answer: C.", "ABC") == "C"
    assert parse_pick("a small red circle", "ABC") is None  # an article, not label A
    assert parse_pick("I pick D", "ABC") is None
    e = make_episode("close", "test", 0)
    assert reference_reward(e, e.target_label) == 1.0
    assert reference_reward(e, next(x for x in e.labels if x != e.target_label)) == 0.0


def _scripted_team(speaker, listener_label):
    """A ScriptedLLM answering as speaker (observation has 'Target:') or listener."""

    def reply(request):
        seen = request.messages[-1]["content"]
        if "Target:" in seen:
            return speaker(seen)
        return listener_label(seen)

    return ScriptedLLM(reply)


def _name_the_varying_value(seen: str) -> str:
    lines = dict(line.split(": ", 1) for line in seen.splitlines() if ": " in line)
    objects = [o.split() for o in lines["Objects"].split(", ")]
    target = lines["Target"].split()
    varying = [k for k in range(3) if len({o[k] for o in objects}) > 1]
    return target[varying[0]]


def _listen_literally(seen: str) -> str:
    heard = seen.split("Message: ")[1].splitlines()[0]
    for line in seen.splitlines():
        if ": " in line and heard in line.split(": ", 1)[1].split():
            return line[0]
    return "A"


@pytest.mark.parametrize("condition", CONDITIONS)
async def test_a_scripted_team_wins_every_held_out_episode_through_the_env(condition):
    env = ReferenceEnv(ReferenceConfig(condition=condition, listener="generate", num_eval=20))
    env.set_llm(_scripted_team(_name_the_varying_value, _listen_literally))
    policies = env.default_policies()
    episodes = [await env.acollect_trajectory(policies, t) for t in env.splits["test"]]
    assert [t.reward for t in episodes] == [1.0] * 20
    first = episodes[0]
    assert [s.agent_id for s in first.steps] == ["speaker", "listener"]
    heard = first.metadata["reward_details"]["heard"]
    assert f"Message: {heard}\n" in first.steps[1].observation
    assert first.metadata["agent_rewards"] == {"speaker": 1.0, "listener": 1.0}


async def test_the_env_listener_hears_only_the_first_word():
    env = ReferenceEnv(ReferenceConfig(condition="close", listener="generate", num_eval=5))
    llm = _scripted_team(lambda seen: "the " + _name_the_varying_value(seen), _listen_literally)
    env.set_llm(llm)
    episode = await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
    assert episode.metadata["reward_details"]["heard"] == "the"
    assert "Message: the\n" in episode.steps[1].observation


def _ranking_llm(speaker):
    """A scripted speaker and a local-model-like scorer: log P(word | item) is 0 when the
    item contains the word, else -5."""
    llm = _scripted_team(speaker, lambda seen: "A")

    def option_logprobs(prefix, options):
        item = prefix.split(".")[0].split()  # "The <item>. In one word, it is"
        return [0.0 if option.strip() in item else -5.0 for option in options]

    llm.backend.option_logprobs = option_logprobs
    return llm


async def test_the_rank_listener_picks_the_item_the_word_fits_and_guesses_without_one():
    env = ReferenceEnv(ReferenceConfig(condition="close", num_eval=10))
    env.set_llm(_ranking_llm(_name_the_varying_value))
    policies = env.default_policies()
    episodes = [await env.acollect_trajectory(policies, t) for t in env.splits["test"]]
    assert [t.reward for t in episodes] == [1.0] * 10
    assert len(episodes[0].steps[1].info["scores"]) == 3

    env.set_llm(_ranking_llm(lambda seen: "..."))  # nothing heard: the listener says A
    blind = [await env.acollect_trajectory(policies, t) for t in env.splits["test"]]
    assert {t.steps[1].action for t in blind} == {"A"}


async def test_the_rank_listener_needs_a_model_that_scores():
    env = ReferenceEnv(ReferenceConfig(num_eval=2))
    env.set_llm(_scripted_team(_name_the_varying_value, _listen_literally))
    with pytest.raises(EnvError, match="listener='generate'"):
        await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])


def test_the_language_configs_load_validate_and_build_the_env():
    for condition in CONDITIONS:
        config = load_config(f"configs/reference_{condition}.json")
        assert isinstance(config, ReferenceConfig) and config.condition == condition
        env = make_env("reference", config)
        assert len(env.splits["test"]) == config.num_eval == 30
        test_ids = [t["id"] for t in env.splits["test"]]
        assert test_ids == [e.id for e in make_episodes(condition, "test", 30)]
        assert (
            describe(episode_from_record(env.splits["test"][0]).target_item)
            in env.reset(env.splits["test"][0])["speaker"]
        )
    with pytest.raises(ValueError, match="condition"):
        ReferenceConfig(condition="near")


async def test_an_agent_with_its_own_model_speaks_through_it(monkeypatch) -> None:
    from langmarl.llm.client import LLMClient

    own = _ranking_llm(_name_the_varying_value)
    monkeypatch.setattr(LLMClient, "with_model", lambda self, model: own)
    config = ReferenceConfig(num_eval=1, agent_models={"speaker": "run/agent-0"})
    env = ReferenceEnv(config, llm=_ranking_llm(lambda seen: "..."))
    episode = await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
    assert episode.reward == 1.0 and len(own.backend.requests) == 1
    with pytest.raises(ValueError, match="Did you mean 'listener'"):
        ReferenceConfig(agent_models={"listner": "x"})


def _menu_llm(prefers):
    """A scorer for both ranking agents: the listener's items as :func:`_ranking_llm`; the
    speaker's menu (a prompt ending in ``Word:``) gets 0 for ``prefers(observation)``'s
    word and -1, -2 … for the others in their order."""
    llm = _ranking_llm(lambda seen: "unused")
    listener = llm.backend.option_logprobs
    speaker_prefixes: list[str] = []

    def option_logprobs(prefix, options):
        if not prefix.endswith("Word:"):
            return listener(prefix, options)
        speaker_prefixes.append(prefix)
        observation = prefix.rsplit("\n\n", 1)[1]
        best = prefers(observation)
        others = iter(range(-1, -len(options) - 1, -1))
        return [0.0 if o.strip() == best else float(next(others)) for o in options]

    llm.backend.option_logprobs = option_logprobs
    llm.speaker_prefixes = speaker_prefixes
    return llm


async def test_the_rank_speaker_says_the_target_word_its_policy_ranks_first():
    """It chooses among the target's words only (a word it prefers but the target lacks is
    not on the menu), greedily the best, and its prompt is weight space's speaker prompt."""
    from langmarl.magrpo.reference import speaker_prompt

    env = ReferenceEnv(ReferenceConfig(condition="close", speaker="rank", num_eval=12))
    env.set_llm(_menu_llm(_name_the_varying_value))
    policies = env.default_policies()
    tasks = env.splits["test"]
    episodes = [await env.acollect_trajectory(policies, t) for t in tasks]
    assert [t.reward for t in episodes] == [1.0] * 12
    for task, episode in zip(tasks, episodes, strict=True):
        menu = episode.steps[0].info["menu"]
        assert list(menu) == list(episode_from_record(task).target_item)
        assert episode.steps[0].action == max(menu, key=menu.get)
    assert env.llm.speaker_prefixes[0] == speaker_prompt({**tasks[0], "prompt": tasks[0]["id"]})
    assert len(env.llm.backend.requests) == 0  # nothing generated

    env.set_llm(_menu_llm(lambda seen: "heart"))  # not a target word: the menu's first
    first = await env.acollect_trajectory(policies, tasks[0])
    assert first.steps[0].action == episode_from_record(tasks[0]).target_item[0]


async def test_an_exploring_rank_speaker_draws_by_its_scores_with_the_task_seed():
    env = ReferenceEnv(ReferenceConfig(condition="close", speaker="rank", num_eval=1))
    env.set_llm(_menu_llm(_name_the_varying_value))
    task = env.splits["test"][0]
    best = _name_the_varying_value(env.reset(task)["speaker"])
    words = []
    with env.exploring(1.0):
        for seed in range(200):
            episode = await env.acollect_trajectory(env.default_policies(),
                                                    {**task, "sample_seed": seed})  # fmt: skip
            words.append(episode.steps[0].action)
        again = await env.acollect_trajectory(env.default_policies(), {**task, "sample_seed": 7})
    assert again.steps[0].action == words[7]
    # scores 0, -1, -2 at temperature 1: the best word has probability 1 / (1 + e^-1 + e^-2)
    assert abs(words.count(best) / 200 - 0.665) < 0.12 and len(set(words)) == 3


async def test_the_rank_speaker_needs_a_model_that_scores():
    env = ReferenceEnv(ReferenceConfig(num_eval=2, speaker="rank"))
    env.set_llm(_scripted_team(_name_the_varying_value, _listen_literally))
    with pytest.raises(EnvError, match="speaker='generate'"):
        await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
