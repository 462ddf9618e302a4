"""Parsing per-agent credit out of a critic's reply (pure functions).

Three formats are tried in order:

1. **JSON**: an object mapping agent ids to feedback (``{"solver": "...", ...}``), or a
   list of ``{"agent": id, "feedback": ...}`` objects, possibly inside a code fence.
   Values that are objects are flattened to ``key: value`` text.
2. **Bracket markers**: ``[solver] ...`` / ``[Agent solver]: ...`` sections (the format of
   the Overcooked and Pistonball prompts), the marker anywhere in its line
   (``Feedback for [solver]: ...``, ``- **[solver]** ...``).
3. **Fallback**: the whole reply for every agent.

Agent ids are matched case-insensitively, ignoring spaces, ``-`` and ``_``. An agent the
reply does not mention (under JSON or markers) gets the whole reply, so no agent is left
without feedback.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langmarl.core.records import ParseStatus
from langmarl.extractors import fenced_blocks

_AGENT_KEYS = ("agent", "agent_id", "agent_name", "name", "id")
_TEXT_KEYS = ("feedback", "evaluation", "credit", "comment", "text")


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_as_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(_as_text(v) for v in value)
    return str(value)


def _json_candidates(response: str) -> list[str]:
    candidates = [body for _, body in fenced_blocks(response)]
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = response.find(opener), response.rfind(closer)
        if 0 <= start < end:
            candidates.append(response[start : end + 1])
    return candidates


def _entries(data: Any) -> dict[str, Any]:
    """Name → value pairs from a JSON object or a list of agent objects."""
    if isinstance(data, dict):
        nested = data.get("agents") or data.get("credits")
        return _entries(nested) if isinstance(nested, dict | list) else data
    if isinstance(data, list):
        found = {}
        for item in data:
            if not isinstance(item, dict):
                continue
            name = next((item[k] for k in _AGENT_KEYS if k in item), None)
            text = next((item[k] for k in _TEXT_KEYS if k in item), None)
            if name is not None:
                found[str(name)] = text if text is not None else item
        return found
    return {}


def _match(entries: dict[str, Any], agent_names: list[str]) -> dict[str, str]:
    by_norm = {_norm(str(key)): value for key, value in entries.items()}
    matched = {}
    for agent in agent_names:
        value = by_norm.get(_norm(agent))
        if value is not None and _as_text(value):
            matched[agent] = _as_text(value)
    return matched


def parse_json_credit(response: str, agent_names: list[str]) -> dict[str, str]:
    """Agents' feedback from a JSON reply ({} if none found)."""
    for candidate in _json_candidates(response):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        matched = _match(_entries(data), agent_names)
        if matched:
            return matched
    return {}


def parse_marker_credit(response: str, agent_names: list[str]) -> dict[str, str]:
    """Agents' feedback from ``[agent]`` sections ({} if none found).

    A marker counts anywhere in a line (``Feedback for [planner]: ...``, ``- **[coder]** ...``);
    the words before it on its line only introduce it, so they belong to no section.
    """
    alternatives = "|".join(re.escape(name) for name in sorted(agent_names, key=len, reverse=True))
    pattern = re.compile(
        rf"\[\s*(?:agent\s*[:#]?\s*)?({alternatives})\s*\]\**[ \t]*:?\**[ \t]*",
        re.IGNORECASE,
    )
    marks = list(pattern.finditer(response))
    found: dict[str, str] = {}
    for index, mark in enumerate(marks):
        end = (
            _section_end(response, mark.end(), marks[index + 1].start())
            if index + 1 < len(marks)
            else len(response)
        )
        name = next(a for a in agent_names if _norm(a) == _norm(mark.group(1)))
        text = response[mark.end() : end].strip()
        if text:
            found[name] = f"{found[name]}\n{text}" if name in found else text
    return found


def _section_end(response: str, start: int, next_mark: int) -> int:
    """Where a section starting at ``start`` ends: at the line of the next marker, or at the
    marker itself when both share a line (``[planner]: ok. [coder]: no.``)."""
    line_start = response.rfind("\n", start, next_mark) + 1
    return line_start if line_start > start else next_mark


def parse_credit(response: str, agent_names: list[str]) -> tuple[dict[str, str], ParseStatus]:
    """Per-agent feedback and how it was found (``json``, ``markers`` or ``fallback``)."""
    whole = response.strip()
    for status, parser in (("json", parse_json_credit), ("markers", parse_marker_credit)):
        found = parser(response, agent_names)
        if found:
            complete = {agent: found.get(agent, whole) for agent in agent_names}
            return complete, status  # type: ignore[return-value]
    return {agent: whole for agent in agent_names}, "fallback"
