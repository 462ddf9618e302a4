"""Ready cooperative tasks for the weight-space trainers.

- ``coding``: agent 1 writes a helper ``aux``, agent 2 the main function that may call it;
  HumanEval-style asserts run on the combined code in the sandbox; graded reward levels.
- ``writing``: agent 1 writes a short summary, agent 2 a longer expansion; the reward scores
  the length ratio of the two.
- ``poster``: agent 1 labels a topic in one word, agent 2 writes a 3–6 word tagline; a format
  reward the embedded model learns within minutes (:mod:`langmarl.magrpo.poster`).
- ``reference_far`` / ``reference_close``: the referential game; a trained speaker's word
  makes a frozen ranking listener pick the target (``listener: rank``), or a trained
  listener hears it through a second turn (``generate``) (:mod:`langmarl.magrpo.reference`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import read_input_jsonl
from langmarl.core.transitions import ExternalTransition
from langmarl.core.validation import did_you_mean
from langmarl.envs.reference.episodes import Condition
from langmarl.magrpo import prompts
from langmarl.magrpo.codecheck import extract_code, humaneval_asserts, run_tests, static_check
from langmarl.magrpo.policy import Formatter
from langmarl.magrpo.reference import Listener, Speaker
from langmarl.magrpo.rollout import JointRewardFunction, JointSample

# Tiny built-in problems (HumanEval-style) so the task runs without any data file.
TOY_CODING = [
    ("add", "a, b", "the sum of a and b", ["add(1, 2) == 3", "add(-1, 1) == 0"]),
    ("double", "x", "x times two", ["double(2) == 4", "double(0) == 0"]),
    ("is_even", "n", "True if n is even", ["is_even(2) is True", "is_even(3) is False"]),
    ("first", "items", "the first element of a list", ["first([5, 6]) == 5", "first('a') == 'a'"]),
    ("square", "x", "x squared", ["square(3) == 9", "square(-2) == 4"]),
    ("maximum", "a, b", "the larger of a and b", ["maximum(1, 2) == 2", "maximum(5, 3) == 5"]),
]

TOY_TOPICS = [
    "the ocean", "a rainy day", "coffee", "the moon", "a library", "mountains",
    "a train journey", "autumn leaves", "a small cat", "the city at night", "bread", "music",
]  # fmt: skip


@dataclass
class Task:
    """Everything a trainer needs for one cooperative task."""

    name: str
    num_agents: int
    train_dataset: list[dict[str, Any]]
    eval_dataset: list[dict[str, Any]]
    formatters: list[Formatter]
    reward_func: JointRewardFunction
    feedback_options: dict[str, Any] = field(default_factory=dict)
    reward_range: tuple[float, float] | None = None
    """The range of one turn's reward, if the task declares it: held-out intervals are
    clipped to the return's range."""
    transition: ExternalTransition | None = None
    """The task's own between-turn transition (used instead of the run file's ``external``)."""
    num_turns: int | None = None
    """The turns the task needs, if it fixes them (``None``: any)."""


# -- coding ----------------------------------------------------------------------------------


def coding_reward_levels(
    helper_code: str, main_code: str, entry_point: str, pass_fraction: float | None
) -> float:
    """Graded reward of a helper/main pair (0 to 4).

    Levels: 0 if the main code does not parse or does not define ``entry_point``; 1 for a
    parsing main function; +0.5 if the helper parses and defines ``aux``; +0.5 more if the main
    function calls ``aux``; +2 × the fraction of tests passed (``pass_fraction``, None: not run).
    """
    main = static_check(main_code)
    if main.syntax_error or entry_point not in main.functions:
        return 0.0
    reward = 1.0
    helper = static_check(helper_code)
    if helper.syntax_error is None and "aux" in helper.functions:
        reward += 0.5
        if "aux" in main.calls:
            reward += 0.5
    return reward + 2.0 * (pass_fraction or 0.0)


def joint_coding_reward(samples: Sequence[JointSample]) -> list[float]:
    """Reward of each (helper, main) joint completion; tests run in the sandbox."""
    rewards = []
    for sample in samples:
        helper, main = (extract_code(text) for text in sample.completions[:2])
        entry = str(sample.example["entry_point"])
        fraction = None
        if static_check(main).syntax_error is None:
            code = f"{helper}\n\n{main}" if static_check(helper).syntax_error is None else main
            fraction = run_tests(code, list(sample.example["tests"])).fraction
        rewards.append(coding_reward_levels(helper, main, entry, fraction))
    return rewards


def _coding_items(dataset_path: str | None) -> list[dict[str, Any]]:
    if dataset_path is None:
        return [
            {
                "prompt": f'def {entry}({args}):\n    """Return {doc}."""\n',
                "entry_point": entry,
                "tests": [f"assert {check}" for check in checks],
            }
            for entry, args, doc, checks in TOY_CODING
        ]
    path = Path(dataset_path)
    if not path.is_file():
        raise ConfigError(
            f"dataset_path {dataset_path!r} does not exist: give a HumanEval-style JSONL file "
            "(prompt, entry_point, test) or leave it out for the built-in toy problems"
        )
    items = []
    for row in read_jsonl_rows(path):
        tests = humaneval_asserts(row["test"], row["entry_point"])
        items.append({"prompt": row["prompt"], "entry_point": row["entry_point"], "tests": tests})
    return items


def coding_task(
    dataset_path: str | None = None, num_train: int | None = None, num_eval: int = 2
) -> Task:
    """Cooperative coding with two agents (helper + main)."""
    items = _coding_items(dataset_path)
    formatters: list[Formatter] = [
        lambda ex: prompts.CODING_HELPER.format(prompt=ex["prompt"]),
        lambda ex: prompts.CODING_MAIN.format(prompt=ex["prompt"], entry_point=ex["entry_point"]),
    ]
    tests = {item["prompt"]: item["tests"] for item in items}
    return _pair_task("coding", items, (num_train, num_eval), formatters, joint_coding_reward,
                      feedback_options={"tests": tests}, reward_range=(0.0, 4.0))  # fmt: skip


# -- writing ---------------------------------------------------------------------------------


def length_ratio_reward(summary: str, expansion: str, low: float = 2.0, high: float = 3.0) -> float:
    """1.0 when ``len(expansion) / len(summary)`` (in words) is within [low, high], falling
    linearly to 0 at ratio 0 below and at 2 × high above; 0 if either text is empty."""
    short, long = len(summary.split()), len(expansion.split())
    if short == 0 or long == 0:
        return 0.0
    ratio = long / short
    if ratio < low:
        return ratio / low
    if ratio <= high:
        return 1.0
    return max(0.0, 1.0 - (ratio - high) / high)


def joint_writing_reward(samples: Sequence[JointSample]) -> list[float]:
    """Length-ratio reward of each (summary, expansion) joint completion."""
    return [length_ratio_reward(s.completions[0], s.completions[1]) for s in samples]


def writing_task(
    dataset_path: str | None = None, num_train: int | None = None, num_eval: int = 2
) -> Task:
    """Cooperative writing with two agents (summary + expansion)."""
    if dataset_path is None:
        items = [{"prompt": topic} for topic in TOY_TOPICS]
    else:
        path = Path(dataset_path)
        if not path.is_file():
            raise ConfigError(f"dataset_path {dataset_path!r} does not exist: give a JSONL file")
        rows = read_jsonl_rows(path)
        items = [{"prompt": str(row.get("prompt") or row.get("input") or row)} for row in rows]
    formatters: list[Formatter] = [
        lambda ex: prompts.WRITING_SUMMARY.format(prompt=ex["prompt"]),
        lambda ex: prompts.WRITING_EXPANSION.format(prompt=ex["prompt"]),
    ]
    return _pair_task(
        "writing", items, (num_train, num_eval), formatters, joint_writing_reward,
        reward_range=(0.0, 1.0),
    )  # fmt: skip


# -- poster ----------------------------------------------------------------------------------


def poster_task(
    dataset_path: str | None = None, num_train: int | None = None, num_eval: int = 20
) -> Task:
    """Cooperative poster with two agents (one-word label + 3–6 word tagline)."""
    from langmarl.envs.poster.scoring import load_topics
    from langmarl.magrpo import poster

    topics = load_topics(dataset_path, "dataset_path")
    return _pair_task("poster", poster.poster_items(topics), (num_train, num_eval),
                      poster.poster_formatters(), poster.poster_reward,
                      reward_range=(0.0, 1.0))  # fmt: skip


# -- reference -------------------------------------------------------------------------------


def reference_task(
    dataset_path: str | None = None,
    num_train: int | None = None,
    num_eval: int = 30,
    *,
    condition: Condition = "close",
    listener: Listener = "rank",
    speaker: Speaker = "generate",
) -> Task:
    """The referential game: one trained speaker and a frozen ranking listener in one turn
    (``rank``), or a trained speaker and listener over two turns (``generate``); the
    speaker writes its word or chooses one of the target's (``speaker``); see
    :mod:`langmarl.magrpo.reference`. Episodes are generated, so ``dataset_path`` must be
    ``None``."""
    from langmarl.magrpo import reference

    if dataset_path is not None:
        raise ConfigError(
            f"dataset_path {dataset_path!r} is not used by the reference game: its episodes "
            "are generated; drop dataset_path"
        )
    train, evaluation = reference.reference_items(condition, num_train, num_eval)
    formatters = reference.reference_formatters(listener, speaker)
    rank = listener == "rank"
    return Task(name=f"reference_{condition}", num_agents=len(formatters), train_dataset=train,
                eval_dataset=evaluation, formatters=formatters,
                reward_func=reference.RankedPickReward() if rank
                else reference.reference_reward_func,
                reward_range=(0.0, 1.0), num_turns=reference.TURNS[listener],
                transition=None if rank else reference.reference_transition())  # fmt: skip


def read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL dataset, one per non-blank line.

    Raises:
        ConfigError: naming the file (and the line) if it is not UTF-8 or a line is not a
            JSON object.
    """
    rows = read_input_jsonl(path)
    for number, row in rows:
        if not isinstance(row, dict):
            raise ConfigError(
                f"Dataset file {str(path)!r}, line {number}: a JSON object is needed, got "
                f"{type(row).__name__}"
            )
    return [row for _, row in rows]


def _pair_task(
    name: str,
    items: list[dict[str, Any]],
    sizes: tuple[int | None, int],
    formatters: Sequence[Formatter],
    reward_func: JointRewardFunction,
    **options: Any,
) -> Task:
    """A two-agent task over ``items``, split by ``sizes = (num_train, num_eval)``."""
    train, evaluation = _split(items, *sizes)
    return Task(name=name, num_agents=2, train_dataset=train, eval_dataset=evaluation,
                formatters=list(formatters), reward_func=reward_func, **options)  # fmt: skip


def _split(
    items: list[dict[str, Any]], num_train: int | None, num_eval: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if len(items) <= num_eval:
        raise ConfigError(f"only {len(items)} examples: lower num_eval (now {num_eval})")
    evaluation, train = items[:num_eval], items[num_eval:]
    return (train[:num_train] if num_train else train), evaluation


TASKS: dict[str, Callable[..., Task]] = {
    "coding": coding_task,
    "writing": writing_task,
    "poster": poster_task,
    "reference_far": partial(reference_task, condition="far"),
    "reference_close": partial(reference_task, condition="close"),
}


def get_task(name: str, **options: Any) -> Task:
    """A ready task by name (``coding``, ``writing``, ``poster``, ``reference_far``,
    ``reference_close``); ``options`` go to its builder."""
    if name not in TASKS:
        raise ConfigError(
            f"task {name!r} is unknown.{did_you_mean(name, TASKS)} Use one of {sorted(TASKS)}"
        )
    return TASKS[name](**options)
