"""`langmarl jobs submit|list|status|cancel|logs`: training commands as jobs, on local
processes (cores pinned per job) or a Ray cluster."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli.common import SET_OPTION_HELP, console, given_runs_dir, parse_overrides
from langmarl.core.runs_dir import DEFAULT_RUNS_DIR

if TYPE_CHECKING:
    from langmarl.jobs import Backend, JobRecord

RUNS_DIR = typer.Option(
    Path(DEFAULT_RUNS_DIR), "--runs-dir", help="Where runs land and jobs are recorded."
)
"""``--runs-dir``: a job's run lands in ``<runs-dir>/<job id>``."""
JOBS_DIR = typer.Option(
    None, "--runs-dir", help=f"Where the jobs were submitted to (default: {DEFAULT_RUNS_DIR}/)."
)
"""``--runs-dir`` of the commands that read jobs: one given must exist."""
STATE_COLOURS = {"queued": "cyan", "running": "yellow", "completed": "green", "failed": "red",
                 "cancelled": "magenta"}  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add the ``jobs`` command group to ``app``."""
    group = typer.Typer(help="Jobs: training commands on local processes or a Ray cluster.")
    group.command("submit")(submit)
    group.command("list")(list_jobs)
    group.command("status")(status)
    group.command("cancel")(cancel)
    group.command("logs")(logs)
    app.add_typer(group, name="jobs")


def _backend(runs_dir: Path, backend: str = "local", address: str | None = None) -> Backend:
    from langmarl.jobs import open_backend

    return open_backend(backend, runs_dir, address=address)


def _jobs_dir(runs_dir: Path | None) -> Path:
    """``--runs-dir`` if given (it must be a directory), else ``runs/``.

    Raises:
        ConfigError: if the directory given does not exist.
    """
    return given_runs_dir(runs_dir) or Path(DEFAULT_RUNS_DIR)


def _for_job(runs_dir: Path | None, job_id: str) -> Backend:
    """The backend that ran ``job_id`` (Ray: connected to the address it was sent to)."""
    from langmarl.jobs import JobStore

    runs_dir = _jobs_dir(runs_dir)
    record = JobStore(runs_dir).read(job_id)
    return _backend(runs_dir, record.backend, record.ray.get("address"))


def submit(
    kind: str = typer.Argument(
        ...,
        help="The kind of run, which names the command: language, magrpo, p2p, ... "
        "(a wrong one lists every kind a job can start).",
    ),
    config: str | None = typer.Argument(None, help="Config file (JSON or YAML)."),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    seed: int | None = typer.Option(None, "--seed", help="The run's seed."),
    cpus: int = typer.Option(1, "--cpus", min=1, help="Cores for the job."),
    memory_gb: float | None = typer.Option(None, "--memory-gb", help="Memory hint (Ray)."),
    name: str | None = typer.Option(None, "--name", help="A label; the job id starts with it."),
    intent: str | None = typer.Option(None, "--intent", help="p2p: the behaviour wanted."),
    backend: str = typer.Option("local", "--backend", help="local or ray."),
    address: str | None = typer.Option(
        None, "--address", help="Ray: 'auto' or ray://host:10001 (default: a local cluster)."
    ),
    runs_dir: Path = RUNS_DIR,
    wait: bool = typer.Option(False, "--wait", help="Wait for the job to end."),
) -> None:
    """Validate a config and run its training command as a job."""
    from langmarl.core.errors import ConfigError
    from langmarl.jobs import parse_spec

    if backend == "ray" and address is None and not wait:
        raise ConfigError(
            "--backend ray without --address starts a Ray that ends with this command, and its "
            "jobs with it: add --wait, or give --address auto / ray://HOST:10001"
        )

    from langmarl.cli.config_kinds import require_job_config_kind
    from langmarl.config.loading import read_mapping
    from langmarl.jobs.environment import key_variables, known_key_variables

    if config:
        require_job_config_kind(config, kind)
    overrides = parse_overrides(set_)
    read = read_mapping(Path(config)) if config else {}
    # the operator submits: the job gets the keys its config reads and every provider's
    passed = known_key_variables() | set(key_variables(read)) | set(key_variables(overrides))
    fields = {"kind": kind, "config": config or {}, "overrides": overrides,
              "seed": seed, "resources": {"cpus": cpus, "memory_gb": memory_gb},
              "name": name, "intent": intent, "env": sorted(passed)}  # fmt: skip
    spec = parse_spec(fields, "the command line")
    jobs = _backend(runs_dir, backend, address)
    job_id = jobs.submit(spec)
    console.print(f"job [bold]{job_id}[/] submitted ({backend}); run directory "
                  f"{runs_dir / job_id}")  # fmt: skip
    if wait:
        record = jobs.wait(job_id)
        _print_record(record)
        if record.state != "completed":
            raise typer.Exit(1)


def list_jobs(
    runs_dir: Path | None = JOBS_DIR,
) -> None:
    """The jobs of a runs directory, newest first."""
    from rich.text import Text

    from langmarl.jobs import LocalBackend

    root = _jobs_dir(runs_dir)
    records = LocalBackend(root).list() if root.is_dir() else []
    if not records:
        console.print(f"No jobs in {root}/.", highlight=False)
        return
    table = _jobs_table()
    for record in records:
        submitted = time.strftime("%m-%d %H:%M", time.localtime(record.submitted_at))
        cores = ",".join(map(str, record.cores))
        table.add_row(
            record.job_id, record.spec.kind, Text(record.state, style=STATE_COLOURS[record.state]),
            f"{record.backend} {cores}".strip(), submitted,
        )  # fmt: skip
    console.print(table)
    for record in records:  # below the table, where an error has the width to wrap in
        if record.error:
            console.print(Text(f"{record.job_id}: {record.error.splitlines()[0]}"))


def _jobs_table() -> Any:
    """The job list's table: ids fold only when longer than the room left, the other
    columns stay whole."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("job", overflow="fold")
    for header in ("kind", "state", "backend", "submitted"):
        table.add_column(header, no_wrap=True)
    return table


def status(
    job_id: str = typer.Argument(..., help="The job id (see `langmarl jobs list`)."),
    runs_dir: Path | None = JOBS_DIR,
    as_json: bool = typer.Option(False, "--json", help="Print the job record as JSON."),
) -> None:
    """A job's state, run directory, exit code and error."""
    record = _for_job(runs_dir, job_id).status(job_id)
    if as_json:
        console.print_json(record.model_dump_json())
    else:
        _print_record(record)


def cancel(
    job_id: str = typer.Argument(..., help="The job id."),
    runs_dir: Path | None = JOBS_DIR,
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait until it has stopped."),
) -> None:
    """Stop a job gracefully: its run ends `cancelled`, its files intact."""
    jobs = _for_job(runs_dir, job_id)
    record = jobs.cancel(job_id)
    if wait:
        record = jobs.wait(job_id)
    _print_record(record)


def logs(
    job_id: str = typer.Argument(..., help="The job id."),
    runs_dir: Path | None = JOBS_DIR,
    tail: int | None = typer.Option(None, "--tail", min=0, help="Only the last N lines."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until it ends."),
) -> None:
    """A job's output (stdout and stderr of its command)."""
    import sys

    from langmarl.core.errors import BackendBusyError

    jobs = _for_job(runs_dir, job_id)
    text = jobs.logs(job_id, tail=tail)
    sys.stdout.write(text)
    shown = len(jobs.logs(job_id)) if tail is not None else len(text)
    while follow:
        try:
            done = jobs.status(job_id).done
            text = jobs.logs(job_id)
        except BackendBusyError:  # a busy cluster: following means waiting for it
            time.sleep(0.5)
            continue
        sys.stdout.write(text[shown:])
        sys.stdout.flush()
        shown = len(text)
        if done:
            break
        time.sleep(0.5)


def _print_record(record: JobRecord) -> None:
    colour = STATE_COLOURS[record.state]
    console.print(f"{record.job_id}: [{colour}]{record.state}[/] ({record.spec.kind}, "
                  f"{record.backend})")  # fmt: skip
    console.print(f"run directory: {record.run_dir}")
    if record.exit_code is not None:
        console.print(f"exit code: {record.exit_code}")
    if record.error:
        console.print(f"error: {record.error}", markup=False)
