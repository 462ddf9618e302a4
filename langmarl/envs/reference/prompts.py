"""The reference game's prompts, shared by both spaces, and their worked demonstrations.

The embedded SmolLM2-135M does not follow instructions but copies examples (DESIGN.md), so
each agent gets three worked demonstrations: language space puts them in the agent's
starting policy (:mod:`langmarl.core.demos`, where the optimizer may replace them); weight
space writes them into the one prompt it trains on (:func:`with_demonstrations`). The
three are ``close`` episodes, one per attribute, answered with the one word that tells the
target apart; their items use values outside the game's vocabulary (pink, black, white,
heart, moon), so no demonstration shows an item of either split.

Measured on the embedded model (greedy, plain text as weight space's run files send it, 15
held-out episodes each): the speaker said a word of the target in 15 of 15 ``far`` episodes
and the distinguishing word in 4 of 15 ``close`` ones (it mostly names the colour); asked
for a label with the right word heard, the listener was at chance (it repeats one letter),
which is why language space's listener ranks the items instead
(:mod:`langmarl.envs.reference.env`).
"""

from __future__ import annotations

from langmarl.core.demos import DemoPolicy
from langmarl.envs.reference.episodes import Episode, describe

SPEAKER_INSTRUCTION = "Say one word that tells the target apart from the other objects."
SPEAKER = "Objects: {objects}\nTarget: {target}\nWord:"
"""The speaker's observation: the items (in the listener's order) and the target."""

LISTENER_INSTRUCTION = "Answer with the letter of the object the message names."
LISTENER = "{objects}\nMessage: {message}\nLetter:"
"""The listener's observation: the labelled items (one ``A: small red circle`` per line)
and what the channel carried of the speaker's message."""

NO_MESSAGE = "(none)"
"""What the listener reads as the message before the speaker has spoken (weight space's
first turn, whose answer is not scored)."""

SPEAKER_DONE = "You have spoken; the listener is choosing."
"""The speaker's prompt in weight space's second turn (its answer there is not scored)."""

SPEAKER_DEMOS: tuple[tuple[str, str], ...] = (
    (SPEAKER.format(objects="large pink star, large pink square, large pink circle",
                    target="large pink square"), "square"),
    (SPEAKER.format(objects="small green heart, medium green heart, large green heart",
                    target="medium green heart"), "medium"),
    (SPEAKER.format(objects="small pink moon, small black moon, small white moon",
                    target="small white moon"), "white"),
)  # fmt: skip
"""(observation, answer) pairs for the speaker."""

LISTENER_DEMOS: tuple[tuple[str, str], ...] = (
    (LISTENER.format(objects="A: large pink star\nB: large pink square\nC: large pink circle",
                     message="square"), "B"),
    (LISTENER.format(objects="A: medium green heart\nB: large green heart\nC: small green heart",
                     message="small"), "C"),
    (LISTENER.format(objects="A: small white moon\nB: small pink moon\nC: small black moon",
                     message="white"), "A"),
)  # fmt: skip
"""(observation, answer) pairs for the listener."""


def with_demonstrations(
    instruction: str, demos: tuple[tuple[str, str], ...], observation: str
) -> str:
    """One prompt: the instruction, each demonstration as its observation and answer, then
    the observation to answer (weight space's prompt; language space sends the same parts
    as chat turns)."""
    shown = "\n\n".join(f"{seen} {answer}" for seen, answer in demos)
    return f"{instruction}\n\n{shown}\n\n{observation}"


def policy_prompt(policy: str, observation: str) -> str:
    """A language-space policy (instruction and demonstrations, :mod:`langmarl.core.demos`)
    and an observation as one plain-text prompt, laid out as :func:`with_demonstrations`:
    the ``rank`` speaker scores its options after it, so both spaces' speakers read the
    same text (a speaker trained in weight space carries over unchanged)."""
    parsed = DemoPolicy.parse(policy)
    demos = tuple((demo.input, demo.output) for demo in parsed.demos)
    return with_demonstrations(parsed.instruction, demos, observation)


def speaker_menu(episode: Episode) -> list[str]:
    """The ``rank`` speaker's options: the target's words, each as it continues the
    prompt's ``Word:`` (``" small"``, ``" red"``, ``" circle"``)."""
    return [f" {word}" for word in episode.target_item]


def speaker_observation(episode: Episode) -> str:
    """What the speaker sees: every item (in the listener's order) and the target."""
    objects = ", ".join(describe(item) for item in episode.items)
    return SPEAKER.format(objects=objects, target=describe(episode.target_item))


def listener_observation(episode: Episode, heard: str | None) -> str:
    """What the listener sees: the labelled items and what it heard (``None``: nothing yet)."""
    labelled = zip(episode.labels, episode.items, strict=True)
    lines = (f"{label}: {describe(item)}" for label, item in labelled)
    return LISTENER.format(objects="\n".join(lines), message=heard or NO_MESSAGE)
