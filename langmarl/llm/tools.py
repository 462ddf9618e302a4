"""A conversation in which the model may call tools: a few rounds of calls, then a final reply.

::

    messages = [system + how to call the tools, user]
    for round in 1..rounds:
        reply = llm(messages)
        if reply calls no tool: return reply          # the final reply
        messages += [reply, the tools' answers]       # at most MAX_CALLS_PER_ROUND answered
    return llm(messages + "no more tool calls")       # whatever it holds is final

The tools are a :class:`Toolset`: what the model is told about them (``specs`` for function
calling, ``describe`` for plain text) and ``call``, which answers one call. Any agent with a
toolset can converse; the reward space's look-back (:mod:`langmarl.p2p.agents.lookback`) is
one toolset.

Two protocols (:func:`converse` picks one):

* ``functions``: OpenAI function calling, when the client's backend takes tools
  (:attr:`~langmarl.llm.client.LLMClient.supports_tools`: remote endpoints). An endpoint
  that rejects tools the first time it sees them raises
  :class:`~langmarl.llm.types.ToolsUnsupportedError`; the conversation then starts over
  in plain text, and that backend sends no tools again. The last request has
  ``tool_choice="none"``.
* ``text``: the embedded model, scripted clients and endpoints that rejected tools. The
  model writes lines ``CALL <tool> <JSON object>`` (the arguments may be left out). A reply
  the caller's ``final`` predicate accepts (the reviser's: it holds a code block) is final,
  whatever else it holds. A line that starts with ``CALL`` but does not parse (no name,
  arguments that are not a JSON object) is ignored, so a reply without one parsable call is
  final. The answers return as one ``Results:`` turn.

Images a tool returns (frames of a video, for a multimodal model) follow the answers as a
user turn with image parts. Each call is recorded as a :class:`ToolUse`; sent message lists
are never changed (each round builds a new one).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from langmarl.llm.types import (
    Message,
    ToolSpec,
    ToolsUnsupportedError,
    assistant_message,
    system_user_messages,
    tool_message,
)

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)

MAX_CALLS_PER_ROUND = 4
"""Calls answered per round; further ones in the same reply are refused."""
_CALL_LINE = re.compile(r"^\s*CALL\s+([A-Za-z_]\w*)\s*(\{.*\})?\s*$")
RESULT = "[{name} {arguments}]\n{text}"
"""One answer in the plain-text protocol's results turn."""
RESULTS = "Results:\n{results}"
"""The plain-text protocol's results turn (the answers, blank-line separated)."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool answers: text for the model, optional PNG images, and whether it worked."""

    text: str
    images: tuple[bytes, ...] = ()
    ok: bool = True


class ToolUse(BaseModel):
    """One tool call of the model, as recorded (e.g. in a revision's ``tool_calls``)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    round: int
    """The conversation round (from 1) it was made in."""
    ok: bool = True
    """False when the answer was an error (unknown tool, bad argument, unreadable data)."""


class Toolset(Protocol):
    """The tools of one conversation.

    ``call`` never raises for the model's mistakes: an unknown tool or a bad argument is an
    answer with ``ok=False`` whose text says what to send instead.
    """

    def specs(self) -> list[ToolSpec]:
        """The function-calling declarations, one per tool."""
        ...

    def describe(self) -> str:
        """The tools for the plain-text protocol: one ``CALL <name> <example>`` line each."""
        ...

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Answer one call."""
        ...


@dataclass(frozen=True)
class ToolPrompts:
    """What the caller tells the model about its tools, per protocol."""

    functions: str
    """Appended to the system prompt when the tools go as functions."""
    text: str
    """Appended to the system prompt in plain text (it should hold ``toolset.describe()``)."""
    done: str
    """The last user turn after the rounds are used up: reply now, without calls."""
    images: str
    """The text of the user turn that shows the images the tools returned."""


@dataclass
class Transcript:
    """The final reply and the tool calls made on the way."""

    reply: str
    protocol: Literal["none", "functions", "text"]
    calls: list[ToolUse] = field(default_factory=list)


def parse_call_lines(reply: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``CALL <tool> <JSON object>`` lines of a plain-text reply, in order. Lines that
    do not parse are skipped."""
    calls = []
    for line in reply.splitlines():
        match = _CALL_LINE.match(line)
        if match is None:
            continue
        try:
            arguments = json.loads(match.group(2) or "{}")
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            continue
        if isinstance(arguments, dict):
            calls.append((match.group(1), arguments))
    return calls


def converse(
    llm: LLMClient,
    system: str,
    user: str,
    toolset: Toolset | None,
    rounds: int,
    prompts: ToolPrompts,
    *,
    final: Callable[[str], bool] | None = None,
) -> Transcript:
    """The final reply of a conversation with tools (one plain call when ``rounds`` is 0 or
    there is no ``toolset``).

    Args:
        llm: The model.
        system: The system prompt (the protocol's text from ``prompts`` is appended).
        user: The request.
        toolset: The tools the model may call.
        rounds: Replies that may call tools before the final one.
        prompts: What to tell the model, per protocol.
        final: In plain text, a reply it accepts is final even with ``CALL`` lines.
    """
    if rounds <= 0 or toolset is None:
        return Transcript(llm.chat(system, user), "none")
    if llm.supports_tools:
        try:
            return _functions(llm, system + prompts.functions, user, toolset, rounds, prompts)
        except ToolsUnsupportedError as exc:
            logger.warning("%s; the tools are called in plain text instead", exc)
    return _text(llm, system + prompts.text, user, toolset, rounds, prompts, final)


def _answer(
    toolset: Toolset, name: str, arguments: dict[str, Any], round_: int, used: list[ToolUse]
) -> ToolOutput:
    output = toolset.call(name, arguments)
    used.append(ToolUse(name=name, arguments=arguments, round=round_, ok=output.ok))
    return output


def _images_message(images: list[bytes], prompts: ToolPrompts) -> list[Message]:
    """A user turn showing ``images`` ([] for none)."""
    return system_user_messages("", prompts.images, list(images)) if images else []


def _functions(
    llm: LLMClient, system: str, user: str, toolset: Toolset, rounds: int, prompts: ToolPrompts
) -> Transcript:
    messages, specs = system_user_messages(system, user), toolset.specs()
    used: list[ToolUse] = []
    for round_ in range(1, rounds + 1):
        result = llm.chat_with_tools(messages, specs)
        if not result.tool_calls:
            return Transcript(result.text, "functions", used)
        messages = [*messages, assistant_message(result)]  # a sent list is never changed
        images: list[bytes] = []
        for index, call in enumerate(result.tool_calls):
            if index >= MAX_CALLS_PER_ROUND:
                text = f"not run: at most {MAX_CALLS_PER_ROUND} calls per reply"
            elif call.parse_error:
                used.append(ToolUse(name=call.name, round=round_, ok=False))
                text = f"{call.name}: {call.parse_error}"
            else:
                output = _answer(toolset, call.name, call.arguments, round_, used)
                text, images = output.text, images + list(output.images)
            messages.append(tool_message(call, text))
        messages += _images_message(images, prompts)
    messages = [*messages, {"role": "user", "content": prompts.done}]
    final = llm.chat_with_tools(messages, specs, tool_choice="none")
    return Transcript(final.text, "functions", used)


def _text(
    llm: LLMClient,
    system: str,
    user: str,
    toolset: Toolset,
    rounds: int,
    prompts: ToolPrompts,
    final: Callable[[str], bool] | None,
) -> Transcript:
    messages = system_user_messages(system, user)
    used: list[ToolUse] = []
    for round_ in range(1, rounds + 1):
        reply = llm.complete(messages).text
        calls = [] if final is not None and final(reply) else parse_call_lines(reply)
        if not calls:
            return Transcript(reply, "text", used)
        answers: list[str] = []
        images: list[bytes] = []
        for name, arguments in calls[:MAX_CALLS_PER_ROUND]:
            output = _answer(toolset, name, arguments, round_, used)
            images += output.images
            answers.append(
                RESULT.format(name=name, arguments=json.dumps(arguments), text=output.text)
            )
        if len(calls) > MAX_CALLS_PER_ROUND:
            answers.append(f"(only the first {MAX_CALLS_PER_ROUND} calls of a reply are run)")
        results = RESULTS.format(results="\n\n".join(answers))
        if round_ == rounds:
            results += "\n" + prompts.done
        reply_turn: Message = {"role": "assistant", "content": reply}
        results_turn = system_user_messages("", results, list(images) or None)
        messages = [*messages, reply_turn, *results_turn]  # a sent list is never changed
    return Transcript(llm.complete(messages).text, "text", used)
