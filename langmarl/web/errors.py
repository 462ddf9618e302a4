"""Errors of the API: one JSON shape, ``{"error": what went wrong, "fix": what to do}``.

Route code raises :class:`ApiError`; the handlers installed by :func:`install_handlers`
turn it, FastAPI's validation errors (400 for a bad query or path value, 422 for a bad body,
naming the field), unknown routes (404) and langmarl's own errors (a corrupt run file: 500
with the file and the recovery) into that shape.
"""

from __future__ import annotations

from typing import cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from langmarl.core.errors import ConfigError, LangmarlError, RunFileError


class ApiError(Exception):
    """An error answered as ``{"error": error, "fix": fix}`` with HTTP ``status``."""

    def __init__(self, status: int, error: str, fix: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.fix = fix


def error_response(status: int, error: str, fix: str) -> JSONResponse:
    return JSONResponse({"error": error, "fix": fix}, status_code=status)


def _field(loc: tuple[int | str, ...]) -> str:
    parts = [str(p) for p in loc[1:]] or [str(p) for p in loc]
    return ".".join(parts)


# Starlette calls each handler only with the exception type it was registered for; the
# signatures take ``Exception`` because that is the type ``add_exception_handler`` declares.
async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    error = cast(ApiError, exc)
    return error_response(error.status, error.error, error.fix)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    errors = cast(RequestValidationError, exc).errors()
    first = errors[0] if errors else {"loc": ("query",), "msg": "invalid request"}
    where = str(first["loc"][0]) if first["loc"] else "query"
    field = _field(tuple(first["loc"]))
    status = 422 if where == "body" else 400
    return error_response(
        status,
        f"invalid {where} field {field!r}: {first['msg']}",
        f"send a valid {field!r} (the schema is at /openapi.json; /docs lists every route)",
    )


async def _http(request: Request, exc: Exception) -> JSONResponse:
    http = cast(HTTPException, exc)
    fixes = {404: "check the URL: /docs lists every route", 405: "use the method /docs lists"}
    fix = fixes.get(http.status_code, "see /docs")
    return error_response(http.status_code, str(http.detail), fix)


async def _langmarl(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, RunFileError):  # the message names the file and how to recover
        return error_response(500, str(exc), "recover the file as the message says")
    status = 400 if isinstance(exc, ConfigError) else 500
    return error_response(status, str(exc), "see the error; /docs describes each route")


def install_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` in the ``{"error", "fix"}`` shape."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(LangmarlError, _langmarl)
