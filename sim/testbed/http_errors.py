"""Every HTTP error of the emulator in the Responses API's shape, and its query parameters.

A wrong URL or method, a bad query parameter of ``/v1/testbed/*`` and a
failure inside a route are answered ``{"error": {type, code, message,
param}}`` with the matching status, as the service answers, never a
plain-text page.
"""

from __future__ import annotations

import math
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from sim.testbed.protocol import SERVER_ERROR, ApiError, log_failure, shown

UNAUTHORIZED = ApiError(401, "invalid_api_key", "Incorrect API key provided.")
MAX_OFFSET = 10**18
"""Largest log offset a reader may ask for."""


def query_count(request: Request, name: str) -> int:
    """A whole number >= 0 from the query (0 when absent); else a 400 naming it."""
    text = request.query_params.get(name, "0")
    if not (text.isascii() and text.isdigit() and int(text) <= MAX_OFFSET):
        raise ApiError(
            400, "invalid_value", f"{name} = {shown(text)!r}: must be an integer >= 0.", name
        )
    return int(text)


def query_window(request: Request) -> tuple[float, float]:
    """``start`` and ``end`` (monotonic seconds), finite, with start < end."""
    values = []
    for name in ("start", "end"):
        text = request.query_params.get(name)
        try:
            value = float(text) if text is not None and len(text) <= 64 else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ApiError(
                400, "invalid_value", f"{name} = {shown(text)!r}: must be a finite number.", name
            )
        values.append(value)
    if not values[0] < values[1]:
        raise ApiError(400, "invalid_value", "start must be before end.", "start")
    return values[0], values[1]


async def _api_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiError)
    return JSONResponse(error.http_json(), error.status)


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    code = {404: "unknown_url", 405: "method_not_allowed"}.get(error.status_code, "invalid_request")
    message = f"Invalid URL ({request.method} {shown(request.url.path)})."
    if error.status_code not in (404, 405):
        message = shown(error.detail)
    body = ApiError(error.status_code, code, message).http_json()
    return JSONResponse(body, error.status_code)


async def _server_error(request: Request, error: Exception) -> JSONResponse:
    log_failure(error)
    return JSONResponse(SERVER_ERROR.http_json(), SERVER_ERROR.status)


ERROR_HANDLERS: dict[Any, Any] = {
    ApiError: _api_error,
    HTTPException: _http_error,
    Exception: _server_error,
}
"""Starlette's exception handlers: each error as the API shapes it."""
