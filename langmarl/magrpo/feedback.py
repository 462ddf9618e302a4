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
- ``"package.module:function"``: your own transition, named in a run file like an
  environment's entry point (:func:`~langmarl.core.entry_points.load_entry_point`). The
  function is called as an :class:`~langmarl.core.transitions.ExternalTransition` (CoMLRL's
  five arguments; write it as a function of one ``Branch`` wrapped with ``transition_from``);
  a name that does not import, or names no callable, fails the run file in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from langmarl.core.errors import ConfigError
from langmarl.core.transitions import Branch, ExternalTransition, transition_from
from langmarl.core.validation import did_you_mean
from langmarl.magrpo import prompts
from langmarl.magrpo.codecheck import extract_code, run_tests, select_tests, static_check

if TYPE_CHECKING:
    from langmarl.llm.config import LLMConfig

BUILT_IN_MODES = ("plain", "level_feedback", "expert_edits")
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


def named_transition(entry_point: str) -> ExternalTransition:
    """The transition a ``"package.module:function"`` string names.

    Raises:
        ConfigError: in one line, when it does not import or names no callable.
    """
    from langmarl.core.entry_points import load_entry_point

    module, _, name = entry_point.partition(":")
    if not module or not name:
        raise ConfigError(
            f"external mode {entry_point!r} is not 'package.module:function': name the "
            f"module and the function, or use one of {list(BUILT_IN_MODES)}"
        )
    found = load_entry_point(entry_point, "the external transition")
    if not callable(found):
        raise ConfigError(
            f"external mode {entry_point!r} is a {type(found).__name__}, not a function: "
            "name a transition function (see langmarl.core.transitions.ExternalTransition)"
        )
    return found


def _known_mode(mode: str) -> str:
    """``mode`` if it is built in or names a transition that loads (did-you-mean else)."""
    if ":" in mode:
        named_transition(mode)
    elif mode not in BUILT_IN_MODES:
        hint = did_you_mean(mode, BUILT_IN_MODES)
        raise ConfigError(
            f"external mode {mode!r} is unknown.{hint} Use one of {list(BUILT_IN_MODES)} "
            "or your own transition as 'package.module:function'"
        )
    return mode


FeedbackMode = Annotated[str, AfterValidator(_known_mode)]
"""A built-in mode or ``"package.module:function"`` (checked when the run file loads)."""


def make_external(mode: str, **options: Any) -> ExternalTransition:
    """Build an external transition by name: a built-in one (``options`` go to its
    factory) or the one a ``"package.module:function"`` string names (no options).

    Raises:
        ConfigError: for an unknown mode, a name that does not load, or missing options.
    """
    if ":" in mode:
        return named_transition(mode)
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
