"""The dashboard's defaults, in one place: the CLI, the server and the docs read them here
(importing this needs no FastAPI)."""

from __future__ import annotations

from langmarl.core.runs_dir import DEFAULT_RUNS_DIR

__all__ = [
    "DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_RUNS_DIR", "MAX_BODY_BYTES", "TOKEN_ENV", "VLM_ENV",
]  # fmt: skip
DEFAULT_HOST = "127.0.0.1"
"""Loopback: any other address needs a token."""
DEFAULT_PORT = 8765
TOKEN_ENV = "LANGMARL_DASHBOARD_TOKEN"
"""The environment variable ``langmarl dashboard`` reads the token from."""
VLM_ENV = "LANGMARL_DASHBOARD_VLM"
"""The multimodal model ``/api/vlm`` forwards to (``langmarl dashboard --vlm``): a preset name
or an LLM config file."""
MAX_BODY_BYTES = 1 << 20
"""Largest request body (1 MiB; a job's config inline is a few KB), refused before reading."""
