"""One judgment from the judges' verdicts, by the strategy the session config names
(``LoopConfig.synthesis``), recorded in every iteration's ``judgment.json``:

* ``mean``: the mean of the scores the judges produced;
* ``veto``: the strictest judge decides (any judge below the pass threshold fails the
  iteration): the score is the lowest one;
* ``llm``: the LLM reads every verdict (score and reason) and reconciles them into one score;
  an unusable reply falls back to the mean, tagged ``synthesis_fallback``.

A judge that failed gave no score and says why; no score at all is a failed judgment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from langmarl.core.errors import LLMError, ParseError
from langmarl.p2p.agents.parsing import parse_score
from langmarl.p2p.session.contracts import JudgeScore, JudgmentResult

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

Synthesis = Literal["mean", "veto", "llm"]
FAILURE_THRESHOLD = 0.3
"""Below this synthesized score the behaviour was not shown (tag ``behaviour_not_shown``)."""
RECONCILE_SYSTEM = (
    "Several judges scored whether a trained robot policy shows the wanted behaviour. Weigh "
    "their verdicts (a judge that measured the behaviour directly counts more than one that "
    "guessed) and reply with two lines:\nSCORE: <number from 0 to 1>\nREASON: <one sentence>"
)
RECONCILE_USER = "Behaviour wanted: {intent}\nCriteria:\n{criteria}\nVerdicts:\n{verdicts}"


def _reconcile(
    llm: LLMClient, scores: Sequence[JudgeScore], intent: str, criteria: str
) -> tuple[float, str]:
    """The LLM's reconciled score and reason.

    Raises:
        LLMError, ParseError: when the call fails or the reply holds no score.
    """
    verdicts = "\n".join(
        f"- {s.judge}: {'no score' if s.score is None else f'{s.score:.2f}'} ({s.reason})"
        for s in scores
    )
    user = RECONCILE_USER.format(intent=intent, criteria=criteria, verdicts=verdicts)
    return parse_score(llm.chat(RECONCILE_SYSTEM, user))


def synthesize(
    scores: list[JudgeScore],
    warnings: list[str],
    threshold: float,
    strategy: Synthesis = "mean",
    *,
    llm: LLMClient | None = None,
    intent: str = "",
    criteria: str = "",
) -> JudgmentResult:
    """The judgment of ``scores`` by ``strategy`` (``llm`` needs the client).

    Raises:
        ValueError: for ``llm`` without a client.
    """
    valid = [s for s in scores if s.score is not None]
    values = [float(s.score) for s in valid if s.score is not None]
    tags = [] if valid else ["no_judge_score"]
    score = sum(values) / len(values) if values else 0.0
    notes = []
    if values and strategy == "veto":
        strictest = min(valid, key=lambda s: float(s.score or 0.0))
        score = float(strictest.score or 0.0)
        if score < threshold:
            tags.append("vetoed")
            notes.append(f"[veto] {strictest.judge} scored {score:.2f} < {threshold:.2f}")
    elif values and strategy == "llm":
        if llm is None:
            raise ValueError("synthesis 'llm' needs an LLM client")
        try:
            score, reason = _reconcile(llm, scores, intent, criteria)
            notes.append(f"[reconciled] {reason}")
        except (LLMError, ParseError) as exc:
            tags.append("synthesis_fallback")
            notes.append(f"[reconcile failed, mean used] {str(exc)[:200]}")
    if valid and score < FAILURE_THRESHOLD:
        tags.append("behaviour_not_shown")
    if any("carries" in w for w in warnings):
        tags.append("reward_hacking")
    if any(w.startswith("plateau") for w in warnings):
        tags.append("plateau")
    diagnosis = " ".join([*(f"[{s.judge}] {s.reason}" for s in scores if s.reason), *notes])
    return JudgmentResult(
        intent_score=score, passed=bool(valid) and score >= threshold, diagnosis=diagnosis,
        failure_tags=tags, judges=scores, warnings=warnings, synthesis=strategy,
    )  # fmt: skip
