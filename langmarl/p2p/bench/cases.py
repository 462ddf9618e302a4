"""Benchmarks over (env_id, instruction, category, difficulty, check, reference) cases: their
config, the cases (a CSV file or inline), and the summary per group.

A benchmark runs one Prompt2Policy session per case (:mod:`langmarl.p2p.bench.run`) into
one run directory of kind ``p2p_bench``; :class:`BenchConfig` is what it reads, from a file
(``langmarl p2p bench --config``), a job (``langmarl jobs submit p2p_bench``) or the
dashboard (``POST /api/benchmarks``). Its ``session`` settings are every case's
:class:`~langmarl.p2p.session.config.LoopConfig`, with the case's ``env_id``; the sessions are
placed inside the benchmark's directory, so ``session`` names no env and no place.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from langmarl.config.runs_root import DEFAULT_RUNS_DIR, RunId, RunsDir
from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.core.files import load_json_file
from langmarl.p2p.session.config import LoopConfig

CASE_COLUMNS = ("env_id", "instruction", "category", "difficulty", "check", "reference")
CASE_FILES = ("check", "reference")
"""Columns naming files; a relative path is read from the cases file's directory."""
BENCH_FILE = "bench.json"
"""The benchmark's table: plan, finished cases, summary per group, ``complete``."""
BENCH_KEYS = ("cases", "cases_csv", "session")
"""Keys only a bench config has (a session config, which forbids unknown keys, has none)."""
PLACEMENT = ("env_id", "runs_dir", "run_id", "llm", "vlm")
"""LoopConfig keys a benchmark sets for its sessions (its cases, directory and models)."""


class BenchCase(BaseModel):
    """One benchmark row."""

    model_config = ConfigDict(extra="forbid")

    env_id: str
    """The Gymnasium MuJoCo env of the case's session."""
    instruction: str
    """The behaviour wanted, in words (the session's intent)."""
    category: str = ""
    """A group of the summary (``category=<c>``); empty: none."""
    difficulty: str = ""
    """A group of the summary (``difficulty=<d>``); empty: none."""
    check: str = ""
    """A check file scoring the case's episodes (:mod:`langmarl.p2p.design.checks`): the
    session's ``check``, so its score decides; empty: the session's own (or the judges)."""
    reference: str = ""
    """A person-written reward for the intent (a reward file), what the benchmark's
    human-normalised score compares with; empty: none."""


class CaseOutcome(BaseModel):
    """One case's result."""

    case: BenchCase
    session_id: str
    """The case's session: ``<bench dir>/<session_id>``."""
    status: str
    """The session's outcome: passed, max_iterations, invalid_code or error."""
    best_score: float | None = None


OUTCOME_KEYS = ("session_id", "status", "best_score")


def parse_cases(text: str, source: str, base: Path | None = None) -> list[BenchCase]:
    """The cases of CSV ``text`` with header ``env_id,instruction`` and optionally
    ``category,difficulty,check,reference``; relative ``check`` and ``reference`` paths are
    joined to ``base`` (the cases file's directory) when given.

    Raises:
        ConfigError: Missing columns, or no rows; ``source`` names where the text came from.
    """
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CASE_COLUMNS[:2] if c not in (reader.fieldnames or [])]
    if missing:
        raise ConfigError(
            f"{source} lacks column(s) {missing}: the header is env_id,instruction, then any "
            f"of {','.join(CASE_COLUMNS[2:])}"
        )
    rows = [{k: (row.get(k) or "").strip() for k in CASE_COLUMNS} for row in reader]
    if base is not None:
        for row in rows:
            row.update({k: str(base / row[k]) for k in CASE_FILES if row[k]})
    cases = [BenchCase(**row) for row in rows]
    if not cases:
        raise ConfigError(f"{source} has no cases: add rows under the header")
    return cases


def read_cases(path: str | Path) -> list[BenchCase]:
    """Read a CSV file with header ``env_id,instruction,category,difficulty``.

    Raises:
        ConfigError: Missing file or columns, or an empty file.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"benchmark file {str(path)!r} does not exist")
    return parse_cases(path.read_text(encoding="utf-8"), str(path), path.parent)


def _known_envs(cases: list[BenchCase], field: str) -> list[BenchCase]:
    """``cases`` if every env id is one a session can run and every check file is a check
    (ValueError naming the row)."""
    from langmarl.p2p.design.checks import read_check
    from langmarl.p2p.reward.env_specs import get_env_spec

    for index, case in enumerate(cases):
        try:
            get_env_spec(case.env_id)
        except ConfigError as exc:
            raise ValueError(f"{field}[{index}].env_id: {exc}") from None
        try:
            if case.check:
                read_check(case.check)
        except ConfigError as exc:
            raise ValueError(f"{field}[{index}].check: {exc}") from None
    return cases


class BenchConfig(BaseModel):
    """A benchmark: its cases, every session's settings, the LLMs and where it is written."""

    model_config = ConfigDict(extra="forbid")

    session: LoopConfig = Field(default_factory=LoopConfig)
    """Every case's session settings (a LoopConfig mapping: ``max_iterations``,
    ``total_timesteps``, ``train``, …); each case sets ``env_id`` and the sessions are
    placed in the benchmark's directory, so ``env_id``, ``runs_dir`` and ``run_id`` are not
    given here."""
    cases: list[BenchCase] | None = None
    """The cases: a list of ``{env_id, instruction, category, difficulty}``, or a CSV file
    with that header (read when the config is validated: the config then holds the list)."""
    cases_csv: str | None = None
    """The cases as CSV text instead (what the dashboard's form sends); give ``cases`` or
    this, not both."""
    limit: int | None = Field(default=None, ge=1)
    """Run only the first N cases (a quick look at a bench); None: all."""
    llm: str | dict[str, Any] = "local"
    """The sessions' text LLM: a preset name, an LLM config file or an LLM config mapping
    (default: the embedded model)."""
    vlm: str | dict[str, Any] | None = None
    """A multimodal LLM for the video judge (same forms); None: no video judge."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """The directory holding runs; the benchmark's is ``<runs_dir>/<run_id>``."""
    run_id: RunId = None
    """The benchmark's directory name (None: a new ``bench_<time>_<hex>``). A benchmark of
    that name that did not complete continues where it stopped."""
    seed: int | list[int] | None = None
    """Every session's ``seed`` (None: ``session.seed``); a job sets it from its seed."""

    @field_validator("session")
    @classmethod
    def _no_placement(cls, session: LoopConfig) -> LoopConfig:
        given = [key for key in PLACEMENT if key in session.model_fields_set]
        if given:
            raise ValueError(
                f"session sets {', '.join(given)}: each case names its env and the sessions "
                "are placed in the benchmark's directory; drop them (set runs_dir and run_id "
                "at the top level)"
            )
        return session

    @field_validator("cases", mode="before")
    @classmethod
    def _read_file(cls, cases: Any) -> Any:
        return [c.model_dump() for c in read_cases(cases)] if isinstance(cases, str) else cases

    @field_validator("cases")
    @classmethod
    def _case_list(cls, cases: list[BenchCase] | None) -> list[BenchCase] | None:
        if cases == []:
            raise ValueError("cases is empty: give at least one {env_id, instruction} case")
        return None if cases is None else _known_envs(cases, "cases")

    @field_validator("cases_csv")
    @classmethod
    def _csv_cases(cls, text: str | None) -> str | None:
        if text is not None:
            _known_envs(parse_cases(text, "cases_csv"), "cases_csv")
        return text

    @field_validator("llm", "vlm")
    @classmethod
    def _an_llm(cls, value: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
        from langmarl.llm.config import coerce_llm

        coerce_llm(value)  # a ConfigError names the preset or file that is not there
        return value

    @model_validator(mode="after")
    def _one_source_of_cases(self) -> BenchConfig:
        if (self.cases is None) == (self.cases_csv is None):
            raise ValueError(
                "give the cases once: `cases` (a list or a CSV file) or `cases_csv` (CSV text)"
                if self.cases is not None
                else "no cases: set `cases` (a list of {env_id, instruction} or a CSV file) "
                "or `cases_csv` (CSV text with header env_id,instruction,category,difficulty)"
            )
        for index, case in enumerate(self.case_list()):
            try:
                self.case_session(case, Path(self.runs_dir))
            except (ConfigError, ValidationError) as exc:
                raise ValueError(f"session, for case {index} ({case.env_id}): {exc}") from None
        return self

    def case_list(self) -> list[BenchCase]:
        """The cases to run, in order (the first ``limit`` of them)."""
        cases = self.cases or []
        if self.cases_csv is not None:
            cases = parse_cases(self.cases_csv, "cases_csv")
        return cases[: self.limit]

    def case_session(self, case: BenchCase, bench_dir: Path) -> LoopConfig:
        """The session settings of ``case``: :attr:`session` on its env, placed in
        ``bench_dir`` (each session under a new id), with :attr:`seed` if set.

        Raises:
            ValidationError: if the settings do not hold on the case's env.
        """
        data = self.session.model_dump(exclude_unset=True)
        data.update(env_id=case.env_id, runs_dir=str(bench_dir))
        if case.check:
            data["check"] = case.check
        if self.seed is not None:
            data["seed"] = self.seed
        return LoopConfig.model_validate(data)

    def record(self) -> dict[str, Any]:
        """The config as ``run.json`` keeps it: the cases inline, the session settings
        given (the defaults are LoopConfig's)."""
        data = self.model_dump(mode="json", exclude={"cases_csv"})
        session = self.session.model_dump(mode="json", exclude_unset=True)
        return data | {"cases": [c.model_dump() for c in self.case_list()], "session": session}


def is_bench_mapping(data: dict[str, Any]) -> bool:
    """Whether a config file's mapping is a bench config (else: a session config)."""
    return any(key in data for key in BENCH_KEYS)


def validate_bench_config(data: dict[str, Any], source: str = "the config") -> None:
    """Check a benchmark's config as ``langmarl p2p bench --config`` would.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    from langmarl.core.validation import validate_model

    validate_model(BenchConfig, data, source)


def summarize(outcomes: list[CaseOutcome]) -> dict[str, dict[str, Any]]:
    """Per group (``all``, ``category=<c>``, ``difficulty=<d>``): cases, success rate, mean score.

    Success is status ``passed``; a case without a score counts as 0 in the mean score.
    """
    groups: dict[str, list[CaseOutcome]] = defaultdict(list)
    for outcome in outcomes:
        groups["all"].append(outcome)
        if outcome.case.category:
            groups[f"category={outcome.case.category}"].append(outcome)
        if outcome.case.difficulty:
            groups[f"difficulty={outcome.case.difficulty}"].append(outcome)
    return {
        name: {
            "cases": len(items),
            "success_rate": sum(o.status == "passed" for o in items) / len(items),
            "mean_score": sum(o.best_score or 0.0 for o in items) / len(items),
        }
        for name, items in groups.items()
    }


def bench_details(run: Path) -> dict[str, Any]:
    """What ``langmarl runs show`` adds for a benchmark: its cases (env, instruction,
    session, status, best score), the summary per group and whether it is complete."""
    try:
        table = load_json_file(run / BENCH_FILE) if (run / BENCH_FILE).is_file() else {}
    except (LangmarlError, OSError):
        table = {}
    table = table if isinstance(table, dict) else {}
    rows = [o for o in table.get("cases", []) if isinstance(o, dict)]
    return {
        "cases": [{**(o.get("case") or {}), **{k: o.get(k) for k in OUTCOME_KEYS}} for o in rows],
        "summary": table.get("summary"),
        "complete": table.get("complete"),
    }
