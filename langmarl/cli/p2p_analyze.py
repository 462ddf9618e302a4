"""`langmarl p2p analyze`: what a reward-space session did, from its files.

Its own module so the ``p2p`` group registers it with one line (:mod:`langmarl.p2p.analysis.analyze`
does the work; this prints it in 80 columns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from langmarl.cli.common import compact_table, console, require_dir


def _num(value: float | None, digits: str = ".3g") -> str:
    return "-" if value is None else format(value, digits)


def _changes(change: Any) -> str:
    said = [change.origin]
    if change.reward_changed is not None:
        said.append("code changed" if change.reward_changed else "same code")
    said += [f"+{t}" for t in change.terms_added] + [f"-{t}" for t in change.terms_removed]
    said += [f"{k}={v:.3g}" for k, v in change.hp_changes.items()]
    return ", ".join(said) + (f"; error: {change.error}" if change.error else "")


def print_analysis(analysis: Any) -> None:
    """The analysis as tables and lines that fit 80 columns."""
    best = analysis.best
    said = "no judged iteration"
    if best.iteration is not None:
        said = (f"best iter_{best.iteration} (score {_num(best.intent_score, '.2f')}, return "
                f"{_num(best.mean_return)})")  # fmt: skip
    console.print(
        f"{analysis.session_id}: {analysis.status}, {len(analysis.iterations)} iteration(s); "
        + said, markup=False, highlight=False,
    )  # fmt: skip
    steps = compact_table("score", "return", lead=("iter",), text=("reward, changes",))
    for c in analysis.iterations:
        steps.add_row(str(c.iteration), _num(c.intent_score, ".2f"), _num(c.mean_return),
                      _changes(c))  # fmt: skip
    console.print(steps)
    terms = compact_table("mean", "spread", "trend", "share", lead=("term",), text=("dominant",))
    for t in analysis.terms:
        terms.add_row(t.name, _num(t.mean), _num(t.spread), t.trend, f"{t.share:.0%}",
                      ", ".join(f"iter_{i}" for i in t.dominant_in) or "-")  # fmt: skip
    if analysis.terms:
        console.print(terms)
    for p in analysis.plateaus:
        console.print(f"{p.series} {p.message}", markup=False, highlight=False)
    for d in analysis.dynamics:
        console.print(f"iter_{d.iteration} training: " + "; ".join(
            d.notes or ["no flags"]), markup=False, highlight=False)  # fmt: skip
    console.print(f"\nnarrative ({analysis.narrative_source}):", style="bold")
    console.print(analysis.narrative, markup=False, highlight=False)
    if analysis.narrative_note:
        console.print(analysis.narrative_note, style="dim", markup=False, highlight=False)


def analyze(
    session_dir: Path = typer.Argument(
        ..., help="The session directory, e.g. runs/session_20260101_120000_ab12."
    ),
    llm: str | None = typer.Option(
        None,
        help="LLM preset or config file that writes the narrative (default: none, the "
        "rule-based narrative).",
    ),
) -> None:
    """Analyse a session from its files: per reward term its mean, spread, trend and share,
    dominance and plateaus, each run's training dynamics, the best iteration and what changed
    between iterations, and a narrative; written to the session's analysis.json."""
    from langmarl.core.errors import ConfigError
    from langmarl.p2p.analysis.analyze import analyze_session
    from langmarl.p2p.session.records import SessionRecord

    fix = "give a directory `langmarl p2p run` wrote, e.g. runs/session_<time>_<id>"
    record = SessionRecord(require_dir(session_dir, "session directory", fix))
    if not record.history_path.is_file() and not record.iteration_records():
        raise ConfigError(f"{session_dir} holds no session (no loop_history.json): {fix}")
    client = None
    if llm is not None:
        from langmarl.llm.client import LLMClient
        from langmarl.llm.presets import get_llm_config

        client = LLMClient(get_llm_config(llm), role="p2p")
    with console.status("analysing …"):
        analysis = analyze_session(record, llm=client)
    print_analysis(analysis)
    console.print(f"written: {record.analysis_path}", markup=False, highlight=False)
