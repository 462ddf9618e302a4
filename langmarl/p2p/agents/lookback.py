"""Look-back tools: read-only views of a session's earlier iterations, for the reviser.

:class:`Lookback` is a :class:`~langmarl.llm.tools.Toolset`: the reviser converses with it
through :func:`langmarl.llm.tools.converse`.

The reviser's prompt shows only the latest iteration; with these tools the model asks for
more: which iterations there were and how they scored, an iteration's reward code, its
metrics, its judgment, and frames of its median video.

Decisions:

* Only the session's own records, iterations ``1..current`` (an iteration directory a kill
  left half-written beyond the current one is not listed). Nothing is executed: handlers
  read the JSON and text files of :mod:`langmarl.p2p.session.records` and decode video frames.
* Every answer is text of at most ``max_chars`` characters (a cut is marked
  ``[truncated]``). ``view_frames`` adds up to 6 PNG frames when the model takes images
  (:attr:`Lookback.images`), else it says which videos exist.
* Errors are answers, never exceptions: an unknown tool, a bad argument or an unreadable
  file comes back as text saying what to send instead (``ToolOutput.ok`` is False).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langmarl.core.validation import did_you_mean
from langmarl.llm.tools import ToolOutput
from langmarl.llm.types import ToolSpec
from langmarl.p2p.session.contracts import TrainSummary
from langmarl.p2p.session.records import IterationRecord, SessionRecord

MAX_FRAMES = 6


class ToolArgumentError(ValueError):
    """A tool's arguments cannot be answered; the message is shown to the model."""


@dataclass(frozen=True)
class Lookback:
    """The records the tools read.

    Args:
        record: The session.
        current: The iteration being revised; iterations ``1..current`` are visible.
        images: Whether ``view_frames`` may return frames (the model takes images).
        max_chars: Longest answer text.
    """

    record: SessionRecord
    current: int
    images: bool = False
    max_chars: int = 2000

    def numbers(self) -> list[int]:
        """The visible iteration numbers, in order."""
        found = (_number(it) for it in self.record.iteration_records())
        return [n for n in found if 1 <= n <= self.current]

    def iteration(self, number: int) -> IterationRecord:
        """Iteration ``number``'s record.

        Raises:
            ToolArgumentError: if it is not a visible iteration.
        """
        numbers = self.numbers()
        if number not in numbers:
            known = f"iterations are {numbers[0]}..{numbers[-1]}" if numbers else "none yet"
            raise ToolArgumentError(f"no iteration {number}; {known}")
        return self.record.iteration(number)

    def specs(self) -> list[ToolSpec]:
        """The tools' function-calling declarations (:class:`~langmarl.llm.tools.Toolset`)."""
        return tool_specs()

    def describe(self) -> str:
        """The tools for the plain-text protocol."""
        return describe_tools()

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        """Answer one call (:func:`call_tool`)."""
        return call_tool(self, name, arguments)


Handler = Callable[[Lookback, dict[str, Any]], ToolOutput]


@dataclass(frozen=True)
class LookbackTool:
    """One tool: what the model sees (name, description, JSON-schema parameters, an example
    of its arguments) and the handler that answers it."""

    name: str
    description: str
    parameters: dict[str, Any]
    example: str
    handler: Handler

    def spec(self) -> ToolSpec:
        """The function-calling declaration."""
        return ToolSpec(self.name, self.description, self.parameters)


def _number(it: IterationRecord) -> int:
    tail = it.iteration_id.removeprefix("iter_")
    return int(tail) if tail.isdigit() else -1


def _list_iterations(lookback: Lookback, args: dict[str, Any]) -> ToolOutput:
    lines = []
    for number in lookback.numbers():
        it = lookback.record.iteration(number)
        outcome, origin = it.read_outcome(), it.read_reward_spec().origin
        judged = (
            f"score {outcome.judgment.intent_score:.2f}, mean return {outcome.mean_return:.2f}"
            if outcome
            else "not judged"
        )
        current = " (current)" if number == lookback.current else ""
        lines.append(f"iteration {number}{current}: {judged}, reward origin {origin}")
    return ToolOutput("\n".join(lines) or "no iterations yet")


def _read_code(lookback: Lookback, args: dict[str, Any]) -> ToolOutput:
    it = lookback.iteration(args["iteration"])
    source = it.read_reward_source().strip() or "(no reward_fn.py)"
    origin = it.read_reward_spec().origin
    return ToolOutput(f"iteration {args['iteration']} reward (origin {origin}):\n{source}")


def _checkpoint_lines(summary: TrainSummary, last: int = 8) -> list[str]:
    lines = ["checkpoints (step: mean / p10 / median / p90 return, env return, length):"]
    for c in summary.checkpoints[-last:]:
        lines.append(
            f"  {c.step}: {c.mean_return:.2f} / {c.p10_return:.2f} / {c.median_return:.2f} / "
            f"{c.p90_return:.2f}, env {c.mean_env_return:.2f}, length {c.mean_length:.0f}"
        )
    return lines


def _scalar_trend(rows: list[dict[str, Any]], key: str) -> str | None:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]
    if not values:
        return None
    return f"{key} {values[0]:.3g} -> {values[-1]:.3g} (max {max(values):.3g})"


def _read_metrics(lookback: Lookback, args: dict[str, Any]) -> ToolOutput:
    it = lookback.iteration(args["iteration"])
    summary = it.read_summary()
    if summary is None:
        return ToolOutput(f"iteration {args['iteration']} has no training summary", ok=False)
    means = json.dumps({k: round(v, 4) for k, v in summary.term_means.items()})
    lines = [f"iteration {args['iteration']}: term means per step {means}"]
    lines += _checkpoint_lines(summary)
    train, _ = it.judged_run().parse_scalars()
    keys = ("episodic_return", "episode_length", "env_reward_mean")
    trends = [t for t in (_scalar_trend(train, k) for k in keys) if t]
    steps = [int(r.get("step", 0)) for r in train]
    lines.append(
        f"training ({len(train)} rollouts to step {max(steps)}): " + "; ".join(trends)
        if train
        else "training scalars: none recorded"
    )
    return ToolOutput("\n".join(lines))


def _read_judgment(lookback: Lookback, args: dict[str, Any]) -> ToolOutput:
    it = lookback.iteration(args["iteration"])
    judgment = it.read_judgment()
    if judgment is None:
        return ToolOutput(f"iteration {args['iteration']} was not judged", ok=False)
    judges = "; ".join(
        f"{j.judge} {'none' if j.score is None else f'{j.score:.2f}'}: {j.reason[:200]}"
        for j in judgment.judges
    )
    return ToolOutput(
        f"iteration {args['iteration']}: score {judgment.intent_score:.2f} "
        f"(passed {judgment.passed}, synthesis {judgment.synthesis})\n"
        f"judges: {judges or 'none'}\ndiagnosis: {judgment.diagnosis[:600] or 'none'}\n"
        f"tags: {', '.join(judgment.failure_tags) or 'none'}\n"
        f"warnings: {'; '.join(judgment.warnings) or 'none'}"
    )


def _view_frames(lookback: Lookback, args: dict[str, Any]) -> ToolOutput:
    number = args["iteration"]
    run = lookback.iteration(number).judged_run()
    summary = run.read_summary()
    with_video = [c for c in summary.checkpoints if "median" in c.videos] if summary else []
    names = run.video_filenames()
    video = run.video(with_video[-1].videos["median"]) if with_video else None
    if video is None:
        listed = ", ".join(names) if names else "none"
        return ToolOutput(f"iteration {number} has no median video (videos: {listed})", ok=False)
    checkpoint = with_video[-1]
    name = video.name
    about = f"{name} (step {checkpoint.step}, median return {checkpoint.median_return:.2f})"
    if not lookback.images:
        return ToolOutput(
            f"iteration {number} has videos {', '.join(names)}; this model takes no images, "
            f"so no frames of {about} are shown: read_metrics and read_judgment describe it."
        )
    from langmarl.p2p.agents.video import video_frames

    try:
        frames = video_frames(video, args.get("count", 4))
    except ValueError as exc:
        return ToolOutput(f"no frames of {about}: {exc}", ok=False)
    return ToolOutput(f"{len(frames)} frames of {about}, in time order.", tuple(frames))


_ITERATION = {
    "type": "object",
    "properties": {"iteration": {"type": "integer", "minimum": 1}},
    "required": ["iteration"],
}
_FRAMES = {
    "type": "object",
    "properties": {
        "iteration": {"type": "integer", "minimum": 1},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_FRAMES},
    },
    "required": ["iteration"],
}

TOOLS: dict[str, LookbackTool] = {
    tool.name: tool
    for tool in (
        LookbackTool(
            "list_iterations", "Every iteration so far: intent score, mean return, reward origin.",
            {"type": "object", "properties": {}}, "{}", _list_iterations,
        ),
        LookbackTool(
            "read_code", "The reward function code an iteration trained on.",
            _ITERATION, '{"iteration": 1}', _read_code,
        ),
        LookbackTool(
            "read_metrics",
            "An iteration's reward term means, evaluation returns per checkpoint and the trend "
            "of its training returns.", _ITERATION, '{"iteration": 1}', _read_metrics,
        ),
        LookbackTool(
            "read_judgment", "An iteration's judgment: score per judge, diagnosis, tags.",
            _ITERATION, '{"iteration": 1}', _read_judgment,
        ),
        LookbackTool(
            "view_frames", f"Up to {MAX_FRAMES} frames of an iteration's median evaluation video.",
            _FRAMES, '{"iteration": 1, "count": 4}', _view_frames,
        ),
    )
}  # fmt: skip
"""The look-back tools by name."""


def _integer(key: str, value: Any, schema: dict[str, Any]) -> int:
    """``value`` as an integer within the schema's bounds (numeric strings accepted)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"{key} must be an integer, got {value!r}")
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and value < low:
        raise ToolArgumentError(f"{key} must be at least {low}, got {value}")
    if high is not None and value > high:
        raise ToolArgumentError(f"{key} must be at most {high}, got {value}")
    return value


def check_arguments(tool: LookbackTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` checked against the tool's schema (integers only, as all tools take).

    Raises:
        ToolArgumentError: naming the argument and what to send.
    """
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    takes = ", ".join(properties) or "no arguments"
    for key in arguments:
        if key not in properties:
            hint = did_you_mean(key, properties)
            raise ToolArgumentError(f"unknown argument {key!r};{hint} {tool.name} takes: {takes}")
    for key in tool.parameters.get("required", []):
        if key not in arguments:
            raise ToolArgumentError(f"missing {key!r}; example: {tool.name} {tool.example}")
    return {k: _integer(k, v, properties[k]) for k, v in arguments.items()}


def _bounded(text: str, limit: int) -> str:
    marker = "\n[truncated]"
    return text if len(text) <= limit else text[: max(0, limit - len(marker))] + marker


def call_tool(
    lookback: Lookback,
    name: str,
    arguments: dict[str, Any],
    tools: dict[str, LookbackTool] = TOOLS,
) -> ToolOutput:
    """Answer one call; every failure is an answer with ``ok=False`` that says what to do."""
    tool = tools.get(name)
    if tool is None:
        hint = did_you_mean(name, tools)
        return ToolOutput(f"no tool {name!r}.{hint} Tools: {', '.join(tools)}", ok=False)
    try:
        output = tool.handler(lookback, check_arguments(tool, arguments))
    except ToolArgumentError as exc:
        return ToolOutput(f"{name}: {exc}", ok=False)
    except (OSError, ValueError, RuntimeError) as exc:  # unreadable record or video
        return ToolOutput(f"{name} could not read the records: {exc}"[:300], ok=False)
    text = _bounded(output.text, lookback.max_chars)
    return ToolOutput(text, output.images[:MAX_FRAMES], output.ok)


def tool_specs(tools: dict[str, LookbackTool] = TOOLS) -> list[ToolSpec]:
    """The function-calling declarations of ``tools``."""
    return [tool.spec() for tool in tools.values()]


def describe_tools(tools: dict[str, LookbackTool] = TOOLS) -> str:
    """One line per tool for the plain-text protocol: its call line and what it returns."""
    return "\n".join(f"CALL {t.name} {t.example}  -- {t.description}" for t in tools.values())
