"""The reviser's look-back conversation: a few rounds of tool calls, then the final reply.

::

    messages = [system + how to call the tools, user]
    for round in 1..rounds:
        reply = llm(messages)
        if reply calls no tool: return reply          # the final reply
        messages += [reply, the tools' answers]       # at most MAX_CALLS_PER_ROUND answered
    return llm(messages + "no more tool calls")       # whatever it holds is final

Two protocols (:func:`converse` picks one):

* ``functions``: OpenAI function calling, when the client's backend takes tools
  (:attr:`~langmarl.llm.client.LLMClient.supports_tools`: remote endpoints). An endpoint
  that rejects tools the first time it sees them raises
  :class:`~langmarl.llm.types.ToolsUnsupportedError`; the conversation then starts over
  in plain text, and that backend sends no tools again. The last request has
  ``tool_choice="none"``.
* ``text``: the embedded model, scripted clients and endpoints that rejected tools. The
  model writes lines ``CALL <tool> <JSON object>`` (the arguments may be left out). A reply
  holding a code block is final, whatever else it holds. A line that starts with ``CALL``
  but does not parse (no name, arguments that are not a JSON object) is ignored, so a
  reply without one parsable call is final. The answers return as one ``Results:`` turn.

Frames (``view_frames`` for a multimodal model) follow the answers as a user turn with
image parts. Each call is recorded as a :class:`~langmarl.p2p.session.contracts.ToolUse`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from langmarl.extractors import python_blocks
from langmarl.llm.types import (
    Message,
    ToolsUnsupportedError,
    assistant_message,
    system_user_messages,
    tool_message,
)
from langmarl.p2p.agents import prompts
from langmarl.p2p.agents.lookback import Lookback, ToolOutput, call_tool, describe_tools, tool_specs
from langmarl.p2p.session.contracts import ToolUse

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)

MAX_CALLS_PER_ROUND = 4
"""Calls answered per round; further ones in the same reply are refused."""
_CALL_LINE = re.compile(r"^\s*CALL\s+([A-Za-z_]\w*)\s*(\{.*\})?\s*$")


@dataclass
class Transcript:
    """The final reply and the tool calls made on the way."""

    reply: str
    protocol: Literal["none", "functions", "text"]
    calls: list[ToolUse] = field(default_factory=list)


def parse_call_lines(reply: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``CALL <tool> <JSON object>`` lines of a plain-text reply, in order ([] for a
    reply with a code block: it is final). Lines that do not parse are skipped."""
    if python_blocks(reply, unclosed=True):
        return []
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
    llm: LLMClient, system: str, user: str, lookback: Lookback | None, rounds: int
) -> Transcript:
    """The final reply of the reviser's conversation (one plain call when ``rounds`` is 0
    or there is no ``lookback``)."""
    if rounds <= 0 or lookback is None:
        return Transcript(llm.chat(system, user), "none")
    if llm.supports_tools:
        try:
            return _functions(llm, system, user, lookback, rounds)
        except ToolsUnsupportedError as exc:
            logger.warning("%s; the reviser calls its tools in plain text instead", exc)
    return _text(llm, system, user, lookback, rounds)


def _answer(
    lookback: Lookback, name: str, arguments: dict[str, Any], round_: int, used: list[ToolUse]
) -> ToolOutput:
    output = call_tool(lookback, name, arguments)
    used.append(ToolUse(name=name, arguments=arguments, round=round_, ok=output.ok))
    return output


def _frames_message(images: list[bytes]) -> list[Message]:
    """A user turn showing ``images`` ([] for none)."""
    return system_user_messages("", prompts.REVISE_FRAMES, list(images)) if images else []


def _functions(
    llm: LLMClient, system: str, user: str, lookback: Lookback, rounds: int
) -> Transcript:
    system += prompts.REVISE_TOOLS_FUNCTIONS.format(current=lookback.current)
    messages, specs = system_user_messages(system, user), tool_specs()
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
                output = _answer(lookback, call.name, call.arguments, round_, used)
                text, images = output.text, images + list(output.images)
            messages.append(tool_message(call, text))
        messages += _frames_message(images)
    messages = [*messages, {"role": "user", "content": prompts.REVISE_TOOLS_DONE}]
    final = llm.chat_with_tools(messages, specs, tool_choice="none")
    return Transcript(final.text, "functions", used)


def _text(llm: LLMClient, system: str, user: str, lookback: Lookback, rounds: int) -> Transcript:
    system += prompts.REVISE_TOOLS_TEXT.format(current=lookback.current, tools=describe_tools())
    messages = system_user_messages(system, user)
    used: list[ToolUse] = []
    for round_ in range(1, rounds + 1):
        reply = llm.complete(messages).text
        calls = parse_call_lines(reply)
        if not calls:
            return Transcript(reply, "text", used)
        answers: list[str] = []
        images: list[bytes] = []
        for name, arguments in calls[:MAX_CALLS_PER_ROUND]:
            output = _answer(lookback, name, arguments, round_, used)
            images += output.images
            answers.append(
                prompts.REVISE_TOOL_RESULT.format(
                    name=name, arguments=json.dumps(arguments), text=output.text
                )
            )
        if len(calls) > MAX_CALLS_PER_ROUND:
            answers.append(f"(only the first {MAX_CALLS_PER_ROUND} calls of a reply are run)")
        results = prompts.REVISE_TOOL_RESULTS.format(results="\n\n".join(answers))
        if round_ == rounds:
            results += "\n" + prompts.REVISE_TOOLS_DONE
        reply_turn: Message = {"role": "assistant", "content": reply}
        results_turn = system_user_messages("", results, list(images) or None)
        messages = [*messages, reply_turn, *results_turn]  # a sent list is never changed
    return Transcript(llm.complete(messages).text, "text", used)
