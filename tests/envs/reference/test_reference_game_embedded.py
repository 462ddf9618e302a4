"""The reference game on the embedded model in language space: one greedy held-out episode
(the speaker's chat turn and the listener's ranking through the real model)."""

import math

import pytest

from langmarl.config.envs import ReferenceConfig
from langmarl.envs.reference.env import ReferenceEnv
from langmarl.envs.reference.scoring import channel

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]


async def test_one_held_out_episode_on_the_embedded_model() -> None:
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig

    actor = LLMClient(LLMConfig.from_preset("local").with_overrides(max_tokens=6), role="actor")
    env = ReferenceEnv(ReferenceConfig(condition="far", num_eval=1), llm=actor)
    episode = await env.acollect_trajectory(env.default_policies(), env.splits["test"][0])
    speaker, listener = episode.steps
    details = episode.metadata["reward_details"]
    assert speaker.action and details["heard"] == channel(speaker.action)
    scores = listener.info["scores"]
    assert len(scores) == 3 and all(math.isfinite(s) and s < 0 for s in scores)
    best = max(range(3), key=scores.__getitem__)
    assert listener.action == details["pick"] == "ABC"[best]
    assert episode.reward == float(details["pick"] == details["target"])


async def test_the_rank_speaker_on_the_embedded_model_says_its_likeliest_target_word() -> None:
    from langmarl.envs.reference.episodes import episode_from_record
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig

    actor = LLMClient(LLMConfig.from_preset("local"), role="actor")
    config = ReferenceConfig(condition="close", speaker="rank", num_eval=2)
    env = ReferenceEnv(config, llm=actor)
    for task in env.splits["test"]:
        episode = await env.acollect_trajectory(env.default_policies(), task)
        speaker = episode.steps[0]
        menu = speaker.info["menu"]
        assert list(menu) == list(episode_from_record(task).target_item)
        assert all(math.isfinite(s) and s < 0 for s in menu.values())
        assert speaker.action == max(menu, key=menu.get)
        assert episode.metadata["reward_details"]["heard"] == speaker.action
