"""The checks of the classroom notebooks: a prediction against the model, and the stated
answer against the model.

``check`` is the student's feedback: how far the prediction was, and why.
``stated`` is the instructor's guarantee: the numbers an answer quotes are the
model's, or the cell raises (the suite runs every notebook, so an answer cannot
drift from the model).
"""

from __future__ import annotations

import re

NUMBER = r"([" + "\N{MINUS SIGN}" + r"+-]?\d[\d,]*(?:\.\d+)?%?)"
"""A number as an answer quotes it: sign, thousands separators, decimals, percent."""


def check(
    prediction: float | None,
    model: float,
    *,
    what: str,
    unit: str = "",
    close: float = 0.1,
    why: str = "",
) -> str:
    """Say how ``prediction`` compares with ``model`` (within ``close``, relative, counts as
    close), explain the gap with ``why``, print it and return it."""
    shown = f"{model:,.3g}{unit}"
    if prediction is None:
        text = f"No prediction yet: write one in the prediction cell, then run this again. ({what})"
    else:
        gap = (prediction - model) / model if model else float("inf")
        if abs(gap) <= close:
            verdict = f"close: within {close:.0%} of the model's {shown}"
        else:
            direction = "high" if gap > 0 else "low"
            verdict = f"{abs(gap):.0%} too {direction}: the model gives {shown}"
        text = f"{what}: you predicted {prediction:,.3g}{unit}; {verdict}."
    if why:
        text += f"\nWhy: {why}"
    print(text)
    return text


def stated(answer: str, template: str, *values: str) -> None:
    """Raise unless ``answer`` says ``template`` with ``values`` in its ``{}`` slots.

    The template is a sentence of the answer with ``{}`` for each number (line breaks
    and runs of spaces count as one space); ``values`` are the model's numbers,
    formatted as the answer writes them.
    """
    words = [re.escape(part) for part in " ".join(template.split()).split("{}")]
    pattern = NUMBER.join(r"\s+".join(w.split(r"\ ")) for w in words)
    found = re.search(pattern, answer)
    expected = template.format(*values)
    if found is None:
        raise AssertionError(f"the answer no longer says: {template!r}; the model: {expected}")
    if found.groups() != values:
        raise AssertionError(
            f"the answer says {' '.join(found[0].split())!r}, the model gives {expected!r}"
        )


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as the answers write it, e.g. 0.3903 -> '39.0%'."""
    return f"{fraction * 100:.{decimals}f}%"
