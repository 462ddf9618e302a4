"""The ``langmarl`` command: one entry point, one module per group of sub-commands.

Each module in this package defines ``register(app)``, which adds its commands to the root
Typer app; ``COMMAND_MODULES`` lists them. Heavy imports stay inside the command functions so
``langmarl --help`` is instant.
"""

from __future__ import annotations

import importlib

import typer

from langmarl.cli.common import setup_logging

COMMAND_MODULES = [
    "langmarl.cli.llm_commands",
    "langmarl.cli.config_commands",
    "langmarl.cli.magrpo_commands",
    "langmarl.cli.p2p_commands",
    "langmarl.cli.train_commands",
    "langmarl.cli.runs_commands",
    "langmarl.cli.parl_commands",
    "langmarl.cli.plot_commands",
    "langmarl.cli.dashboard_commands",
    "langmarl.cli.jobs_commands",
]

CANCELLED_EXIT_CODE = 143
"""Exit code of a command ended by SIGTERM (128 + 15, the shell's convention)."""


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
    ) -> None:
        setup_logging(verbose)

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)
    return app


def main() -> None:
    """Console-script entry point; turns langmarl errors into one clear line and exit 1.
    SIGTERM ends a training command's run ``cancelled``, its files intact."""
    from langmarl.cli.common import run_app
    from langmarl.store.run import cancel_on_sigterm, termination_requested

    cancel_on_sigterm()
    try:
        run_app(build_app())
    except (SystemExit, KeyboardInterrupt):  # Click turns the interrupt into exit code 130
        if termination_requested():
            raise SystemExit(CANCELLED_EXIT_CODE) from None
        raise
