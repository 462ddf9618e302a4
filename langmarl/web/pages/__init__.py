"""The dashboard's pages: one static single-page app over the ``/api`` routes.

Server-rendered by nobody: ``static/`` holds plain HTML, CSS and ES modules (no build
step, no Node at install or run time), shipped as package data. The page reads everything
through the same API a script would, with the same Bearer token (kept in the tab's
``sessionStorage`` once typed), so the pages cannot show what the API would not.

::

    static/index.html   the shell: header, nav, one <main> each view renders into
    static/api.js       fetch with the token, JSON errors, the live stream (fetch + SSE parse)
    static/charts.js    SVG line charts and sparklines
    static/views/*.js   runs list, run page (per space), compare, trash, jobs
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def mount_pages(app: FastAPI) -> None:
    """Serve the app at ``/`` and its files at ``/static``."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})
