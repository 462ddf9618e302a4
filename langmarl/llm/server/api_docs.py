"""The API docs page (``/docs``, Swagger UI) of both servers (``langmarl serve``,
``langmarl dashboard``) served from packaged assets, so it renders offline: the script and
styles come from the ``fastapi-offline`` package (its packaged Swagger UI 5, which reads
the OpenAPI 3.1 FastAPI writes; MIT; part of the ``server`` extra) under ``/docs-assets``,
never from a CDN.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from langmarl.core.errors import MissingDependencyError

ASSETS_URL = "/docs-assets"


def swagger_assets() -> Path:
    """The directory of the packaged Swagger UI files.

    Raises:
        MissingDependencyError: if ``fastapi-offline`` is not installed.
    """
    try:
        import fastapi_offline
    except ImportError as exc:
        raise MissingDependencyError("fastapi-offline", "server", "The API docs page") from exc
    return Path(fastapi_offline.__file__).parent / "static"


def mount_api_docs(app: FastAPI) -> None:
    """Serve ``/docs`` with the assets of :func:`swagger_assets` (``app`` must be created
    with ``docs_url=None`` and ``redoc_url=None``: FastAPI's own pages load a CDN)."""
    app.mount(ASSETS_URL, StaticFiles(directory=swagger_assets()), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — docs",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
        )
