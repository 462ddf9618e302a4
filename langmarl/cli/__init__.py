"""The ``langmarl`` command: one entry point, one module per group of sub-commands.

Each module in this package defines ``register(app)``, which adds its commands to the root
Typer app; ``COMMAND_MODULES`` lists them. Heavy imports stay inside the command functions so
``langmarl --help`` is instant.
"""

from __future__ import annotations

import importlib
from typing import NoReturn

import typer

from langmarl.cli.common import setup_logging
from langmarl.cli.help_text import unwrap_help

COMMAND_MODULES = [
    "langmarl.cli.llm_commands",
    "langmarl.cli.config_commands",
    "langmarl.cli.magrpo_commands",
    "langmarl.cli.p2p_commands",
    "langmarl.cli.train_commands",
    "langmarl.cli.eval_commands",
    "langmarl.cli.runs_commands",
    "langmarl.cli.parl_commands",
    "langmarl.cli.plot_commands",
    "langmarl.cli.dashboard_commands",
    "langmarl.cli.jobs_commands",
]

INTERRUPTED_EXIT_CODE = 130
"""Exit code of a command ended by Ctrl-C (128 + SIGINT)."""
CANCELLED_EXIT_CODE = 143
"""Exit code of a command ended by SIGTERM (128 + 15, the shell's convention)."""
INTERRUPT_MESSAGES = {
    INTERRUPTED_EXIT_CODE: "stopped (Ctrl-C); a run in progress is saved as `stopped`",
    CANCELLED_EXIT_CODE: "cancelled (SIGTERM); a run in progress is saved as `cancelled`",
}
"""The line a command that trains a run ends with when interrupted."""
INTERRUPT_ONLY_MESSAGES = {
    INTERRUPTED_EXIT_CODE: "stopped (Ctrl-C)",
    CANCELLED_EXIT_CODE: "cancelled (SIGTERM)",
}
"""The line any other command (``dashboard``, ``eval``, ``serve``…) ends with: it has no
run in progress to save, so it says only that it stopped."""
OTHER_TRAINING_COMMANDS = (("p2p", "bench"),)
"""Commands that train runs besides each run kind's ``command`` and ``resume_command``."""


def build_app() -> typer.Typer:
    """The root Typer app with every command group registered."""
    app = typer.Typer(
        name="langmarl",
        help="Reinforcement learning for teams of LLM agents.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def root(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug messages."),
        version: bool = typer.Option(
            False, "--version", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ) -> None:
        from langmarl.core.environment import check_environment

        setup_logging(verbose)
        check_environment()

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)
    unwrap_help(app)
    return app


def training_commands() -> set[tuple[str, ...]]:
    """The commands that run a training run (``("magrpo", "train")``, ``("p2p", "resume")``…):
    each run kind's command and resume command (:mod:`langmarl.store.kinds`) and
    :data:`OTHER_TRAINING_COMMANDS`."""
    from itertools import takewhile

    from langmarl.store import kinds

    found: set[tuple[str, ...]] = set(OTHER_TRAINING_COMMANDS)
    for spec in kinds.all_kinds():
        for command in (spec.command, spec.resume_command):
            words = tuple(takewhile(lambda word: not word.startswith(("-", "{")), command))
            if words:
                found.add(words)
    return found


def interrupt_message(code: int, argv: list[str]) -> str:
    """The line an interrupted ``langmarl ARGV`` ends with: only a command that trains a run
    says that a run in progress is saved. The command is read from ARGV's first words (no
    option of the root or of a training command's group takes a value)."""
    words = tuple(arg for arg in argv if not arg.startswith("-"))
    training = any(words[: len(command)] == command for command in training_commands())
    return (INTERRUPT_MESSAGES if training else INTERRUPT_ONLY_MESSAGES)[code]


def _print_version(value: bool) -> None:
    if value:
        from langmarl.core.version import __version__

        typer.echo(f"langmarl {__version__}")
        raise typer.Exit()


def main() -> None:
    """Console-script entry point; turns langmarl errors into one clear line and exit 1.
    Ctrl-C ends a command's run ``stopped`` (exit 130), SIGTERM ``cancelled`` (exit 143),
    its files intact, whichever handler caught the interrupt."""
    from langmarl.cli.common import run_app
    from langmarl.core.signals import interrupt_requested, stop_on_signals, termination_requested

    stop_on_signals()
    try:
        run_app(build_app())
    except (SystemExit, KeyboardInterrupt):
        if interrupt_requested():
            cancelled = termination_requested()
            exit_interrupted(CANCELLED_EXIT_CODE if cancelled else INTERRUPTED_EXIT_CODE)
        raise


def exit_interrupted(code: int) -> NoReturn:
    """Say how the command ended in one line, flush, and leave without interpreter shutdown.

    Why ``os._exit``: the embedded model's worker is a daemon thread that may be inside
    torch's ``generate`` (or tokenizers' pool) when the interrupt arrives. At shutdown Python
    ends such a thread with ``pthread_exit`` as soon as it asks for the GIL, and that forced
    unwind through torch's C++ frames calls ``std::terminate`` ("terminate called without an
    active exception", exit 134). By now the interrupt has unwound the command, so its run is
    recorded; nothing is left to do but flush.
    """
    import logging
    import os
    import sys

    from langmarl.cli.common import err_console

    message = interrupt_message(code, sys.argv[1:])
    err_console.print(message, markup=False, highlight=False, soft_wrap=True)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)
