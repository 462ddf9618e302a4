"""The dashboard's proxy to the multimodal model (the VLM that judges a session's videos),
as the reference system's ``/api/vlm/status``, ``/api/vlm/api/chat`` and
``/api/vlm/api/tags``: a page can ask whether it answers and talk to it without knowing
its address or key.

Which model: ``$LANGMARL_DASHBOARD_VLM`` (:data:`VLM_ENV`), the same forms as a session's
``--vlm`` (a preset name, or an LLM config file); unset, the routes say none is configured.
The endpoint is Ollama-compatible: its OpenAI-style ``base_url`` (``http://host:11434/v1``)
without the trailing ``/v1`` is where ``/api/chat`` and ``/api/tags`` are forwarded. The
config's API key (``api_key_env_var``) is sent upstream as a bearer token and is never
returned: every answer passes the dashboard's redactor with the key added, and the status
names the variable, not its value. Chat answers are not streamed (``stream`` is sent as
false). The routes sit behind the dashboard's token like every ``/api`` route.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.errors import ConfigError
from langmarl.core.secrets import Redactor
from langmarl.llm.config import LLMConfig, load_llm_config
from langmarl.web.defaults import VLM_ENV
from langmarl.web.errors import ApiError
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["vlm"])

STATUS_TIMEOUT_S = 5.0
"""How long the status waits for the endpoint's model list: a page polls it."""


class VlmMessage(BaseModel):
    """One chat message, as Ollama's ``/api/chat`` takes it."""

    model_config = ConfigDict(extra="allow")

    role: str
    """``system``, ``user`` or ``assistant``."""
    content: str = ""
    """The text."""
    images: list[str] | None = None
    """Base64-encoded images (frames of a video)."""


class VlmChatRequest(BaseModel):
    """A chat request for the configured VLM (Ollama's ``/api/chat`` body)."""

    model_config = ConfigDict(extra="forbid")

    messages: list[VlmMessage] = Field(min_length=1)
    """The conversation so far."""
    model: str | None = None
    """The model (None: the configured one)."""
    options: dict[str, Any] | None = None
    """Ollama sampling options (``temperature``, ``num_predict``…)."""
    format: str | dict[str, Any] | None = None
    """``"json"`` or a JSON schema the answer follows."""


def _config() -> LLMConfig | None:
    """The configured VLM (None when :data:`VLM_ENV` is unset).

    Raises:
        ApiError: 500 naming the setting when it names no preset or readable file.
    """
    name = os.environ.get(VLM_ENV, "").strip()
    if not name:
        return None
    try:
        return load_llm_config(name)
    except ConfigError as exc:
        raise ApiError(500, f"{VLM_ENV} does not name an LLM: {exc}",
                       "set it to a preset name or an LLM config file") from None  # fmt: skip


def _require() -> LLMConfig:
    config = _config()
    if config is None:
        raise ApiError(503, "no VLM is configured for this dashboard",
                       f"set {VLM_ENV} (a preset or LLM config file of an Ollama-compatible "
                       "multimodal endpoint) and restart the dashboard")  # fmt: skip
    return config


def _root(config: LLMConfig) -> str:
    """The endpoint's native root: ``base_url`` without a trailing ``/v1``."""
    base = config.endpoint.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _key(config: LLMConfig) -> str | None:
    """The key to send upstream (None when the endpoint needs none and none is set)."""
    try:
        key = config.get_api_key()
    except ValueError:  # required but missing: the upstream answer says so
        return None
    return None if key == "not-needed" else key


def _forward(board: Dashboard, config: LLMConfig, method: str, path: str, **kw: Any) -> Any:
    """The endpoint's JSON answer to ``method path`` (secrets scrubbed).

    Raises:
        ApiError: 502 when it cannot be reached, answers an error or no JSON.
    """
    key = _key(config)
    redact = Redactor([key] if key else [])
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = f"{_root(config)}{path}"
    try:
        response = httpx.request(method, url, headers=headers, **kw)
        data = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ApiError(502, board.redact(redact(f"the VLM at {url} did not answer: {exc}")),
                       "check that the endpoint runs (`ollama serve`) and is "
                       "Ollama-compatible (GET /api/vlm/status)") from None  # fmt: skip
    if response.status_code >= 400:
        said = data.get("error") if isinstance(data, dict) else data
        raise ApiError(502, board.redact(redact(f"the VLM answered {response.status_code}: "
                       f"{said}")), "see the error; GET /api/vlm/status")  # fmt: skip
    return board.scrub(_scrubbed(data, redact))


def _scrubbed(data: Any, redact: Redactor) -> Any:
    if isinstance(data, dict):
        return {k: _scrubbed(v, redact) for k, v in data.items()}
    if isinstance(data, list):
        return [_scrubbed(v, redact) for v in data]
    return redact(data) if isinstance(data, str) else data


@router.get("/vlm/status")
def status(board: DashboardDep) -> dict[str, Any]:
    """Whether a VLM is configured, which (name, model, endpoint, the variable holding its
    key), whether it answers and the models it serves (Ollama's tag list)."""
    config = _config()
    if config is None:
        return {"configured": False, "setting": VLM_ENV, "reachable": False, "models": []}
    found: dict[str, Any] = {"reachable": False, "models": [], "error": None}
    try:
        tags = _forward(board, config, "GET", "/api/tags", timeout=STATUS_TIMEOUT_S)
        names = [str(m.get("name")) for m in tags.get("models", []) if isinstance(m, dict)]
        found = {"reachable": True, "models": names, "error": None}
    except ApiError as exc:
        found["error"] = exc.error
    return {
        "configured": True, "setting": VLM_ENV, "name": config.name,
        "model": config.model_string, "endpoint": _root(config),
        "multimodal": config.is_multimodal, "api_key_env_var": config.api_key_env_var,
        **found, "model_available": _served(config.model_string, found["models"]),
    }  # fmt: skip


def _served(model: str, names: list[str]) -> bool:
    """Whether ``model`` is among ``names`` (Ollama's ``llava`` is ``llava:latest``)."""
    return any(name == model or name.split(":")[0] == model for name in names)


@router.get("/vlm/api/tags")
def tags(board: DashboardDep) -> Any:
    """The endpoint's model list, as Ollama's ``GET /api/tags`` answers it."""
    config = _require()
    return _forward(board, config, "GET", "/api/tags", timeout=STATUS_TIMEOUT_S)


@router.post("/vlm/api/chat")
def chat(request: VlmChatRequest, board: DashboardDep) -> Any:
    """One chat turn with the VLM (images as base64 in ``messages[].images``), forwarded to
    the endpoint's ``/api/chat`` unstreamed; answers Ollama's reply (``message``,
    ``done``, timings)."""
    config = _require()
    body = request.model_dump(exclude_none=True)
    body.update(model=request.model or config.model_string, stream=False)
    return _forward(board, config, "POST", "/api/chat", json=body, timeout=config.timeout)
