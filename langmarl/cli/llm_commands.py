"""`langmarl models`, `langmarl chat`, `langmarl serve`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli.common import BASE_URL, PORT, compact_table, console, err_console, key_values

if TYPE_CHECKING:
    from langmarl.llm.server.config import ServeConfig


def register(app: typer.Typer) -> None:
    """Add the LLM commands to ``app``."""
    app.command("models")(models)
    app.command("chat")(chat)
    app.command("serve")(serve)


def models() -> None:
    """List the LLM presets and the embedded model's status."""
    from rich.text import Text

    from langmarl.core.errors import MissingDependencyError
    from langmarl.llm.local import weights
    from langmarl.llm.presets import PRESETS

    table = compact_table("$/M in/out", lead=("preset",), text=("model · about · address",))
    for name, preset in PRESETS.items():
        fields = preset.fields
        model = str(fields["model_string"])
        lines = [model, preset.description, str(fields.get("base_url") or "")]
        prices = (fields.get(f"{way}_price_per_million", 0) for way in ("input", "output"))
        table.add_row(name, "/".join(f"{price:g}" for price in prices),
                      Text("\n".join(line for line in lines if line)))  # fmt: skip
    console.print(table)
    try:
        source = Text(str(weights.gguf_path()))
    except MissingDependencyError as exc:
        source = Text.assemble(("missing", "red"), f" ({exc})")
    ready = ("(ready)", "green") if weights.is_converted() else (
        "(converted on first use, ~30 s)", "yellow")  # fmt: skip
    console.print(f"[bold]Embedded model[/] {weights.MODEL_NAME}")
    cached = Text.assemble(str(weights.converted_dir()), " ", ready)
    console.print(key_values([("  GGUF file:", source), ("  cached copy:", cached)]))


def chat(
    message: str = typer.Argument(..., help="What to ask."),
    llm: str = typer.Option("local", help="Preset name or LLM config file."),
    system: str = typer.Option("", help="System prompt."),
    max_tokens: int = typer.Option(128, min=1, help="Reply length limit."),
    base_url: str | None = BASE_URL,
    port: int | None = PORT,
) -> None:
    """Ask a model one question and print the reply (the embedded model by default)."""
    from langmarl.llm.client import LLMClient
    from langmarl.llm.presets import get_llm_config

    client = LLMClient(get_llm_config(llm, base_url, port), role="chat")
    with console.status(f"Asking {client.config.name} (the first use loads the model)…"):
        reply = client.chat(system, message, max_tokens=max_tokens)
    console.print(f"[bold]{client.config.name}:[/] {reply}", highlight=False)
    console.print(f"[dim]{client.tracker.get_summary_string()}[/]", highlight=False)


DEFAULT_SERVE_PORT = 8000
"""The port the ``langmarl-serve`` preset points at."""


def _serve_default(name: str) -> Any:
    from langmarl.llm.server.config import ServeConfig

    return ServeConfig.model_fields[name].default


def _require_server() -> None:
    """Check for the HTTP server's packages before anything else is started."""
    from langmarl.core.errors import MissingDependencyError

    for package in ("fastapi", "uvicorn"):
        try:
            __import__(package)
        except ImportError:
            raise MissingDependencyError(package, "server", "`langmarl serve`") from None


def serve(
    model: str = typer.Option(
        "local",
        help="The causal LM to serve: 'local' (the embedded SmolLM2), a model directory, a "
        "weight-space checkpoint's agent folder (runs/X/checkpoints/step-N/agent-0) or a "
        "Hugging Face hub id.",
    ),
    host: str = typer.Option(
        _serve_default("host"), help="Address to bind; non-loopback needs --api-key."
    ),
    port: int = typer.Option(_serve_default("port"), help="Port (0 picks a free one)."),
    api_key: str | None = typer.Option(
        None, envvar="LANGMARL_SERVE_API_KEY", help="Require this Bearer token from clients."
    ),
    max_body_bytes: int = typer.Option(
        _serve_default("max_body_bytes"), help="Refuse larger request bodies (413)."
    ),
    max_tokens_cap: int = typer.Option(
        _serve_default("max_tokens_cap"), help="Largest max_tokens a request may ask for."
    ),
    request_timeout: float = typer.Option(
        _serve_default("request_timeout_s"),
        "--request-timeout",
        help="Seconds a request may generate before it is stopped (504).",
    ),
    max_queued: int = typer.Option(
        _serve_default("max_queued"), help="Waiting generations beyond which requests get 503."
    ),
) -> None:
    """Serve a causal LM in process (the embedded model by default) over an
    OpenAI-compatible HTTP API."""
    from langmarl.llm.local.models import resolve_model
    from langmarl.llm.server import bind_socket, check_bind

    source = resolve_model(model)  # a path that is no model: one line, before anything loads
    _require_server()
    config = _serve_config(
        model=None if source.kind == "embedded" else model,
        host=host,
        port=port,
        api_key=api_key,
        max_body_bytes=max_body_bytes,
        max_tokens_cap=max_tokens_cap,
        request_timeout_s=request_timeout,
        max_queued=max_queued,
    )
    check_bind(config.host, config.api_key)
    sock = bind_socket(config.host, config.port)  # before the model loads: fail fast
    with console.status(f"Loading {source.label}…"):
        from langmarl.llm.server.app import local_backend
        from langmarl.llm.server.app import serve as run_server

        backend = local_backend(config)
        backend.engine.start()
    _announce(source.label, config.host, sock.getsockname()[1])
    run_server(config, backend, sock)


def _announce(label: str, host: str, port: int) -> None:
    """Where the server listens, and how a client names it when the port is not the
    default."""
    shown = f"[{host}]" if ":" in host else host
    console.print(f"Serving {label} at http://{shown}:{port}/v1 (Ctrl-C stops)", highlight=False)
    if port != DEFAULT_SERVE_PORT:
        console.print(f"Clients: --llm langmarl-serve --port {port}", highlight=False)


def _serve_config(**options: Any) -> ServeConfig:
    """The server's config from CLI options; a bad value is one line and exit code 2."""
    from pydantic import ValidationError

    from langmarl.llm.server.config import ServeConfig

    try:
        return ServeConfig(**options)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        option = "--" + "-".join(str(part) for part in error["loc"]).replace("_", "-")
        where = f"{option} {error['input']}: " if error["loc"] else ""
        err_console.print(f"error: {where}{error['msg']}", highlight=False, markup=False)
        raise typer.Exit(2) from None
