"""The API's rendering: a conversation as the model's chat text, counted in o200k tokens.

SmolLM2 reads ChatML (``<|im_start|>role ... <|im_end|>``): the instructions and
tool definitions as the system turn, then one turn per item.  An HTTP request
(or any request without cached state) is rendered whole; a continuation on a
cached conversation renders only its new items, appended after the end of the
model's last turn, whose tokens the cache already holds.  Usage is counted in
OpenAI's o200k tokens (``bpe-openai`` bundles the tables, so nothing is
downloaded), as the API counts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import Any

from bpe_openai import Encoding, get_encoding

from sim.testbed.protocol import Item, text_of

END = "<|im_end|>\n"
GENERATION_PROMPT = "<|im_start|>assistant\n"
ENCODING = "o200k_base"


@cache
def o200k() -> Encoding:
    return get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """o200k tokens of ``text`` (special-token markers counted as ordinary text)."""
    return len(o200k().encode_ordinary(text))


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}{END}"


def system_text(instructions: str, tools: list[dict[str, Any]]) -> str:
    """The system turn: the instructions, then each tool's definition as JSON."""
    definitions = "\n".join(json.dumps(tool, sort_keys=True) for tool in tools)
    return _turn("system", f"{instructions}\n\n# Tools\n{definitions}")


def item_text(item: Item) -> str:
    """One item as a chat turn (a reasoning item with no summary renders as nothing)."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "function_call":
        return _turn("assistant", f"{item.get('name', '')}({item.get('arguments', '')})")
    if kind == "function_call_output":
        return _turn("tool", text_of(item))
    if kind == "reasoning":
        text = text_of(item)
        return _turn("assistant", text) if text else ""
    return _turn(str(item.get("role", "user")), text_of(item))


def full_prompt(instructions: str, tools: list[dict[str, Any]], items: Iterable[Item]) -> str:
    """The whole conversation, ending with the prompt for the model's next turn."""
    return system_text(instructions, tools) + "".join(map(item_text, items)) + GENERATION_PROMPT


def continuation(items: Iterable[Item]) -> str:
    """What follows a cached conversation: the end of the model's turn, the new items and
    the prompt for its next turn."""
    return END + "".join(map(item_text, items)) + GENERATION_PROMPT
