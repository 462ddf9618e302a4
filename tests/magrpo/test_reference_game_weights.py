"""The reference game in weight space: with the ranking listener (the default) one trained
speaker whose word decides a frozen listener's pick; with a generating listener two turns,
the speaker's word reaching the listener's second-turn prompt through the task's transition,
and only the pick rewarded."""

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.envs.reference.env import ReferenceEnv
from langmarl.envs.reference.episodes import episode_from_record
from langmarl.envs.reference.scoring import distinguishing_word, matching_items
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.reference import SPEAKER_DONE, RankedPickReward, heard_message
from langmarl.magrpo.rollout import JointSample
from langmarl.magrpo.run import RunConfig, build_magrpo_trainer, load_run_config
from langmarl.magrpo.tasks import get_task
from langmarl.magrpo.trainer import MAGRPOTrainer


def _sample(example, turn, completions):
    return JointSample(example, turn, tuple(completions), ("", ""), ((), ()))


def _literal_scorer(prefix, options):
    """A stand-in for the model's scorer: a word scores 0 under an item that has it, else -5."""
    item = prefix.split(".")[0].split()  # "The <item>. In one word, it is"
    return [0.0 if option.strip() in item else -5.0 for option in options]


def test_held_out_episodes_are_the_language_space_ones():
    for condition in ("far", "close"):
        task = get_task(f"reference_{condition}", num_eval=30)
        env = ReferenceEnv(_language_config(condition))
        assert [e["id"] for e in task.eval_dataset] == [t["id"] for t in env.splits["test"]]
        assert task.num_agents == task.num_turns == 1 and task.transition is None
        generating = get_task(f"reference_{condition}", num_eval=30, listener="generate")
        assert generating.num_agents == generating.num_turns == 2
        assert generating.transition is not None


def _language_config(condition):
    from langmarl.config.envs import ReferenceConfig

    return ReferenceConfig(condition=condition, num_eval=30)


def test_the_transition_carries_the_first_word_into_the_listeners_second_prompt():
    task = get_task("reference_close", num_eval=2, listener="generate")
    example = task.eval_dataset[0]
    speaker, listener = task.formatters
    assert "Message: (none)" in listener(example) and "Target:" in speaker(example)
    word = distinguishing_word(episode_from_record(example))
    next_prompts = task.transition(example["prompt"], [f"{word.title()}, surely.", "B"], 2)
    assert next_prompts == [SPEAKER_DONE, word]
    child = {**example, "prompt": next_prompts[1]}
    assert heard_message(child) == word
    assert listener(child).endswith(f"Message: {word}\nLetter:")
    assert speaker({**example, "prompt": next_prompts[0]}) == SPEAKER_DONE
    silent = task.transition(example["prompt"], ["...", "B"], 2)  # nothing said
    assert silent[1] == "..." and "Message: ...\n" in listener({**example, "prompt": silent[1]})


def test_only_the_second_turn_pick_is_rewarded():
    task = get_task("reference_far", num_eval=2, listener="generate")
    example = task.eval_dataset[0]
    target = episode_from_record(example).target_label
    wrong = next(label for label in "ABC" if label != target)
    samples = [
        _sample(example, 0, ["red", target]),  # a right label before any message: 0
        _sample(example, 1, ["anything", target]),
        _sample(example, 1, ["anything", f"{wrong}."]),
        _sample(example, 1, ["anything", "no idea"]),
    ]
    assert task.reward_func(samples) == [0.0, 1.0, 0.0, 0.0]


def test_the_ranking_listener_picks_what_the_speaker_names():
    """The speaker's word decides the reward: the distinguishing word wins every episode, a
    word all items share leaves the listener at its first label, silence too."""
    task = get_task("reference_close", num_eval=30)
    reward = RankedPickReward(_literal_scorer)
    episodes = [episode_from_record(e) for e in task.eval_dataset]
    right = [
        _sample(e, 0, [distinguishing_word(ep).title() + "!"])
        for e, ep in zip(task.eval_dataset, episodes, strict=True)
    ]
    assert reward(right) == [1.0] * 30
    shared = [next(w for w in ep.target_item if len(matching_items(ep, w)) == 3) for ep in episodes]
    at_first = [float(ep.target == 0) for ep in episodes]
    said = [_sample(e, 0, [w]) for e, w in zip(task.eval_dataset, shared, strict=True)]
    assert reward(said) == at_first
    assert reward([_sample(e, 0, ["..."]) for e in task.eval_dataset]) == at_first
    assert 0 < sum(at_first) < 30


def test_the_reward_varies_within_a_group_of_speaker_samples():
    """GRPO learns only where a group's rewards differ: one episode, several sampled words."""
    task = get_task("reference_close", num_eval=5)
    example = next(e for e in task.eval_dataset if episode_from_record(e).target != 0)
    episode = episode_from_record(example)
    shared = next(w for w in episode.target_item if len(matching_items(episode, w)) == 3)
    group = [_sample(example, 0, [w]) for w in (distinguishing_word(episode), shared, "x")]
    assert RankedPickReward(_literal_scorer)(group) == [1.0, 0.0, 0.0]


def test_a_listener_option_outside_the_reference_tasks_is_refused():
    with pytest.raises(ValueError, match="option of the reference tasks"):
        RunConfig(task={"name": "poster", "listener": "rank"})


def test_a_dataset_path_is_refused():
    with pytest.raises(ConfigError, match="generated"):
        get_task("reference_close", dataset_path="x.jsonl")


def test_the_run_files_load_and_wrong_turn_settings_are_refused(monkeypatch):
    for condition in ("far", "close"):
        config = load_run_config(f"configs/magrpo/reference_{condition}.json")
        assert config.task.name == f"reference_{condition}" and config.task.listener == "rank"
        assert config.task.speaker == "rank"
        assert config.trainer_config().num_turns == 1 and len(config.models) == 1
    data = json.loads(Path("configs/magrpo/reference_close.json").read_text(encoding="utf-8"))
    built: list[dict] = []
    monkeypatch.setattr(MAGRPOTrainer, "__init__", lambda self, *a, **k: built.append(k))
    with pytest.raises(ConfigError, match=r"set trainer\.num_turns to 1"):
        build_magrpo_trainer(RunConfig(**{**data, "trainer": {**data["trainer"], "num_turns": 2}}))
    build_magrpo_trainer(RunConfig(**data))
    assert built and built[0]["external_transition"] is None
    generating = {**data, "task": {**data["task"], "listener": "generate", "speaker": "generate"},
                  "models": ["smollm2", "smollm2"],
                  "trainer": {**data["trainer"], "num_turns": 2, "discount": 1.0,
                              "joint_mode": "cross"}}  # fmt: skip
    for change, message in [
        ({"num_turns": 1}, "set trainer.num_turns to 2"),
        ({"external_prompt_passthrough": True}, "external_prompt_passthrough to false"),
    ]:
        bad = RunConfig(**{**generating, "trainer": {**generating["trainer"], **change}})
        with pytest.raises(ConfigError, match=message):
            build_magrpo_trainer(bad)
    build_magrpo_trainer(RunConfig(**generating))
    assert built[-1]["external_transition"] is not None


def test_a_training_step_grows_two_turns_with_the_heard_word_in_the_listener_prompt(
    tiny_models, tmp_path
):
    models, tokenizers = tiny_models
    task = get_task("reference_close", num_train=1, num_eval=1, listener="generate")
    seen: list[JointSample] = []

    def reward(samples):
        seen.extend(samples)
        return task.reward_func(samples)

    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"),
        num_generations=2,
        num_turns=2,
        discount=1.0,
        joint_mode="cross",
        max_new_tokens=3,
        max_steps=1,
        use_chat_template=False,
        num_threads=1,
    )
    trainer = MAGRPOTrainer(models, reward, config, tokenizers=tokenizers,
                            formatters=task.formatters, train_dataset=task.train_dataset,
                            external_transition=task.transition)  # fmt: skip
    metrics = trainer.training_step(task.train_dataset)
    assert metrics["leaves"] == 4 * 4
    first = [s for s in seen if s.turn == 0]
    second = [s for s in seen if s.turn == 1]
    assert len(first) == 4 and len(second) == 16
    assert all(s.prompts[0] == SPEAKER_DONE for s in second)
    for s in second:  # the listener heard this branch's speaker word (or "...")
        said = s.response_history[0][0]
        words = [w.lower() for w in "".join(c if c.isalpha() else " " for c in said).split()]
        assert s.prompts[1].endswith(f"Message: {words[0] if words else '...'}\nLetter:")
    assert all(f"agent-{i}/loss" in metrics for i in range(2))


def test_a_training_step_of_the_speaker_scores_its_words_with_the_ranking_listener(
    tiny_models, tmp_path
):
    models, tokenizers = tiny_models
    task = get_task("reference_close", num_train=1, num_eval=1)
    heard: list[str] = []

    def score(prefix, options):
        heard.extend(options)
        return _literal_scorer(prefix, options)

    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"),
        num_agents=1,
        num_generations=3,
        max_new_tokens=3,
        max_steps=1,
        use_chat_template=False,
        num_threads=1,
    )
    trainer = MAGRPOTrainer(models[:1], RankedPickReward(score), config,
                            tokenizers=tokenizers[:1], formatters=task.formatters,
                            train_dataset=task.train_dataset)  # fmt: skip
    metrics = trainer.training_step(task.train_dataset)
    assert metrics["leaves"] == 3 and "agent-0/loss" in metrics
    assert all(option.startswith(" ") and " " not in option[1:] for option in heard)


def test_a_rank_speaker_chooses_among_the_target_words():
    from langmarl.magrpo.menu import menu_of

    task = get_task("reference_close", num_eval=3, speaker="rank")
    (speaker,) = task.formatters
    options = menu_of(speaker)
    writing = get_task("reference_close", num_eval=3).formatters[0]
    assert options is not None and menu_of(writing) is None
    for example in task.eval_dataset:
        target = episode_from_record(example).target_item
        assert options(example) == [f" {word}" for word in target]
        assert speaker(example).endswith("Word:")


def test_speaker_settings_that_cannot_run_are_refused():
    with pytest.raises(ValueError, match="speaker is an option of the reference tasks"):
        RunConfig(task={"name": "writing", "speaker": "rank"})
    with pytest.raises(ValueError, match="set listener to 'rank'"):
        RunConfig(task={"name": "reference_close", "listener": "generate", "speaker": "rank"})
    with pytest.raises(ConfigError, match="needs listener 'rank'"):
        get_task("reference_close", listener="generate", speaker="rank")


def test_a_menu_speaker_is_refused_on_ray_before_anything_samples():
    from types import SimpleNamespace

    from langmarl.magrpo.rollout import _generate_level, roots_for

    task = get_task("reference_close", num_eval=1, speaker="rank")
    worker = SimpleNamespace(generate=lambda *a: pytest.fail("sampled on the actor"))
    agent = SimpleNamespace(formatter=task.formatters[0], worker=worker)
    nodes = roots_for(task.eval_dataset, [agent])
    with pytest.raises(ConfigError, match="placement 'process'"):
        _generate_level([agent], nodes, 2, MAGRPOConfig(output_dir="x"), greedy=False)
