"""The narrative of a session analysis: a few sentences over its numbers, by the LLM when
it writes usable prose, else by rules.

The LLM (one call, :data:`~langmarl.p2p.agents.prompts.NARRATIVE_SYSTEM`) sees :func:`facts_text`.
Its reply is used only if it is prose (no code) of :data:`MIN_CHARS` to :data:`MAX_CHARS`
characters that does not loop (:data:`UNIQUE_GRAMS`) and every number in it is one of the
facts' numbers (rounded as the reply rounds it) or a small count (0 to 10): a model that
invents a return is not quoted. Otherwise, and without a client, :func:`rules_narrative`
writes it; the analysis records which (``narrative_source``) and why the reply was not used
(``narrative_note``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from langmarl.core.errors import LLMError, ParseError
from langmarl.p2p.agents.prompts import NARRATIVE_SYSTEM, NARRATIVE_USER
from langmarl.p2p.analysis.models import SessionAnalysis

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

MIN_CHARS, MAX_CHARS = 40, 1500
MAX_TOKENS = 220
"""The narrative's reply length at most (the client's own ``max_tokens`` if lower)."""
UNIQUE_GRAMS = 0.6
"""A reply whose distinct word triples are fewer than this share of them is a loop (a small
model's "the 2nd iteration of the 1st iteration of the 2nd ...")."""
CODE = re.compile(r"\b(def|class|import)\s+\w+|\w+\(.*\):")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
DYNAMICS_SENTENCES = {
    "still_improving": "the return was still rising when training stopped (more timesteps "
    "may help)",
    "return_stalled": "the return rose early, then flattened",
    "return_declining": "the return fell late in training",
    "env_reward_falling": "the custom return rose while the env's own reward fell (the "
    "reward may be exploited)",
    "entropy_collapse": "the policy's entropy collapsed",
    "value_loss_rising": "the value loss rose",
    "kl_spikes": "approx_kl spiked",
    "clip_spikes": "the clip fraction spiked",
}


def _n(value: float | None) -> str:
    return "none" if value is None else f"{value:.3g}"


def facts_text(analysis: SessionAnalysis) -> str:
    """The analysis as short lines of facts (what the LLM narrates from)."""
    best = analysis.best
    lines = [
        f"Status {analysis.status}, {len(analysis.iterations)} iteration(s); best iteration "
        f"{best.iteration} (intent score {_n(best.intent_score)}, mean return "
        f"{_n(best.mean_return)})."
    ]
    for c in analysis.iterations:
        line = (f"Iteration {c.iteration}: reward {c.origin}, intent score "
                f"{_n(c.intent_score)}, mean return {_n(c.mean_return)}")  # fmt: skip
        if c.hp_changes:
            line += ", hyperparameters " + ", ".join(
                f"{k}={v:.3g}" for k, v in c.hp_changes.items()
            )
        if c.reward_changed is not None:
            line += ", new reward code" if c.reward_changed else ", same reward code"
        if c.terms_added or c.terms_removed:
            line += f", terms added {c.terms_added or 'none'}, removed {c.terms_removed or 'none'}"
        lines.append(line + (f", error: {c.error[:120]}" if c.error else "") + ".")
    for t in analysis.terms:
        dominant = f", dominant in iteration(s) {t.dominant_in}" if t.dominant_in else ""
        lines.append(f"Term {t.name}: mean {_n(t.mean)}, spread {_n(t.spread)}, trend "
                     f"{t.trend}, share {t.share:.0%}{dominant}.")  # fmt: skip
    lines += [f"Plateau of {p.series} at iteration {p.iteration}." for p in analysis.plateaus]
    for d in analysis.dynamics:
        flags = [DYNAMICS_SENTENCES.get(f, f) for f in d.flags] or ["no flags"]
        lines.append(f"Training of iteration {d.iteration}: {'; '.join(flags)}.")
    return "\n".join(lines)


def _iterations(numbers: list[int]) -> str:
    """``iteration 2`` / ``iterations 1 and 2`` / ``iterations 1, 2 and 3``."""
    if len(numbers) == 1:
        return f"iteration {numbers[0]}"
    return "iterations " + ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def _origin_sentences(analysis: SessionAnalysis) -> list[str]:
    """Where the rewards came from, and which iterations repeated the one before."""
    origins, said = analysis.origins, []
    fallback, kept = origins.get("fallback", 0), origins.get("previous", 0)
    if fallback and not origins.get("author") and not origins.get("revision"):
        said.append("No iteration trained an LLM-written reward: no authored reward validated, "
                    "so the session trained the environment's fallback template.")  # fmt: skip
    elif fallback:
        said.append("The first reward was the environment's fallback template: no authored "
                    "reward validated.")  # fmt: skip
    if kept:
        said.append(f"{kept} revision(s) failed validation, so the previous reward was trained "
                    "again.")  # fmt: skip
    same = [
        c.iteration for c in analysis.iterations if c.reward_changed is False and not c.hp_changes
    ]
    if same:
        said.append(f"{_iterations(same).capitalize()} trained the same reward code with the "
                    "same settings as the iteration before.")  # fmt: skip
    return said


def rules_narrative(analysis: SessionAnalysis) -> str:
    """A plain narrative of the analysis, from rules (no model)."""
    if not analysis.iterations:
        return "The session has no iteration to analyse yet."
    best = analysis.best
    said = [f"The session ran {len(analysis.iterations)} iteration(s) and ended with status "
            f"{analysis.status or 'without a status'}."]  # fmt: skip
    if best.iteration is not None:
        said.append(f"Iteration {best.iteration} was best (intent score "
                    f"{_n(best.intent_score)}, mean return {_n(best.mean_return)}).")  # fmt: skip
        if best.by_return not in (None, best.iteration):
            said.append(f"The highest mean return came in iteration {best.by_return}.")
    said += _origin_sentences(analysis)
    for t in analysis.terms:
        if t.dominant_in:
            said.append(f"Term {t.name!r} dominated the reward ({t.share:.0%} of its magnitude "
                        f"on average) in {_iterations(t.dominant_in)}.")  # fmt: skip
    said += [f"The {p.series.replace('_', ' ')} reached a plateau by iteration {p.iteration}."
             for p in analysis.plateaus]  # fmt: skip
    for flag, sentence in DYNAMICS_SENTENCES.items():
        where = [d.iteration for d in analysis.dynamics if flag in d.flags]
        if where:
            said.append(f"In {_iterations(where)} {sentence}.")
    if any(d.missing for d in analysis.dynamics):
        said.append("PPO losses are not logged, so entropy, value loss and KL were not analysed.")
    return " ".join(said)


def _allowed(number: str, facts: list[float]) -> bool:
    value = float(number)
    if value.is_integer() and 0 <= value <= 10:
        return True
    digits = len(number.split(".")[1]) if "." in number and "e" not in number else 0
    tolerance = 0.5 * 10**-digits + 1e-9
    return any(abs(value - f) <= max(tolerance, 0.01 * abs(f)) for f in facts)


def check_reply(reply: str, facts: str) -> str:
    """The reply as the narrative, if usable.

    Raises:
        ParseError: naming what is wrong (code, length, or a number the facts lack).
    """
    text = reply.strip()
    if "```" in text or CODE.search(text):
        raise ParseError("prose (the reply holds code)", text)
    if not MIN_CHARS <= len(text) <= MAX_CHARS:
        raise ParseError(f"a narrative of {MIN_CHARS}-{MAX_CHARS} characters", text)
    words = text.lower().split()
    grams = list(zip(words, words[1:], words[2:], strict=False))
    if len(grams) >= 12 and len(set(grams)) < UNIQUE_GRAMS * len(grams):
        raise ParseError("prose that does not repeat itself", text)
    known = [float(n) for n in NUMBER.findall(facts)]
    known += [100 * f for f in known]  # shares appear as percentages
    invented = [n for n in NUMBER.findall(text) if not _allowed(n, known)]
    if invented:
        raise ParseError(f"a narrative quoting only the facts' numbers (not {invented[:3]})", text)
    return text


def narrate(analysis: SessionAnalysis, llm: LLMClient | None = None) -> None:
    """Set the analysis's narrative: the LLM's if usable (one call), else the rules'."""
    analysis.narrative, analysis.narrative_source = rules_narrative(analysis), "rules"
    if llm is None:
        return
    facts = facts_text(analysis)
    try:
        limit = min(MAX_TOKENS, llm.config.max_tokens)  # never longer than the client allows
        reply = llm.chat(NARRATIVE_SYSTEM, NARRATIVE_USER.format(facts=facts), max_tokens=limit)
        analysis.narrative, analysis.narrative_source = check_reply(reply, facts), "llm"
    except (LLMError, ParseError) as exc:
        analysis.narrative_note = f"LLM narrative not used: {str(exc)[:300]}"
