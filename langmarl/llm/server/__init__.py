"""`langmarl serve`: the embedded model as an OpenAI-compatible HTTP server.

Modules: ``config`` (:class:`ServeConfig`, binding), ``schema`` (the strict request model),
``parsing`` (bytes → validated request, or an error naming the field), ``errors`` (the
OpenAI error shape), ``responses`` (running a request, plain or streamed) and ``app`` (the
FastAPI app: ``create_app`` and ``serve``). This package's namespace needs only pydantic; the
other modules need the ``server`` extra (FastAPI, uvicorn).
"""

from __future__ import annotations

from langmarl.llm.server.config import ServeConfig, bind_socket, check_bind, is_loopback

__all__ = ["ServeConfig", "bind_socket", "check_bind", "is_loopback"]
