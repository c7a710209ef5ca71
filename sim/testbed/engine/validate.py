"""The API's validation: every item it processes checked against the SDK's own input types.

The openai package types a request's input as ``ResponseInputItemParam`` (a union
of typed dicts); pydantic checks each processed item against it, the whole
conversation for a request without cached state, the new items on a cache hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter, ValidationError

from sim.testbed.protocol import ApiError, Item


@cache
def _items() -> TypeAdapter[list[ResponseInputItemParam]]:
    return TypeAdapter(list[ResponseInputItemParam])


def warm_up() -> None:
    """Build the validator (its schema takes a while) before any request is timed."""
    _items().validate_python([{"type": "message", "role": "user", "content": "hi"}])


def validate_items(items: Sequence[Item]) -> None:
    """Check ``items``; an item no input type accepts is refused as the API would."""
    try:
        _items().validate_python(list(items))
    except ValidationError as problem:
        first = problem.errors()[0]
        where = ".".join(str(part) for part in first["loc"][:1])
        raise ApiError(400, "invalid_value", first["msg"], f"input[{where}]") from None
