"""`langmarl models`, `langmarl chat`, `langmarl serve`."""

from __future__ import annotations

import typer

from langmarl.cli.common import console


def register(app: typer.Typer) -> None:
    """Add the LLM commands to ``app``."""
    app.command("models")(models)
    app.command("chat")(chat)
    app.command("serve")(serve)


def models() -> None:
    """List the LLM presets and the embedded model's status."""
    from rich.table import Table

    from langmarl.core.errors import MissingDependencyError
    from langmarl.llm.local import weights
    from langmarl.llm.presets import PRESETS

    table = Table("preset", "model", "endpoint", "$/M in", "$/M out", "description")
    for name, preset in PRESETS.items():
        fields = preset.fields
        table.add_row(
            name,
            str(fields["model_string"]),
            "embedded"
            if fields.get("provider") == "local"
            else str(fields.get("base_url", "OpenAI")),
            f"{fields.get('input_price_per_million', 0):g}",
            f"{fields.get('output_price_per_million', 0):g}",
            preset.description,
        )
    console.print(table)
    try:
        source = str(weights.gguf_path())
    except MissingDependencyError as exc:
        source = f"[red]missing[/] ({exc})"
    converted = weights.is_converted()
    console.print(f"[bold]Embedded model[/] {weights.MODEL_NAME}")
    console.print(f"  GGUF file:   {source}")
    console.print(
        f"  cached copy: {weights.converted_dir()} "
        + ("[green](ready)[/]" if converted else "[yellow](converted on first use, ~30 s)[/]")
    )


def chat(
    message: str = typer.Argument(..., help="What to ask."),
    llm: str = typer.Option("local", help="Preset name or LLM config file."),
    system: str = typer.Option("", help="System prompt."),
    max_tokens: int = typer.Option(128, min=1, help="Reply length limit."),
) -> None:
    """Ask a model one question and print the reply (the embedded model by default)."""
    from langmarl.llm.client import LLMClient
    from langmarl.llm.presets import get_llm_config

    client = LLMClient(get_llm_config(llm), role="chat")
    with console.status(f"Asking {client.config.name} (the first use loads the model)…"):
        reply = client.chat(system, message, max_tokens=max_tokens)
    console.print(f"[bold]{client.config.name}:[/] {reply}", highlight=False)
    console.print(f"[dim]{client.tracker.get_summary_string()}[/]", highlight=False)


def serve(
    model: str = typer.Option("local", help="Model to serve (only 'local' is supported)."),
    host: str = typer.Option("127.0.0.1", help="Address to bind; non-loopback needs --api-key."),
    port: int = typer.Option(8000, help="Port."),
    api_key: str | None = typer.Option(
        None, envvar="LANGMARL_SERVE_API_KEY", help="Require this Bearer token from clients."
    ),
) -> None:
    """Serve the embedded model over an OpenAI-compatible HTTP API."""
    from langmarl.core.errors import ConfigError
    from langmarl.llm import serve as serving

    if model != "local":
        raise ConfigError(f"Only the embedded model can be served; got --model {model!r}.")
    serving.check_bind(host, api_key)
    with console.status("Loading the embedded model…"):
        from langmarl.llm.local.backend import LocalBackend
        from langmarl.llm.presets import preset_config

        backend = LocalBackend(preset_config("local"))
        backend.engine.start()
    console.print(f"Serving {model} at http://{host}:{port}/v1 (Ctrl-C stops)")
    serving.serve(host, port, api_key, backend)
