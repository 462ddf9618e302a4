"""The ``reference`` game in weight space, with one of two listeners.

The game (:mod:`langmarl.envs.reference`) is one speaker message and one listener pick.
The task's ``listener`` option says who picks:

- ``rank`` (the default): one turn and one trained agent, the speaker. The listener is the
  ranking listener of language space (:func:`~langmarl.envs.reference.scoring.rank_pick`),
  frozen, inside the reward: it ranks the items by how likely the embedded model finds the
  heard word under each, and the reward is 1.0 when the top item is the target. Why: the
  embedded model asked for a label answers one letter whatever the message (on 30
  ``close`` training episodes with the distinguishing word heard, its most likely label was
  ``B`` 29 times), so a generating listener ignores the message, the speaker's words never
  change the reward, and MAGRPO has nothing to credit (last measured 0.333 → 0.333). Asked
  to rank, the same model picks the target 25 of 30 times given the right word, so the
  speaker's choice of word decides the reward and varies it within a group.
- ``generate``: the listener is a second trained agent that answers with a label. MAGRPO's
  agents all answer at every turn of a rollout tree, and the only way one agent's answer
  reaches another's prompt is the external transition between turns, so the game takes two
  turns: turn 1, the speaker (agent 0) says its word and the listener (agent 1) sees the
  items with no message yet (reward 0); the transition hands each branch's message,
  through the channel, to the listener's turn-2 prompt; turn 2, the listener picks (reward
  1.0 for the target) and the speaker's prompt is :data:`SPEAKER_DONE`. Run it with
  ``num_turns=2``, ``discount=1.0`` and ``joint_mode="cross"`` (every completion of an
  agent at a node is paired with every completion of the other, so the two unscored
  answers get exactly their siblings' credit, a zero advantage). For a model that can
  answer with a label; not the embedded one.

The task's ``speaker`` option says how the speaker answers: ``generate`` (the default), it
writes its word; ``rank`` (the run files' setting, with the ``rank`` listener only), it
chooses one of the target's words (:func:`speaker_options`) by their likelihood, through
:mod:`langmarl.magrpo.menu`. Why: writing, the embedded model gives a size word 0.04 of
its probability where the size varies, so MAGRPO rarely samples one and the trained
speaker never named a size (held-out ``close`` 0.433 → 0.667); choosing among the target's
words it samples a size in most groups, and the word that makes the listener right is
credited.

The dataset items carry the episode (:func:`~langmarl.envs.reference.episodes.episode_record`)
with ``prompt`` set to its id; the formatters tell the turns apart by ``prompt``: the id at
turn 1, the transition's text at turn 2 (the trainer re-runs the formatter on
``{**example, "prompt": <the transition's text>}``). The speaker's prompt holds three
worked demonstrations (:data:`~langmarl.envs.reference.prompts.SPEAKER_DEMOS`): the
embedded model copies examples, it does not follow instructions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langmarl.core.errors import ConfigError
from langmarl.core.transitions import Branch, ExternalTransition, transition_from
from langmarl.envs.reference import prompts
from langmarl.envs.reference.episodes import (
    Condition,
    episode_from_record,
    episode_record,
    make_episodes,
)
from langmarl.envs.reference.scoring import Scorer, channel, rank_pick, reference_reward
from langmarl.magrpo.menu import MenuFormatter
from langmarl.magrpo.rollout import JointSample

Listener = Literal["rank", "generate"]
"""Who picks: the frozen ranking listener in the reward, or a trained agent's label."""
Speaker = Literal["generate", "rank"]
"""How the speaker answers: it writes (decodes) its word, or chooses one of the target's
words by their likelihood (a menu, :mod:`langmarl.magrpo.menu`)."""
TURNS: dict[Listener, int] = {"rank": 1, "generate": 2}
"""The game's turns in weight space, per listener."""
NUM_TRAIN = 500
"""Generated training episodes when a run file gives no ``num_train``."""
SPEAKER_DONE = prompts.SPEAKER_DONE
MAX_KEPT_PICKS = 100_000
"""The ranking listener's picks kept for reuse (episode and heard words) at most."""


def reference_items(
    condition: Condition, num_train: int | None, num_eval: int, *, num_items: int = 3
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Training and held-out dataset items (episodes of seed 0, as in language space)."""
    train = make_episodes(condition, "train", num_train or NUM_TRAIN, num_items=num_items)
    test = make_episodes(condition, "test", num_eval, num_items=num_items)
    return [_item(e) for e in train], [_item(e) for e in test]


def _item(episode: Any) -> dict[str, Any]:
    return {"prompt": episode.id, **episode_record(episode)}


def heard_message(example: Mapping[str, Any]) -> str | None:
    """What the listener heard at this turn: ``None`` at turn 1 (``prompt`` is the id)."""
    prompt = str(example["prompt"])
    return None if prompt == example["id"] else prompt


def speaker_prompt(example: Mapping[str, Any]) -> str:
    """The speaker's prompt: demonstrations and the episode (turn 1), else :data:`SPEAKER_DONE`."""
    if heard_message(example) is not None:
        return SPEAKER_DONE
    observation = prompts.speaker_observation(episode_from_record(example))
    return prompts.with_demonstrations(
        prompts.SPEAKER_INSTRUCTION, prompts.SPEAKER_DEMOS, observation
    )


def listener_prompt(example: Mapping[str, Any]) -> str:
    """The listener's prompt: demonstrations, the labelled items and what it heard."""
    observation = prompts.listener_observation(episode_from_record(example), heard_message(example))
    return prompts.with_demonstrations(
        prompts.LISTENER_INSTRUCTION, prompts.LISTENER_DEMOS, observation
    )


def speaker_options(example: Mapping[str, Any]) -> list[str]:
    """The ``rank`` speaker's menu: the target's words (:func:`~langmarl.envs.reference.
    prompts.speaker_menu`)."""
    return prompts.speaker_menu(episode_from_record(example))


def reference_formatters(listener: Listener, speaker: Speaker = "generate") -> list[Any]:
    """Prompt builders of the trained agents: the speaker (``rank``), or the speaker and
    the listener, for both turns (``generate``). A ``rank`` speaker's formatter offers the
    target's words as its menu (:func:`speaker_options`).

    Raises:
        ConfigError: for a ``rank`` speaker with a ``generate`` listener.
    """
    if speaker == "rank" and listener != "rank":
        raise ConfigError("speaker 'rank' needs listener 'rank' (one turn)")
    first = MenuFormatter(speaker_prompt, speaker_options) if speaker == "rank" else speaker_prompt
    return [first] if listener == "rank" else [first, listener_prompt]


def reference_transition(message_words: int = 1) -> ExternalTransition:
    """The channel between the turns: the listener's next prompt text is what it hears of
    the speaker's answer on this branch (an empty message is heard as ``"..."``, so the
    formatter never mistakes it for turn 1)."""

    def next_prompts(branch: Branch) -> list[str]:
        heard = channel(branch.completions[0], message_words) or "..."
        return [SPEAKER_DONE, heard]

    return transition_from(next_prompts)


def reference_reward_func(samples: Sequence[JointSample]) -> list[float]:
    """0 at turn 1; at turn 2, 1.0 when the listener's answer picks the target."""
    return [
        reference_reward(episode_from_record(s.example), s.completions[1]) if s.turn else 0.0
        for s in samples
    ]


class RankedPickReward:
    """The ``rank`` listener's reward: 1.0 when the frozen ranking listener, hearing the
    channel's words of the speaker's answer (``completions[0]``), picks the target.

    Args:
        score: The listener's scorer (``score(prefix, options) -> log-probabilities``);
            ``None``: the embedded model's, loaded on first use (:func:`embedded_scorer`).
        message_words: Words the channel carries.
    """

    def __init__(self, score: Scorer | None = None, message_words: int = 1) -> None:
        self._score = score
        self.message_words = message_words
        self._picks: dict[tuple[str, str], str] = {}

    def pick(self, example: Mapping[str, Any], message: str) -> str:
        """The listener's label for ``example``'s episode after the speaker said ``message``
        (kept per episode and heard words: the listener is frozen, and a group's samples
        often say the same word)."""
        if self._score is None:
            self._score = embedded_scorer()
        heard = channel(message, self.message_words)
        key = (str(example["id"]), heard)
        if key not in self._picks:
            if len(self._picks) >= MAX_KEPT_PICKS:
                self._picks.clear()
            self._picks[key] = rank_pick(episode_from_record(example), heard, self._score)[0]
        return self._picks[key]

    def __call__(self, samples: Sequence[JointSample]) -> list[float]:
        targets = [episode_from_record(s.example).target_label for s in samples]
        picks = [self.pick(s.example, s.completions[0]) for s in samples]
        return [float(pick == target) for pick, target in zip(picks, targets, strict=True)]


def embedded_scorer() -> Scorer:
    """The embedded model's ``option_logprobs`` on this process's shared engine (the one
    language space's ``local`` actor uses, so both spaces' listeners are the same model).

    Raises:
        ConfigError: if the engine is ``ct2``, which cannot score given text.
    """
    from langmarl.llm.local.engine import shared_engine
    from langmarl.llm.local.scoring import option_logprobs

    engine = shared_engine()
    if engine.engine_kind == "ct2":
        raise ConfigError(
            "the reference game's ranking listener scores text with a torch model, which the "
            "ct2 engine does not give: unset LANGMARL_LOCAL_ENGINE or set it to w16"
        )

    def score(prefix: str, options: list[str]) -> list[float]:
        return list(engine.call(lambda m, t: option_logprobs(m, t, prefix, options)).result())

    return score
