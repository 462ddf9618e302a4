"""The reference game's episodes: attribute items, the two conditions, seeded splits.

An item is one value per attribute (:data:`ATTRIBUTES`: size × colour × shape, 3 × 6 × 5 =
90 combinations), written ``"small red circle"``. An episode holds ``num_items`` items, one
of them the target; the listener sees them shuffled and labelled ``A``, ``B``, ``C`` ….

Decisions:

- Conditions. ``far``: every two items of an episode share no attribute value (not only
  target against distractor: distractors sharing a value with each other would single the
  target out as the odd one, which a listener could use without the message). ``close``:
  every distractor differs from the target in the same attribute, each with its own value
  (so one word, that attribute's value, tells the target apart; distractors differing in
  different attributes would make the target the one item sharing a value with every
  other). Either way the items are symmetric: nothing but the message marks the target.
  The varying attribute is drawn first, uniformly, then a target with enough neighbours in
  it. (Drawn after the target, from the attributes it has neighbours in, it was the size in
  7 of 60 training episodes but 12 of 30 held-out ones, since few training targets have
  both other sizes in training: a speaker trained on them named colours and shapes and
  never a size, and scored 0 of 12 held-out size episodes.)
- Held-out combinations (:func:`is_heldout`): those whose value indices sum to a multiple
  of 5 (18 of 90; every value of every attribute occurs in both parts). A ``train``
  episode uses training combinations only, for the target and the distractors; a ``test``
  episode's target is a held-out combination (its distractors come from all 90), so no
  held-out target is ever seen in training.
- Determinism: episode ``i`` of a split is drawn from ``random.Random`` seeded with the
  string ``"reference/<seed>/<condition>/<split>/<i>"`` (string seeds do not depend on
  ``PYTHONHASHSEED``), so episode lists are the same in every process and either space.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from langmarl.core.errors import ConfigError

Condition = Literal["far", "close"]
Split = Literal["train", "test"]
Item = tuple[str, ...]

ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "size": ("small", "medium", "large"),
    "colour": ("red", "blue", "green", "yellow", "purple", "orange"),
    "shape": ("circle", "square", "triangle", "star", "diamond"),
}
"""Attribute → its values; an item's words follow this order (size, colour, shape)."""
HELDOUT_MODULUS = 5
"""A combination is held out when its value indices sum to a multiple of this."""
LABELS = "ABCDEFGH"
"""The listener's labels, in order."""
MAX_ITEMS = min(len(values) for values in ATTRIBUTES.values())
"""At most this many items: ``far`` needs a distinct value per item in every attribute."""


@dataclass(frozen=True)
class Episode:
    """One referential game.

    Attributes:
        id: ``reference/<condition>/<split>/<index>``.
        condition: ``far`` or ``close``.
        items: The items in the listener's order (labelled ``A``, ``B``, … in turn).
        target: The target's position in ``items``.
        varying: The attribute in which the distractors differ (``close``; ``None`` for
            ``far``, where they differ in all).
    """

    id: str
    condition: Condition
    items: tuple[Item, ...]
    target: int
    varying: str | None = None

    @property
    def labels(self) -> str:
        """The listener's labels of ``items``, in order."""
        return LABELS[: len(self.items)]

    @property
    def target_item(self) -> Item:
        """The target."""
        return self.items[self.target]

    @property
    def target_label(self) -> str:
        """The target's label (``A``, ``B``, …)."""
        return LABELS[self.target]

    @property
    def distractors(self) -> tuple[Item, ...]:
        """The items other than the target, in the listener's order."""
        return tuple(item for i, item in enumerate(self.items) if i != self.target)


def describe(item: Item) -> str:
    """An item as words: ``("small", "red", "circle")`` → ``"small red circle"``."""
    return " ".join(item)


@cache
def all_items() -> tuple[Item, ...]:
    """Every attribute combination, in a fixed order."""
    return tuple(tuple(values) for values in itertools.product(*ATTRIBUTES.values()))


def is_heldout(item: Item) -> bool:
    """Whether ``item`` is a held-out combination (see the module docstring)."""
    indices = (values.index(value) for values, value in zip(ATTRIBUTES.values(), item, strict=True))
    return sum(indices) % HELDOUT_MODULUS == 0


@cache
def split_items(split: Split) -> tuple[Item, ...]:
    """The combinations a split draws its targets from (``train``: also its distractors)."""
    return tuple(item for item in all_items() if is_heldout(item) == (split == "test"))


def _share_nothing(a: Item, b: Item) -> bool:
    return all(x != y for x, y in zip(a, b, strict=True))


def _far_distractors(
    target: Item, pool: Sequence[Item], count: int, rng: random.Random
) -> list[Item]:
    """``count`` items sharing no value with the target or with each other."""
    chosen: list[Item] = []
    candidates = [item for item in pool if _share_nothing(target, item)]
    rng.shuffle(candidates)
    for item in candidates:
        if len(chosen) == count:
            break
        if all(_share_nothing(item, other) for other in chosen):
            chosen.append(item)
    return chosen


def _close_distractors(
    target: Item, pool: Sequence[Item], count: int, rng: random.Random, varying: str
) -> list[Item]:
    """``count`` items that differ from the target in ``varying`` alone (fewer: not enough)."""
    k = list(ATTRIBUTES).index(varying)
    same_elsewhere = [
        item for item in pool if [j for j in range(len(target)) if item[j] != target[j]] == [k]
    ]
    return rng.sample(same_elsewhere, count) if len(same_elsewhere) >= count else []


def make_episode(
    condition: Condition, split: Split, index: int, *, num_items: int = 3, seed: int = 0
) -> Episode:
    """Episode ``index`` of ``split`` under ``condition`` (deterministic; see the module
    docstring).

    Raises:
        ConfigError: for an unknown condition or split, or ``num_items`` outside 2 to
            :data:`MAX_ITEMS`.
    """
    if condition not in ("far", "close"):
        raise ConfigError(f"condition is {condition!r}: use 'far' or 'close'")
    if split not in ("train", "test"):
        raise ConfigError(f"split is {split!r}: use 'train' or 'test'")
    if not 2 <= num_items <= MAX_ITEMS:
        raise ConfigError(f"num_items is {num_items}: use 2 to {MAX_ITEMS}")
    rng = random.Random(f"reference/{seed}/{condition}/{split}/{index}")
    targets, pool = split_items(split), split_items("train") if split == "train" else all_items()
    varying = None if condition == "far" else rng.choice(list(ATTRIBUTES))
    while True:  # a few targets have too few neighbours (in the attribute); draw another
        target = rng.choice(targets)
        if varying is None:
            distractors = _far_distractors(target, pool, num_items - 1, rng)
        else:
            distractors = _close_distractors(target, pool, num_items - 1, rng, varying)
        if len(distractors) == num_items - 1:
            break
    items = [target, *distractors]
    rng.shuffle(items)
    return Episode(
        id=f"reference/{condition}/{split}/{index}",
        condition=condition,
        items=tuple(items),
        target=items.index(target),
        varying=varying,
    )


def make_episodes(
    condition: Condition, split: Split, count: int, *, num_items: int = 3, seed: int = 0
) -> list[Episode]:
    """Episodes ``0 … count-1`` of ``split`` (see :func:`make_episode`)."""
    return [make_episode(condition, split, i, num_items=num_items, seed=seed) for i in range(count)]


def episode_record(episode: Episode) -> dict[str, object]:
    """The episode as a JSON-ready dict (a weight-space dataset item's task fields)."""
    return {
        "id": episode.id,
        "condition": episode.condition,
        "items": [list(item) for item in episode.items],
        "target": episode.target,
        "varying": episode.varying,
    }


def episode_from_record(record: Mapping[str, Any]) -> Episode:
    """The episode of :func:`episode_record`'s dict (extra keys are ignored)."""
    return Episode(
        id=str(record["id"]),
        condition=record["condition"],
        items=tuple(tuple(item) for item in record["items"]),
        target=int(record["target"]),
        varying=record.get("varying"),
    )
