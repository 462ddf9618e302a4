"""An agent that chooses among the options a task offers (:mod:`langmarl.magrpo.menu`): it
draws what the model's likelihoods say, greedy takes the most likely, the batch trains the
options' tokens, and a training step runs through the rollout."""

import math

import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.generation import completion_logprobs
from langmarl.magrpo.menu import MenuFormatter, choose, menu_of, option_scores
from langmarl.magrpo.trainer import MAGRPOTrainer

PROMPTS = ["The colour of the sky is", "A shape with three sides is a"]
MENUS = [[" blue", " green", " dark red"], [" triangle", " square"]]


def _config(**changes):
    return MAGRPOConfig(output_dir="unused", use_chat_template=False, num_threads=1, **changes)


def test_scores_are_each_options_summed_token_logprobs(tiny_models):
    import torch

    (model, _), (tokenizer, _) = tiny_models
    scores = option_scores(model, tokenizer, PROMPTS, MENUS, _config())
    assert [len(s) for s in scores] == [3, 2]
    shared = option_scores(model, tokenizer, PROMPTS[:1], MENUS[:1], _config())[0]  # equal menus
    assert shared.tolist() == pytest.approx(scores[0].tolist(), abs=1e-4)
    for prompt, menu, score in zip(PROMPTS, MENUS, scores, strict=True):
        for option, value in zip(menu, score.tolist(), strict=True):
            ids = tokenizer.encode(prompt + option, return_tensors="pt")
            width = len(tokenizer.encode(option, add_special_tokens=False))
            with torch.inference_mode():
                logits = model(input_ids=ids).logits[0, -width - 1 : -1]
            expected = torch.log_softmax(logits.float(), -1)[range(width), ids[0, -width:]].sum()
            assert value == pytest.approx(float(expected), abs=1e-4)


def test_greedy_takes_the_most_likely_option_and_the_batch_trains_its_tokens(tiny_models):
    (model, _), (tokenizer, _) = tiny_models
    config = _config()
    scores = option_scores(model, tokenizer, PROMPTS, MENUS, config)
    batch = choose(model, tokenizer, PROMPTS, MENUS, 2, config, greedy=True)
    best = [menu[int(s.argmax())].strip() for menu, s in zip(MENUS, scores, strict=True)]
    assert batch.texts == [best[0], best[0], best[1], best[1]]
    logprobs = completion_logprobs(model, batch.sequences, batch.attention_mask,
                                   batch.prompt_length)  # fmt: skip
    totals = (logprobs * batch.completion_mask).sum(dim=1).tolist()
    wanted = [float(s.max()) for s in scores for _ in range(2)]
    assert totals == pytest.approx(wanted, abs=1e-4)
    widths = batch.completion_mask.sum(dim=1).tolist()
    assert widths == [len(tokenizer.encode(" " + t, add_special_tokens=False)) for t in batch.texts]


def test_sampling_follows_the_softmax_of_the_scores_at_the_temperature(tiny_models):
    import torch

    (model, _), (tokenizer, _) = tiny_models
    for temperature in (1.0, 0.05):
        config = _config(temperature=temperature)
        score = option_scores(model, tokenizer, PROMPTS[:1], MENUS[:1], config)[0]
        expected = torch.softmax(score / temperature, 0).tolist()
        draws = 3000
        batch = choose(model, tokenizer, PROMPTS[:1], MENUS[:1], draws, config,
                       generator=torch.Generator().manual_seed(1))  # fmt: skip
        for option, p in zip(MENUS[0], expected, strict=True):
            seen = batch.texts.count(option.strip()) / draws
            assert abs(seen - p) < 4 * math.sqrt(p * (1 - p) / draws) + 1e-3


def test_an_empty_menu_or_option_is_refused(tiny_models):
    (model, _), (tokenizer, _) = tiny_models
    for menus in ([[], MENUS[1]], [[" blue", "  "], MENUS[1]]):
        with pytest.raises(ConfigError, match="non-empty options"):
            choose(model, tokenizer, PROMPTS, menus, 2, _config())


def test_a_training_step_chooses_from_the_menu_and_raises_the_rewarded_one(tiny_models, tmp_path):
    """The rewarded option's probability rises after one update (lr large on purpose)."""
    import torch

    models, tokenizers = tiny_models
    formatter = MenuFormatter(lambda example: example["prompt"], lambda example: MENUS[0])
    assert menu_of(formatter) is not None and menu_of(lambda example: "") is None
    chosen: list[str] = []

    def reward(samples):
        chosen.extend(s.completions[0] for s in samples)
        return [float(s.completions[0] == "green") for s in samples]

    config = MAGRPOConfig(output_dir=str(tmp_path / "run"), num_agents=1, num_generations=8,
                          max_steps=1, use_chat_template=False, num_threads=1,
                          learning_rate=0.05, temperature=3.0)  # fmt: skip
    torch.manual_seed(3)
    dataset = [{"prompt": PROMPTS[0]}]
    before = torch.softmax(option_scores(models[0], tokenizers[0], PROMPTS[:1], MENUS[:1],
                                         config)[0], 0)[1]  # fmt: skip
    trainer = MAGRPOTrainer(models[:1], reward, config, tokenizers=tokenizers[:1],
                            formatters=[formatter], train_dataset=dataset)  # fmt: skip
    metrics = trainer.training_step(dataset)
    assert set(chosen) <= {"blue", "green", "dark red"} and "green" in chosen
    assert metrics["leaves"] == 8
    after = torch.softmax(option_scores(models[0], tokenizers[0], PROMPTS[:1], MENUS[:1],
                                        config)[0], 0)[1]  # fmt: skip
    assert after > before
