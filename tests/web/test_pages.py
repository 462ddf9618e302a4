"""The pages are served at / with every module they import, and need no token to load
(they hold no run data: they read it through /api, which does)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from langmarl.web import create_app

IMPORT = re.compile(r"""^import .* from "(\./|\.\./)([^"]+)";$""", re.MULTILINE)


def test_the_shell_and_every_module_it_imports_are_served(runs_dir: Path) -> None:
    client = TestClient(create_app(runs_dir, token="t0ken"))
    shell = client.get("/")
    assert shell.status_code == 200 and "text/html" in shell.headers["content-type"]
    assert '<script type="module" src="/static/app.js">' in shell.text
    pending, seen = ["app.js"], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert "javascript" in response.headers["content-type"], name
        folder = Path(name).parent
        for prefix, target in IMPORT.findall(response.text):
            base = folder if prefix == "./" else folder.parent
            pending.append((base / target).as_posix())
    assert {"api.js", "charts.js", "dom.js", "views/run.js", "views/language.js"} <= seen
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/api/runs").status_code == 401  # the data still needs the token


def test_static_files_stay_inside_the_static_folder(runs_dir: Path) -> None:
    client = TestClient(create_app(runs_dir))
    for path in ("/static/../__init__.py", "/static/%2e%2e/__init__.py", "/static/nope.js"):
        assert client.get(path).status_code == 404, path
