"""The checks of the classroom notebooks: a prediction against the model, and the stated
answer against the model.

``check`` is the student's feedback: how far the prediction was, and why.
``stated`` is the instructor's guarantee: the numbers an answer quotes are the
model's, or the cell raises (the suite runs every notebook, so an answer cannot
drift from the model).
"""

from __future__ import annotations

import re

from sim.report.numbers import readable

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
) -> None:
    """Print how ``prediction`` compares with ``model`` (within ``close``, relative, counts as
    close) and explain the gap with ``why``.  It returns nothing, so a notebook shows the
    text once."""
    print(feedback(prediction, model, what=what, unit=unit, close=close, why=why))


def feedback(
    prediction: float | None,
    model: float,
    *,
    what: str,
    unit: str = "",
    close: float = 0.1,
    why: str = "",
) -> str:
    """The text ``check`` prints."""
    shown = f"{readable(model)}{unit}"
    if prediction is None:
        text = f"No prediction yet: write one in the prediction cell, then run this again. ({what})"
    else:
        gap = (prediction - model) / model if model else float("inf")
        if abs(gap) <= close:
            verdict = f"close: within {close:.0%} of the model's {shown}"
        else:
            direction = "high" if gap > 0 else "low"
            verdict = f"{abs(gap):.0%} too {direction}: the model gives {shown}"
        text = f"{what}: you predicted {readable(prediction)}{unit}; {verdict}."
    if why:
        text += f"\nWhy: {why}"
    return text


def stated(answer: str, template: str, *values: str) -> None:
    """Raise unless ``answer`` says ``template`` with ``values`` in its ``{}`` slots.

    The template is a sentence of the answer with ``{}`` for each number (line breaks
    and runs of spaces count as one space); ``values`` are the model's numbers,
    formatted as the answer writes them.
    """
    found = _said(answer, template)
    expected = template.format(*values)
    if found is None:
        raise AssertionError(f"the answer no longer says: {template!r}; the model: {expected}")
    if found.groups() != values:
        raise AssertionError(
            f"the answer says {' '.join(found[0].split())!r}, the model gives {expected!r}"
        )


def slots(answer: str, template: str) -> tuple[str, ...]:
    """The numbers ``answer`` writes in the ``{}`` slots of ``template`` (what the model
    found, as opposed to the template's own words); empty if it does not say it."""
    found = _said(answer, template)
    return () if found is None else found.groups()


def _said(answer: str, template: str) -> re.Match[str] | None:
    words = [re.escape(part) for part in " ".join(template.split()).split("{}")]
    pattern = NUMBER.join(r"\s+".join(w.split(r"\ ")) for w in words)
    return re.search(pattern, answer)


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as the answers write it, e.g. 0.3903 -> '39.0%'."""
    return f"{fraction * 100:.{decimals}f}%"
