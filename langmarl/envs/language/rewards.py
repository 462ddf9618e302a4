"""Rewards of the language tasks: qa by normalized EM/F1, math by math-verify, coding by
running tests in the sandbox, writing by an LLM judge.

Scoring functions are pure where they can be; the sandbox run and the judge calls are async.
Each returns ``(reward, details)``; ``details`` is stored in the trajectory's metadata.
"""

from __future__ import annotations

import logging
import re
import string
import threading
from collections import Counter
from string import Template
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import LLMError, MissingDependencyError
from langmarl.envs.language import prompts
from langmarl.envs.language.datasets import strip_code_fences

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

Details = dict[str, Any]
CODE_TIMEOUT_S = 10.0
_ANSWER = re.compile(r"answer\s*(?:is)?\s*[:：]\s*(.+)", re.IGNORECASE)


def extract_answer(text: str) -> str:
    """The text after the last ``Answer:`` line (else the last non-empty line)."""
    matches = _ANSWER.findall(text)
    if matches:
        return str(matches[-1]).strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def has_answer_line(text: str) -> bool:
    """Whether ``text`` states its answer on an ``Answer: ...`` line, as the format asks."""
    return _ANSWER.search(text) is not None


def normalize_answer(text: str) -> str:
    """SQuAD-style normalization: lower case, no punctuation, articles or extra spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1_score(prediction: str, gold: str) -> float:
    """Token-level F1 between normalized prediction and gold."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or common == 0:
        return float(pred == ref)
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def qa_reward(output: str, gold: str) -> tuple[float, Details]:
    """max(exact match, F1) of the extracted answer against ``gold``."""
    answer = extract_answer(output)
    exact = float(normalize_answer(answer) == normalize_answer(gold))
    f1 = f1_score(answer, gold)
    return max(exact, f1), {"prediction": answer, "exact_match": exact, "f1": f1}


def math_reward(output: str, gold: str) -> tuple[float, Details]:
    """1.0 when math-verify finds the output's final answer equal to ``gold``.

    Raises:
        MissingDependencyError: if ``math-verify`` is not installed (extra ``text``).
    """
    try:
        from math_verify import parse, verify
    except ImportError as exc:
        raise MissingDependencyError("math-verify", "text", "Math rewards") from exc
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    # math-verify's timeouts use SIGALRM, which only works on the main thread.
    timeout = 5 if threading.current_thread() is threading.main_thread() else None
    gold_parsed = parse(f"${gold}$", parsing_timeout=timeout)
    candidates = [output, extract_answer(output)]
    for candidate in candidates:
        parsed = parse(candidate, parsing_timeout=timeout)
        if parsed and verify(gold_parsed, parsed, timeout_seconds=timeout):
            return 1.0, {"prediction": str(parsed[-1]), "correct": True}
    return 0.0, {"prediction": extract_answer(output), "correct": False}


def coding_program(output: str, task: dict[str, Any]) -> tuple[str, list[str]]:
    """The code and the test of ``output``: the task's prompt (unless the output restates the
    function) and the code; the task's tests, with ``check(entry_point)`` for HumanEval
    tests."""
    code = strip_code_fences(output).strip("\n")
    entry = task.get("entry_point") or ""
    prompt = str(task.get("question", ""))
    if entry and f"def {entry}" not in code:
        code = prompt + code  # the output is a function body
    test = str(task.get("test", ""))
    if entry and "def check(" in test:
        test += f"\ncheck({entry})\n"
    return code + "\n", [test]


async def coding_reward(output: str, task: dict[str, Any]) -> tuple[float, Details]:
    """1.0 when the task's tests pass in the sandbox (timeout, memory limit, temp dir, no
    inherited secrets); the output never runs in this process."""
    from langmarl.sandbox import SandboxLimits
    from langmarl.verifiers.code_tests import run_code_tests_async

    code, tests = coding_program(output, task)
    report = await run_code_tests_async(code, tests, SandboxLimits(timeout_s=CODE_TIMEOUT_S))
    details: Details = {"passed": report.ok, "returncode": report.run.returncode}
    if not report.ok:
        failed = [error for error in report.errors if error]
        details["error"] = report.run.killed_reason or (failed[0] if failed else "failed")
    return (1.0 if report.ok else 0.0), details


def parse_score(reply: str, scale: int = 10) -> float | None:
    """The first number in ``reply`` (e.g. ``"Score: 7/10"``) as a fraction of ``scale``,
    clipped to [0, 1]; ``None`` if there is no number."""
    match = re.search(r"(-?\d+(?:\.\d+)?)", reply)
    if match is None:
        return None
    return min(max(float(match.group(1)) / scale, 0.0), 1.0)


async def writing_reward(
    output: str, task: dict[str, Any], judge: LLMClient
) -> tuple[float, Details]:
    """The judge's 1-10 score against the task's criteria, divided by 10. An unparseable or
    failed judgement gives 0 with the reason in ``details``."""
    user = Template(prompts.WRITING_JUDGE).safe_substitute(
        task=task.get("question", ""), criteria=task.get("criteria", ""), text=output
    )
    try:
        reply = await judge.achat(prompts.JUDGE_SYSTEM, user, max_tokens=16)
    except LLMError as exc:
        return 0.0, {"error": f"judge failed: {exc}"}
    score = parse_score(reply)
    if score is None:
        return 0.0, {"error": "judge reply had no score", "judge": reply[:200]}
    return score, {"judge": reply[:200]}


async def verify_qa(
    output: str, task: dict[str, Any], judge: LLMClient, base: tuple[float, Details]
) -> tuple[float, Details]:
    """``use_verified_reward`` for qa: an LLM judge decides whether the answer means the
    same as the reference; ``yes`` gives 1.0, ``no`` keeps the EM/F1 reward."""
    reward, details = base
    user = Template(prompts.QA_VERIFY).safe_substitute(
        question=task.get("question", ""),
        gold=task.get("ground_truth", ""),
        answer=details.get("prediction", ""),
    )
    try:
        reply = await judge.achat(prompts.JUDGE_SYSTEM, user, max_tokens=8)
    except LLMError as exc:
        return reward, {**details, "verify_error": str(exc)}
    verified = reply.strip().lower().startswith("yes")
    return (1.0 if verified else reward), {**details, "verified": verified}
