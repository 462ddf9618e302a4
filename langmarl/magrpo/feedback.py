"""External feedback between turns: how the next turn's prompts are built on each branch.

Every mode returns an :class:`~langmarl.magrpo.rollout.ExternalTransition`: a callable
``(prompt, agent_completions, num_agents, prompt_history_per_agent,
response_history_per_agent) -> one prompt per agent``. The trainer calls it per rollout branch
with that branch's histories. Modes:

- ``plain``: the task, the agent's earlier answers, and a request to revise.
- ``level_feedback``: static AST checks of every agent's code, then the task's tests run on
  the combined code in the sandbox subprocess (``sandbox_slice`` picks which tests).
- ``expert_edits``: an LLM (through :mod:`langmarl.llm`; the embedded model by default, any
  preset or LLM config file with ``model=``, a run file's ``external.expert_model``) proposes
  edits to the combined code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langmarl.core.errors import ConfigError
from langmarl.core.transitions import Branch, ExternalTransition, transition_from
from langmarl.core.validation import did_you_mean
from langmarl.magrpo import prompts
from langmarl.magrpo.codecheck import extract_code, run_tests, select_tests, static_check

if TYPE_CHECKING:
    from langmarl.llm.config import LLMConfig

FeedbackMode = Literal["plain", "level_feedback", "expert_edits"]
TestsLookup = Mapping[str, Sequence[str]] | Callable[[str], Sequence[str]]


def _history(responses: Sequence[str]) -> str:
    return "\n".join(
        prompts.HISTORY_ITEM.format(turn=turn + 1, response=text)
        for turn, text in enumerate(responses)
    )


def plain_feedback() -> ExternalTransition:
    """Self-improvement: show each agent its own earlier answers and ask for a revision."""

    def next_prompts(branch: Branch) -> list[str]:
        return [
            prompts.PLAIN_REVISION.format(
                prompt=branch.prompt, history=_history(branch.response_history[i])
            )
            for i in range(branch.num_agents)
        ]

    return transition_from(next_prompts)


def diagnose(code_per_agent: Sequence[str], tests: Sequence[str], sandbox_slice: Any) -> str:
    """Static checks per agent, then test results on the combined code (one line each)."""
    lines = []
    for index, code in enumerate(code_per_agent):
        report = static_check(code)
        if report.syntax_error:
            lines.append(f"agent {index + 1}: {report.syntax_error}")
        else:
            names = ", ".join(report.functions) or "no functions"
            lines.append(f"agent {index + 1}: syntax ok, defines {names}")
    chosen = select_tests(tests, sandbox_slice)
    if chosen:
        result = run_tests("\n\n".join(code_per_agent), chosen)
        for test, ok, error in zip(chosen, result.passed, result.errors, strict=True):
            lines.append(f"test `{test}`: {'passed' if ok else 'FAILED ' + error}")
    return "\n".join(lines)


def level_feedback(tests: TestsLookup, sandbox_slice: int | str | None = 1) -> ExternalTransition:
    """Diagnosis feedback for coding tasks.

    Args:
        tests: The tests of each task prompt: a mapping from prompt to assert statements, or a
            function of the prompt.
        sandbox_slice: Which tests run: 0/None/"all" every one, k > 0 the first k, k < 0 the
            last |k| (default: the first test only).
    """
    lookup = tests if callable(tests) else (lambda prompt: tests.get(prompt, ()))

    def next_prompts(branch: Branch) -> list[str]:
        code = [extract_code(text) for text in branch.completions]
        diagnosis = diagnose(code, list(lookup(branch.prompt)), sandbox_slice)
        return [
            prompts.LEVEL_FEEDBACK.format(
                prompt=branch.prompt, response=branch.completions[i], diagnosis=diagnosis
            )
            for i in range(branch.num_agents)
        ]

    return transition_from(next_prompts)


def expert_llm_config(model: str | None) -> LLMConfig:
    """The expert's LLM config: a preset name or an LLM config file (``None``: the embedded
    model, preset ``local``).

    Raises:
        ConfigError: for an unknown preset (with the closest name) or a missing file.
    """
    from langmarl.llm.presets import get_llm_config

    return get_llm_config(model or "local")


def expert_edits(
    expert: Any | None = None, max_tokens: int = 128, model: str | None = None
) -> ExternalTransition:
    """An LLM reviewer proposes edits to the team's code.

    Args:
        expert: An :class:`~langmarl.llm.LLMClient` (default: one built from ``model``).
        max_tokens: Budget of the expert's answer.
        model: The expert LLM when ``expert`` is not given: a preset name or an LLM config
            file (``None``: the embedded model).

    Raises:
        ConfigError: for an unknown ``model``, or both ``expert`` and ``model``.
    """
    if expert is not None and model is not None:
        raise ConfigError(f"expert_edits got both expert= and model={model!r}: give one, not both")
    if expert is None:
        from langmarl.llm.client import LLMClient

        expert = LLMClient(expert_llm_config(model), role="expert")

    def next_prompts(branch: Branch) -> list[str]:
        code = "\n\n".join(extract_code(text) for text in branch.completions)
        request = prompts.EXPERT_REQUEST.format(prompt=branch.prompt, code=code)
        edits = expert.chat(prompts.EXPERT_SYSTEM, request, max_tokens=max_tokens)
        return [
            prompts.EXPERT_EDITS.format(
                prompt=branch.prompt, response=branch.completions[i], edits=edits
            )
            for i in range(branch.num_agents)
        ]

    return transition_from(next_prompts)


FEEDBACK_MODES: dict[str, Callable[..., ExternalTransition]] = {
    "plain": plain_feedback,
    "level_feedback": level_feedback,
    "expert_edits": expert_edits,
}


def make_external(mode: str, **options: Any) -> ExternalTransition:
    """Build a built-in external transition by name (``options`` go to its factory).

    Raises:
        ConfigError: for an unknown mode or missing options.
    """
    if mode not in FEEDBACK_MODES:
        hint = did_you_mean(mode, FEEDBACK_MODES)
        raise ConfigError(
            f"external mode {mode!r} is unknown.{hint} Use one of {sorted(FEEDBACK_MODES)}"
        )
    if mode == "level_feedback" and "tests" not in options:
        raise ConfigError(
            "external mode 'level_feedback' needs tests=: a mapping from task prompt to test "
            "asserts (tasks.get_task('coding') provides one)"
        )
    return FEEDBACK_MODES[mode](**options)
