"""Ports and base URLs the command line is given, checked before anything listens or connects.

A port out of range, or taken, and a base URL that is no URL or at which
nothing answers were tracebacks from deep inside a server or the SDK; each is
now one line naming the option.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from models.errors import ScenarioError
from models.numbers import quoted

CONNECT_TIMEOUT_S = 10.0
"""How long a base URL's server may take to accept a connection."""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def check_port(port: int, option: str = "--port") -> int:
    """A TCP port to listen on: 0 (a free one) or 1-65535."""
    if not 0 <= port <= 65535:
        raise ScenarioError(f"{option} = {port}: must be 0 (a free port) or 1-65535")
    return port


def check_base_url(url: str, option: str) -> tuple[str, int]:
    """An http:// or https:// base URL with a host; its host and port."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise ScenarioError(f"{option} = {quoted(url)}: not a URL ({error})") from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ScenarioError(
            f"{option} = {quoted(url)}: must be an http:// or https:// base URL with a host, "
            "e.g. http://127.0.0.1:8000/v1"
        )
    return parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def check_answers(url: str, option: str) -> None:
    """The server at ``url`` accepts a connection within ``CONNECT_TIMEOUT_S``."""
    host, port = check_base_url(url, option)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise ScenarioError(
            f"{option} = {quoted(url)}: no server accepts connections at {host}:{port} ({reason})"
        ) from None


def check_api_key(key: str | None) -> str | None:
    """A bearer token as given (None: the default); an empty one, or one a header cannot
    carry, is refused rather than replaced by the public default without a word."""
    if key is None:
        return None
    if not key:
        raise ScenarioError(
            "--api-key = '': empty; leave the option out for the emulator's default key"
        )
    if not (key.isascii() and key.isprintable()) or " " in key:
        raise ScenarioError(
            f"--api-key = {quoted(key)}: printable ASCII without spaces, as a bearer token"
        )
    return key
