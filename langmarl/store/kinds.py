"""Kinds of run: one registered :class:`RunKindSpec` per kind, the one place each fact lives.

Gymnasium's ``EnvSpec`` is the model: a kind is registered once, by name, and everything that
handles runs (the store and its catalog, plots, jobs, the CLI, the dashboard's API and pages)
asks the registry instead of keeping its own table. The pages get the facts over HTTP
(``GET /api/kinds``), so no JavaScript copy exists either.

What only a kind's own package knows (how to evaluate a run, draw its curves, check a job's
config, read its files for the dashboard) is named by an *entry point*, ``"module:attribute"``
imported when first used (or the object itself): the store depends on no space. A kind
without a plotter is drawn from its ``metrics.jsonl``; one without an evaluator says what to
look at instead.

Adding a kind of run::

    from langmarl.store.kinds import RunKindSpec, register

    register(RunKindSpec(name="my_kind", title="my trainer", unit="step",
                         evaluate="my_package.eval:evaluate_run"))  # returns a HeldoutResult

and its trainer writes its runs with ``RunDir(path).start("my_kind", config)``. The built-in
kinds are registered below, in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from langmarl.core.entry_points import EntryPoint, load_entry_point
from langmarl.core.errors import ConfigError

DEFAULT_RESUME_HINT = "run the same command with --resume latest to continue it"
View = Literal["language", "weight", "reward", "metrics"]
"""Which dashboard view shows a kind: language (policies, trajectories), weight
(checkpoints, held-out samples), reward (iterations, judgments, videos), metrics (its curves
and events only)."""
Unit = Literal["iteration", "step", "case"]


@dataclass(frozen=True)
class EvalRequest:
    """What ``langmarl eval RUN`` asks of a kind's evaluator."""

    split: str = "test"
    iteration: int | None = None
    """The iteration (or step) whose policy is evaluated; None: the newest."""
    episodes: int | None = None
    """At most this many held-out tasks (or examples); None: all."""


class HeldoutResult(Protocol):
    """What a kind's ``evaluate`` entry point returns: a typed result (a dataclass or a
    model; language: :class:`~langmarl.trainer.evaluation.HeldoutComparison`, weight space:
    :class:`~langmarl.magrpo.heldout.HeldoutReport`) that can say itself in one line."""

    def headline(self) -> str:
        """``Held-out reward: 0.246 → 0.936 (n=20 …)``: the result in one line."""
        ...


@dataclass(frozen=True)
class RunKindSpec:
    """Everything langmarl knows about one kind of run.

    Run fields (what ``run.json`` and ``metrics.jsonl`` hold) are read by name; entry points
    are objects or ``"module:attribute"`` strings, imported on first use.
    """

    name: str
    """The one name: ``run.json``'s ``kind``, the job kind, the dashboard's filter."""
    title: str
    """Shown beside the name (``weight space, MAGRPO``)."""
    view: View = "metrics"
    unit: Unit = "step"
    """What one line of ``metrics.jsonl`` is; every kind numbers them from 1."""
    score_key: str = "reward_mean"
    """The ``metrics.jsonl`` key of the kind's main curve (the runs list's sparkline)."""
    score_label: str = "last reward"
    """What the runs list's score is, in words."""
    best_field: str | None = None
    """A ``run.json`` field holding the score the runs list shows (None: the last metrics
    line's :attr:`score_key`)."""
    done_field: str | None = None
    """A ``run.json`` field counting finished units (None: the last metrics line's step)."""
    target_field: str | None = None
    """A ``run.json`` field with the number of units planned, if the kind records one."""
    resume_hint: str = DEFAULT_RESUME_HINT
    """What the error of a killed run says to do (``{path}``: the run directory)."""
    command: tuple[str, ...] = ()
    """The ``langmarl`` sub-command that trains it; empty: it cannot be started as a job."""
    config_flag: str | None = None
    """How that command takes its config file (None: as its first argument)."""
    resume_command: tuple[str, ...] = ()
    """The ``langmarl`` command that continues a started run (``{config}``: the config file,
    ``{run_dir}``: the run); empty: :attr:`command` itself resumes. A job retried after its
    worker died runs it."""
    needs_intent: bool = False
    """Whether the command takes a behaviour intent before its config (reward space)."""
    validate_config: EntryPoint | None = None
    """Entry point ``(config: dict) -> None`` raising ConfigError, as the command checks it."""
    evaluate: EntryPoint | None = None
    """Entry point ``(run_dir: Path, request: EvalRequest) -> HeldoutResult`` for ``langmarl
    eval``: it evaluates the run, saves the result in it and returns it typed; callers (the
    CLI, a job, the dashboard) only render it."""
    no_eval: str = "its curves: `langmarl plot {run}`"
    """What to look at instead, for a kind without :attr:`evaluate`."""
    plot: EntryPoint | None = None
    """Entry point of its :class:`langmarl.plots.series.RunKind` (None: the metrics plot)."""
    heldout: EntryPoint | None = None
    """Entry point ``(run_dir: Path) -> float | None``: the run's held-out score, if it has
    one; the runs list then shows it (labelled ``held-out``) instead of the training score."""
    details: EntryPoint | None = None
    """Entry point ``(run_dir: Path) -> dataclass | dict`` of what ``langmarl runs show`` and
    the run page add (language: :class:`~langmarl.trainer.run_files.LanguageDetails`, weight
    space: :class:`~langmarl.magrpo.heldout.WeightDetails`), merged into the run's summary."""
    reader: EntryPoint | None = None
    """Entry point ``(run_dir: Path) -> object`` reading the kind's own files for its
    dashboard view (reward space: the session record)."""
    analyze: EntryPoint | None = None
    """Entry point ``(run_dir: Path) -> Iterator[tuple[str, Any]]`` analysing a run step by
    step (``(step, JSON-ready result)`` as each completes, the last ``("analysis", ...)``
    once written), streamed by ``POST /api/runs/{id}/analyze`` (reward space: the session
    analysis)."""
    catalogs: dict[str, EntryPoint] = field(default_factory=dict)
    """Listings the kind's space offers beside its runs, by name, each an entry point
    ``() -> list[dict]`` (reward space: ``envs``, ``reward-templates``), served at
    ``GET /api/<name>``."""
    sections: tuple[str, ...] = ()
    """Extra dashboard sections beyond the view's own (``parl_curves``)."""
    aliases: tuple[str, ...] = ()
    """Older names still read (a run written as ``p2p_session`` is a ``p2p`` run)."""

    def public(self) -> dict[str, Any]:
        """The facts the dashboard's pages use (``GET /api/kinds``): every field but the
        entry points."""
        facts = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ENTRIES}
        facts["catalogs"] = sorted(self.catalogs)
        return facts | {"jobs": bool(self.command), "evaluates": self.evaluate is not None}


ENTRIES = (
    "validate_config", "evaluate", "plot", "heldout", "details", "reader", "analyze", "catalogs",
)  # fmt: skip
"""The fields of a :class:`RunKindSpec` that are entry points (code, not facts)."""


_REGISTRY: dict[str, RunKindSpec] = {}
_ALIASES: dict[str, str] = {}


def register(spec: RunKindSpec, replace: bool = False) -> RunKindSpec:
    """Add ``spec`` to the registry (``replace``: over a kind of the same name).

    Raises:
        ConfigError: if the name or an alias is taken and ``replace`` is false.
    """
    taken = [n for n in (spec.name, *spec.aliases) if n in _REGISTRY or n in _ALIASES]
    if taken and not replace:
        raise ConfigError(f"run kind {taken[0]!r} is registered already: pick another name")
    unregister(spec.name)
    _REGISTRY[spec.name] = spec
    _ALIASES.update(dict.fromkeys(spec.aliases, spec.name))
    return spec


def unregister(name: str) -> None:
    """Remove kind ``name`` and its aliases (nothing if it is not registered)."""
    spec = _REGISTRY.pop(name, None)
    for alias in spec.aliases if spec else ():
        _ALIASES.pop(alias, None)


def find(name: str | None) -> RunKindSpec | None:
    """The kind called ``name`` (or an alias of it), or None."""
    if name is None:
        return None
    return _REGISTRY.get(_ALIASES.get(name, name))


def get(name: str) -> RunKindSpec:
    """The kind called ``name`` (or an alias of it).

    Raises:
        ConfigError: naming the registered kinds, if there is none by that name.
    """
    spec = find(name)
    if spec is None:
        from langmarl.core.validation import did_you_mean

        raise ConfigError(
            f"unknown run kind {name!r}.{did_you_mean(name, list(_REGISTRY))} "
            f"Kinds: {', '.join(_REGISTRY)}"
        )
    return spec


def all_kinds() -> tuple[RunKindSpec, ...]:
    """Every registered kind, in registration order."""
    return tuple(_REGISTRY.values())


def names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def load(entry: EntryPoint) -> Any:
    """The object an entry point names (itself, if it is not a string).

    Raises:
        ConfigError: if the module or the attribute does not exist.
    """
    return load_entry_point(entry, "a run kind's entry point")


def resume_hint(kind: str | None, path: Path) -> str:
    """How to continue a killed run of ``kind`` in ``path``."""
    spec = find(kind)
    return (spec.resume_hint if spec else DEFAULT_RESUME_HINT).format(path=path)


# -- the built-in kinds ---------------------------------------------------------------------
WEIGHT_READER = "langmarl.magrpo.records:WeightRunFiles"
WEIGHT_DETAILS = "langmarl.magrpo.heldout:weight_details"
LANGUAGE = RunKindSpec(
    "language", "language space", view="language", unit="iteration", score_key="avg_reward",
    score_label="best reward", best_field="best_reward", done_field="completed_iterations",
    target_field="target_iterations",
    resume_hint="train again with the same config and run id to resume it",
    command=("train",), validate_config="langmarl.config.loading:validate_config",
    evaluate="langmarl.trainer.evaluation:evaluate_language",
    plot="langmarl.plots.language:KIND", details="langmarl.trainer.run_files:language_details",
    heldout="langmarl.store.catalog:language_heldout",
)  # fmt: skip
MAGRPO = RunKindSpec(
    "magrpo", "weight space, MAGRPO", view="weight", unit="step", target_field="total_steps",
    resume_hint="continue it with `langmarl magrpo train RUN_FILE --resume latest`",
    command=("magrpo", "train"), validate_config="langmarl.magrpo.run:validate_run_config",
    resume_command=("magrpo", "train", "{config}", "--resume", "latest"),
    evaluate="langmarl.magrpo.heldout:evaluate_weights", plot="langmarl.plots.weight:KIND",
    heldout="langmarl.store.catalog:weight_heldout",
    details=WEIGHT_DETAILS, reader=WEIGHT_READER,
)  # fmt: skip

for _spec in (
    LANGUAGE,
    replace(
        LANGUAGE, name="parl_language", title="PARL, language space", command=("parl", "train"),
        resume_hint="run `langmarl parl train` again with the same config to resume it",
        validate_config="langmarl.parl.language:validate_config",
    ),
    MAGRPO,
    replace(MAGRPO, name="iac", title="weight space, IAC"),
    replace(MAGRPO, name="maac", title="weight space, MAAC"),
    RunKindSpec(
        "parl_grpo", "PARL, orchestrator GRPO", view="weight", unit="step",
        score_key="total_reward", target_field="total_steps",
        resume_hint="continue it with `langmarl parl grpo --resume latest` (same config)",
        command=("parl", "grpo"), config_flag="--config",
        resume_command=("parl", "grpo", "--config", "{config}", "--resume", "latest"),
        validate_config="langmarl.parl.grpo_config:validate_grpo_file",
        no_eval="its curves: `langmarl parl curves {run}`", plot="langmarl.plots.parl:KIND",
        details=WEIGHT_DETAILS, reader=WEIGHT_READER,
        sections=("parl_curves",),
    ),
    RunKindSpec(
        "p2p", "reward space, Prompt2Policy", view="reward", unit="iteration",
        score_key="intent_score", score_label="best intent score", best_field="best_score",
        done_field="iterations", resume_hint="continue it with `langmarl p2p resume {path}`",
        command=("p2p", "run"), config_flag="--config", needs_intent=True,
        resume_command=("p2p", "resume", "{run_dir}"),
        validate_config="langmarl.p2p.session.config:validate_loop_config",
        no_eval="its iterations' policies: `langmarl p2p play {run}/iter_N`",
        plot="langmarl.plots.reward:SESSION_KIND",
        details="langmarl.p2p.session.records:session_details",
        reader="langmarl.p2p.session.records:SessionRecord", aliases=("p2p_session",),
        analyze="langmarl.p2p.analysis.analyze:analysis_events",
        catalogs={"envs": "langmarl.p2p.reward.env_specs:env_catalog",
                  "reward-templates": "langmarl.p2p.agents.author:reward_templates"},
    ),
    RunKindSpec(
        "p2p_train", "reward space, one PPO run of a session", unit="step",
        score_key="mean_return", command=("p2p", "train-run"), config_flag="--config",
        resume_hint="a session trains it again when it resumes (`langmarl p2p resume`)",
        validate_config="langmarl.p2p.learner.train_job:validate_train_job",
        no_eval="its session's iteration: `langmarl p2p play {run}`",
    ),
    RunKindSpec(
        "p2p_bench", "reward space, benchmark (a session per case)", unit="case",
        score_key="mean_score", score_label="mean best score", best_field="mean_score",
        done_field="cases_done", target_field="cases_total",
        resume_hint="continue it: `langmarl p2p bench` with its config (the same cases) and "
                    "`--runs-dir {path.parent} --run-id {path.name}`",
        command=("p2p", "bench"), config_flag="--config",
        validate_config="langmarl.p2p.bench.cases:validate_bench_config",
        details="langmarl.p2p.bench.cases:bench_details",
        no_eval="its cases' sessions, listed in {run}/bench.json and on the dashboard's "
                "Benchmarks page",
    ),
):  # fmt: skip
    register(_spec)
