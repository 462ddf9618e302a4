"""Demonstrations as part of a language policy: an instruction plus input → output examples.

A policy stays one plain text (a file on disk, readable and diffable). Its demonstrations
follow the instruction, each as two marked blocks::

    You write the key word of a poster.

    ### demonstration input
    Give the key word of a poster about coffee. Answer with a single word.
    ### demonstration output
    Coffee

An actor sees them as earlier turns of its chat — the system message is the instruction,
each demonstration a user message and the assistant's reply — then the real observation.
Small models copy such turns far better than they follow a rule: on the embedded
SmolLM2-135M three hand-written demonstrations lifted the poster task's held-out reward
from 0.25 to 0.59 (DESIGN.md), which is what language-space training on it builds on.

Decisions:

- A policy without markers is an instruction only, exactly as before: old runs, rewrites
  by a critic/optimizer and hand-written prompts need no change.
- A marker line must match exactly; text between an input and its output may hold blank
  lines and anything but a marker line.
- The budget of :func:`policy_messages` counts characters (about four per token for
  English): the newest demonstrations are kept, the oldest cut with a logged warning, so
  a long set never overflows the actor's context.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

INPUT_MARK = "### demonstration input"
OUTPUT_MARK = "### demonstration output"
DEFAULT_CHAR_BUDGET = 6000
"""Characters of demonstrations one actor call may carry (~1,500 tokens)."""


@dataclass(frozen=True)
class Demonstration:
    """One example: what the agent saw and what it answered."""

    input: str
    output: str


@dataclass(frozen=True)
class DemoPolicy:
    """A policy split into its instruction and its ordered demonstrations."""

    instruction: str
    demos: tuple[Demonstration, ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, text: str) -> DemoPolicy:
        """Split a policy text; a text without markers is all instruction."""
        lines = text.split("\n")
        marks = [i for i, line in enumerate(lines) if line.strip() in (INPUT_MARK, OUTPUT_MARK)]
        if not marks:
            return cls(text.strip())
        instruction = "\n".join(lines[: marks[0]]).strip()
        demos: list[Demonstration] = []
        pending: str | None = None
        for at, end in zip(marks, [*marks[1:], len(lines)], strict=True):
            body = "\n".join(lines[at + 1 : end]).strip("\n")
            if lines[at].strip() == INPUT_MARK:
                pending = body
            elif pending is not None:  # an output without its input is dropped
                demos.append(Demonstration(pending.strip(), body.strip()))
                pending = None
        return cls(instruction, tuple(demos))

    def render(self) -> str:
        """The policy text (``parse(render())`` gives the same policy)."""
        parts = [self.instruction.strip()]
        for demo in self.demos:
            parts.append(
                f"{INPUT_MARK}\n{demo.input.strip()}\n{OUTPUT_MARK}\n{demo.output.strip()}"
            )
        return "\n\n".join(part for part in parts if part)

    def with_demos(self, demos: list[Demonstration] | tuple[Demonstration, ...]) -> DemoPolicy:
        """The same instruction with ``demos`` instead."""
        return DemoPolicy(self.instruction, tuple(demos))


def fit_demos(
    demos: tuple[Demonstration, ...], budget: int = DEFAULT_CHAR_BUDGET
) -> tuple[Demonstration, ...]:
    """The newest demonstrations whose text fits ``budget`` characters (a warning names how
    many were cut)."""
    kept: list[Demonstration] = []
    used = 0
    for demo in reversed(demos):
        size = len(demo.input) + len(demo.output)
        if used + size > budget:
            break
        kept.append(demo)
        used += size
    if len(kept) < len(demos):
        log.warning(
            "%d of %d demonstrations exceed the budget of %d characters; the oldest are left "
            "out of this call (lower the number of demonstrations or raise the budget)",
            len(demos) - len(kept),
            len(demos),
            budget,
        )
    return tuple(reversed(kept))


def policy_messages(
    policy: str, observation: str, budget: int = DEFAULT_CHAR_BUDGET
) -> list[dict[str, str]]:
    """The chat an actor with ``policy`` sends for ``observation``: the instruction as the
    system message (none when empty), each demonstration as a user/assistant turn, then
    the observation."""
    parsed = DemoPolicy.parse(policy)
    messages = [{"role": "system", "content": parsed.instruction}] if parsed.instruction else []
    for demo in fit_demos(parsed.demos, budget):
        messages.append({"role": "user", "content": demo.input})
        messages.append({"role": "assistant", "content": demo.output})
    messages.append({"role": "user", "content": observation})
    return messages


def has_demos(policy: str) -> bool:
    """Whether ``policy`` carries demonstrations."""
    return INPUT_MARK in policy
