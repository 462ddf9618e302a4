"""Running a benchmark: one Prompt2Policy session per case, in one run directory.

What the command line (``langmarl p2p bench``), a job (kind ``p2p_bench``) and the
dashboard (``POST /api/benchmarks``, through a job) share::

    <runs_dir>/<run_id>/                the benchmark, a run of kind p2p_bench:
      run.json                          status, cases_total, cases_done, mean_score, ...
      metrics.jsonl                     a line per finished case (step = case number)
      logs/events.jsonl                 case_start, case_end (+ run_start, run_end)
      bench.json                        plan, finished cases, summary per group, complete,
                                        the case in progress (current)
      session_<time>_<hex>/             a case's session (a p2p run)

Decisions:

* ``bench.json`` is rewritten when a case starts and when it ends (``"complete": false``
  until the last), before ``run.json`` and the metrics, so it never lags behind them.
* Ctrl-C or SIGTERM (a job's cancel) ends the session in progress (``cancelled``, files
  whole, resumable with ``langmarl p2p resume``) and the benchmark ``stopped`` or
  ``cancelled``; ``bench.json`` keeps the finished cases and names the interrupted one as
  ``current``.
* Running a benchmark of the same ``run_id`` again continues one that did not complete (the
  retry of a job whose worker died does that): finished cases are kept, the interrupted
  case runs again in a new session. A complete benchmark is refused, as is one that ran
  other cases.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import load_json_file
from langmarl.core.secrets import Redactor, environment_secrets, llm_secrets
from langmarl.p2p.bench.cases import BENCH_FILE, BenchCase, BenchConfig, CaseOutcome, summarize
from langmarl.p2p.session.config import LoopConfig
from langmarl.store.run import RunDir

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

KIND = "p2p_bench"


def new_bench_id() -> str:
    """``bench_<utc time>_<random>``."""
    return f"bench_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_{secrets.token_hex(2)}"


@dataclass(frozen=True)
class CaseStart:
    """A case about to run."""

    index: int
    """Its number, from 1."""
    total: int
    """Cases in the benchmark."""
    case: BenchCase
    session_dir: Path
    config: LoopConfig
    """Its session's settings."""


@dataclass
class BenchHooks:
    """What a caller sees of a running benchmark (the command line's progress display)."""

    watch: Callable[[CaseStart], AbstractContextManager[object]] | None = None
    """Entered around each case's session."""
    done: Callable[[CaseStart, CaseOutcome], None] | None = None
    """Called after each case."""


@dataclass
class BenchResult:
    """How a benchmark ended (``complete``: every case ran)."""

    bench_dir: Path
    outcomes: list[CaseOutcome] = field(default_factory=list)
    summary: dict[str, dict[str, Any]] = field(default_factory=dict)
    complete: bool = False


def run_bench(
    config: BenchConfig,
    *,
    llm: LLMClient | None = None,
    vlm: LLMClient | None = None,
    hooks: BenchHooks | None = None,
    **session_parts: Any,
) -> BenchResult:
    """Run (or continue) the benchmark ``config`` describes and return its result.

    Args:
        config: The benchmark.
        llm: Client of the sessions' text agents (default: the embedded model).
        vlm: A multimodal client for the video judge (None: none).
        hooks: Progress callbacks.
        session_parts: Passed to :func:`langmarl.p2p.session.loop.run_loop` (``validator``,
            ``trainer``: tests inject theirs).

    Raises:
        ConfigError: if the benchmark's directory holds another run, a complete benchmark
            or one of other cases.
        RunLockedError: if another process runs the benchmark.
        KeyboardInterrupt: on Ctrl-C or SIGTERM, once the benchmark is recorded as
            stopped or cancelled.
    """
    bench_dir = Path(config.runs_dir) / (config.run_id or new_bench_id())
    clients = [client.config for client in (llm, vlm) if client is not None]
    run = RunDir(bench_dir, Redactor(environment_secrets() | llm_secrets(clients)))
    bench = _Bench(run, config.case_list(), llm, vlm, hooks or BenchHooks(), session_parts)
    with run.lock():
        outcomes = _finished(run, bench.cases)
        run.rewind(len(outcomes))
        run.start(KIND, config.record(), cases_total=len(bench.cases), **_progress(outcomes))
        with run.tracking():
            for index in range(len(outcomes) + 1, len(bench.cases) + 1):
                case = bench.cases[index - 1]
                start = CaseStart(index, len(bench.cases), case, bench_dir / _session_id(),
                                  config.case_session(case, bench_dir))  # fmt: skip
                outcomes.append(bench.run_case(start, outcomes))
    summary = summarize(outcomes) if outcomes else {}
    return BenchResult(bench_dir, outcomes, summary, len(outcomes) == len(bench.cases))


def _session_id() -> str:
    from langmarl.p2p.session.loop import new_session_id

    return new_session_id()


@dataclass
class _Bench:
    """A running benchmark: its run, cases, clients and hooks."""

    run: RunDir
    cases: list[BenchCase]
    llm: LLMClient | None
    vlm: LLMClient | None
    hooks: BenchHooks
    session_parts: dict[str, Any]

    def run_case(self, start: CaseStart, outcomes: list[CaseOutcome]) -> CaseOutcome:
        """Run one case's session and record it (bench.json, run.json, metrics, events)."""
        from langmarl.p2p.session import loop  # looked up per call: tests replace loop.run_loop

        current = {"index": start.index, "case": start.case.model_dump(),
                   "session_id": start.session_dir.name}  # fmt: skip
        self.write_table(outcomes, current)
        self.run.event("case_start", **current)
        with self.hooks.watch(start) if self.hooks.watch else nullcontext():
            result = loop.run_loop(
                start.case.instruction, start.config, llm=self.llm, vlm=self.vlm,
                runs_dir=start.session_dir.parent, session_id=start.session_dir.name,
                **self.session_parts,
            )  # fmt: skip
        outcome = CaseOutcome(case=start.case, session_id=result.session_id,
                              status=result.status, best_score=result.best_score)  # fmt: skip
        self.record(start.index, [*outcomes, outcome])
        if self.hooks.done:
            self.hooks.done(start, outcome)
        return outcome

    def record(self, index: int, outcomes: list[CaseOutcome]) -> None:
        """Record case ``index`` (the last of ``outcomes``) as finished."""
        outcome, progress = outcomes[-1], _progress(outcomes)
        self.write_table(outcomes, None)
        self.run.update(**progress)
        self.run.log_metrics(index, best_score=outcome.best_score,
                             passed=int(outcome.status == "passed"),
                             mean_score=progress["mean_score"],
                             success_rate=progress["success_rate"])  # fmt: skip
        self.run.event("case_end", index=index, session_id=outcome.session_id,
                       status=outcome.status, best_score=outcome.best_score)  # fmt: skip

    def write_table(self, outcomes: list[CaseOutcome], current: dict[str, Any] | None) -> None:
        """Rewrite ``bench.json``: the plan, the finished cases, their summary, whether
        every case finished, and the case in progress."""
        self.run.write_json(
            BENCH_FILE,
            {
                "plan": [case.model_dump() for case in self.cases],
                "cases": [outcome.model_dump() for outcome in outcomes],
                "summary": summarize(outcomes) if outcomes else {},
                "complete": len(outcomes) == len(self.cases),
                "cases_total": len(self.cases),
                "current": current,
            },
        )


def _progress(outcomes: list[CaseOutcome]) -> dict[str, Any]:
    """The ``run.json`` fields of finished cases (``mean_score``: the runs list's score)."""
    overall = summarize(outcomes)["all"] if outcomes else {}
    return {
        "cases_done": len(outcomes),
        "mean_score": overall.get("mean_score"),
        "success_rate": overall.get("success_rate"),
    }


def _finished(run: RunDir, cases: list[BenchCase]) -> list[CaseOutcome]:
    """The cases a benchmark in ``run`` finished already (none for a new one).

    Raises:
        ConfigError: if ``run`` holds another kind of run, a complete benchmark, or one
            whose finished cases are not the first of ``cases``.
    """
    info = run.read()
    if info is None:
        return []
    if info.get("kind") != KIND:
        raise ConfigError(
            f"{run.path} holds a {info.get('kind')} run, not a benchmark: pick another run_id"
        )
    if info.get("status") == "completed":
        raise ConfigError(f"benchmark {run.path} is complete: pick another run_id to run it again")
    path = run.file(BENCH_FILE)
    table = load_json_file(path) if path.is_file() else {}
    rows = table.get("cases", []) if isinstance(table, dict) else []
    done = [CaseOutcome.model_validate(row) for row in rows]
    if [o.case for o in done] != cases[: len(done)]:
        raise ConfigError(
            f"benchmark {run.path} ran other cases than this config's: give the same cases "
            "to continue it, or another run_id for a new benchmark"
        )
    return done
