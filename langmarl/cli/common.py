"""Helpers shared by the CLI modules: logging, error display, overrides, the console."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from langmarl.core.errors import ConfigError, LangmarlError

console = Console()
err_console = Console(stderr=True)


HTTP_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "urllib3")
"""Libraries that log every request at INFO ("HTTP Request: POST ..."; openai 3 sends its
requests through httpx2): shown only with -v."""


QUIET_LOGGERS = ("math_verify",)
"""Libraries whose warnings are noise in a run (math-verify warns, once per process, that
its timeout is off when it is called outside the main thread, as the env's workers do):
shown only with -v."""

THIRD_PARTY_QUIET_ENV = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error"}
"""Set (unless already set) without -v, before transformers loads: its tqdm bars (weights
loading, downloads) would tear rich's progress display, and its deprecation notices go to its
own stderr handler, outside logging."""


class ForeignWarningsFilter(logging.Filter):
    """Drop the warnings (``warnings.warn``, routed to the ``py.warnings`` logger) raised
    outside langmarl, e.g. torch's and transformers' FutureWarnings; langmarl's own pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage().startswith(PACKAGE_DIR)  # "path:line: Category: text"


PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
"""Where langmarl's modules live: warnings whose source is elsewhere are foreign."""


class ConsoleLogHandler(logging.Handler):
    """Log lines printed through :data:`err_console` rather than a stream held since start-up.

    Why: a ``StreamHandler`` keeps the ``sys.stderr`` of the moment logging was set up, so
    while a progress bar or spinner is live its lines tore the display (the bars printed
    twice, a line glued onto the spinner). The console looks ``sys.stderr`` up at each line,
    which a live display redirects above itself. On a terminal a line wraps at spaces to its
    width; in a pipe or a log file it stays one line, as scripts read it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err_console.print(
                self.format(record),
                markup=False,
                highlight=False,
                soft_wrap=not err_console.is_terminal,
            )
        except Exception:  # logging must never take the command down
            self.handleError(record)


def setup_logging(verbose: bool) -> None:
    """Log INFO (DEBUG with ``-v``) to stderr, HTTP libraries only from WARNING unless
    ``-v``, and scrub the environment's secrets from every line a root handler prints
    (a run adds its LLM keys while it runs, see :func:`langmarl.core.secrets.redacting_logs`).

    Python warnings go through logging too; without ``-v``, foreign ones are dropped, and
    third-party progress bars and notices are turned off (:data:`THIRD_PARTY_QUIET_ENV`).
    """
    import os

    from langmarl.core.secrets import Redactor, environment_secrets, install_log_redaction

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        handlers=[ConsoleLogHandler()],
    )
    for name in HTTP_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.ERROR)
    logging.captureWarnings(True)
    warnings_logger = logging.getLogger("py.warnings")
    for old in [f for f in warnings_logger.filters if isinstance(f, ForeignWarningsFilter)]:
        warnings_logger.removeFilter(old)
    if not verbose:
        warnings_logger.addFilter(ForeignWarningsFilter())
        for key, value in THIRD_PARTY_QUIET_ENV.items():
            os.environ.setdefault(key, value)
    install_log_redaction(Redactor(environment_secrets()))


def run_app(app: typer.Typer) -> None:
    """Run ``app``; a ``LangmarlError`` becomes one red message (secrets scrubbed) and exit
    code 1, no traceback. On a terminal the message wraps at spaces to its width; anywhere
    else (a log file, a pipe, a test) it stays one line, which scripts read whole."""
    from rich.markup import escape

    from langmarl.core.secrets import Redactor, environment_secrets

    one_line_usage_errors()
    try:
        app()
    except LangmarlError as exc:
        message = escape(Redactor(environment_secrets())(str(exc)))
        err_console.print(
            f"[bold red]error:[/] {message}",
            markup=True,
            highlight=False,
            soft_wrap=not err_console.is_terminal,
        )
        raise SystemExit(1) from None


def one_line_usage_errors() -> None:
    """Print click's usage errors (an unknown option or command, a missing argument, a bad
    value) as every other langmarl error is printed: one ``error:`` line naming the fix,
    instead of typer's boxed "Error" panel. Typer looks its formatter up at call time, so
    replacing it here is enough; a typer without it keeps its own output."""
    try:
        from typer import rich_utils
    except ImportError:  # typer without rich: click's plain "Error: …" lines
        return
    if hasattr(rich_utils, "rich_format_error"):
        setattr(rich_utils, "rich_format_error", _print_usage_error)  # noqa: B010 (typed as
        # typer's vendored click exception, which this module does not import)


def _print_usage_error(error: Any) -> None:
    from rich.markup import escape

    context = getattr(error, "ctx", None)
    hint = f" (see '{context.command_path} --help')" if context is not None else ""
    err_console.print(
        f"[bold red]error:[/] {escape(error.format_message())}{hint}",
        markup=True,
        highlight=False,
        soft_wrap=not err_console.is_terminal,
    )


def parse_overrides(assignments: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}`` (values read as YAML scalars)."""
    from langmarl.config.loading import parse_assignment

    return dict(parse_assignment(item) for item in assignments or [])


SET_OPTION_HELP = "Override a config value: --set key=value (dotted keys, repeatable)."

BASE_URL = typer.Option(
    None, "--base-url", help="Address of the --llm server preset, e.g. http://host:9000/v1."
)
PORT = typer.Option(
    None, "--port", min=1, max=65535, help="--base-url http://127.0.0.1:PORT/v1 (langmarl serve)."
)

RUNS_DIR_HELP = "The directory holding runs (default: runs/)."
RUNS_DIR_SET = typer.Option(
    None, "--runs-dir", help="The directory holding runs (= --set runs_dir=DIR; default: the "
    "config's, runs/)."
)  # fmt: skip
"""``--runs-dir`` of the training commands: an override of the config's ``runs_dir``."""


def with_runs_dir(overrides: dict[str, Any], runs_dir: Path | None) -> dict[str, Any]:
    """``overrides`` with ``runs_dir`` set when ``--runs-dir`` was given."""
    return overrides if runs_dir is None else {**overrides, "runs_dir": str(runs_dir)}


OLD_DIR = typer.Option(None, "--dir", hidden=True, help="Deprecated: use --runs-dir.")
"""``--dir``: the old name of ``--runs-dir``, read for one release (:func:`runs_dir_given`)."""


def runs_dir_given(runs_dir: Any, old: Any) -> Any:
    """``--runs-dir``, or the deprecated ``--dir`` given in its place (one deprecation line);
    for a repeatable option, the directories of both.

    Raises:
        ConfigError: if both name one directory each and they differ.
    """
    from langmarl.core.deprecation import deprecated

    if old is None or old == []:
        return runs_dir
    deprecated("--dir", "`--runs-dir` (the directory holding runs)")
    if runs_dir is None or runs_dir == []:
        return old
    if isinstance(old, list):
        return [*runs_dir, *old]
    if runs_dir != old:
        raise ConfigError(
            f"--runs-dir {str(runs_dir)!r} and --dir {str(old)!r} disagree: give --runs-dir only"
        )
    return runs_dir


CONFIG_ALIAS = typer.Option(None, "--config", help="The config file (same as CONFIG).")
"""``--config FILE``: where a command took its config as an option before CONFIG was
positional, kept so old command lines still work."""


def config_argument(positional: Path | None, option: Path | None) -> Path | None:
    """The config file given as CONFIG or as ``--config`` (they must not disagree).

    Raises:
        ConfigError: if both are given and name different files.
    """
    if positional is not None and option is not None and positional != option:
        raise ConfigError(
            f"two config files given: {str(positional)!r} and --config {str(option)!r}; "
            "pass one (CONFIG, or --config for old command lines)"
        )
    return positional if positional is not None else option


def require_dir(path: Path, what: str, fix: str) -> Path:
    """``path``, if it is a directory: a path given on the command line that names nothing
    is an error, never an empty listing.

    Args:
        path: The directory given.
        what: What names it, e.g. ``--runs-dir`` or ``run directory``.
        fix: What to give instead.

    Raises:
        ConfigError: naming ``what``, the path and ``fix``, if it is not a directory.
    """
    if not path.is_dir():
        state = "is not a directory" if path.exists() else "does not exist"
        raise ConfigError(f"{what} {str(path)!r} {state}: {fix}")
    return path


RUNS_DIR_FIX = "give the directory holding the runs (`langmarl runs` lists those in runs/)"
"""What to do about a ``--runs-dir`` that names no directory."""
RUN_DIR_FIX = "give a run directory as `langmarl runs` lists them, e.g. runs/<run_id>"
"""What to do about a run directory argument that names no directory."""


def given_runs_dir(runs_dir: Path | None) -> Path | None:
    """``--runs-dir`` as given, checked to be a directory (None: not given).

    Raises:
        ConfigError: if it names no directory.
    """
    return None if runs_dir is None else require_dir(runs_dir, "--runs-dir", RUNS_DIR_FIX)


def key_values(rows: Iterable[tuple[str, Any]]) -> Any:
    """A borderless two-column grid of ``label  value`` rows that fits any width: labels
    never wrap; values wrap at spaces, and only a token longer than the room left (a path,
    a URL) is folded. Values are shown as text (no markup)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, value if isinstance(value, Text) else Text(str(value)))
    return grid


def compact_table(
    *numeric: str, text: tuple[str, ...] = (), lead: tuple[str, ...] = (), title: str | None = None
) -> Any:
    """A table that stays readable at 80 columns: no vertical rules, right-aligned numeric
    columns that never shrink below their widest cell (rich would otherwise cut ``0.457``
    to ``0.…``), and ``text`` columns after them that fold to take what room is left.

    Args:
        numeric: Headers of the number columns.
        text: Headers of the free-text columns (folded, placed last).
        lead: Headers of short label columns placed first (not wrapped).
        title: The table's title.
    """
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for header in lead:
        table.add_column(header, no_wrap=True)
    for header in numeric:
        table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
    for header in text:
        table.add_column(header, overflow="fold", ratio=1)
    return table
