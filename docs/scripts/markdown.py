"""What the docs scripts share: Markdown tables and the formats of quoted numbers."""

from __future__ import annotations

import math

Quote = tuple[str, str, tuple[str, ...]]
"""(file, template, values): see ``docs.scripts.regenerate``."""


def table(header: list[str], body: list[list[str]]) -> str:
    """A Markdown table (a ``|`` inside a cell is escaped)."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in body]
    return "\n".join(lines)


def signed(value: float, digits: int = 1) -> str:
    """A signed number as prose writes it, with a true minus sign: +3.7, −2.1."""
    return f"{value:+.{digits}f}".replace("-", "−")


def about(value: float, figures: int = 2) -> str:
    """A number rounded to ``figures`` significant figures, with thousands separators."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value))) - figures + 1
    rounded = round(value, -exponent)
    return f"{rounded:,.{max(0, -exponent)}f}"


def percent(value: float, digits: int = 0) -> str:
    return f"{value:.{digits}%}"


def fill(template: str, values: tuple[str, ...]) -> str:
    """A quote's template with its numbers (``{...}``, text left alone, as an ellipsis)."""
    pieces = template.replace("{...}", "…").split("{}")
    return pieces[0] + "".join(v + piece for v, piece in zip(values, pieces[1:], strict=True))


def show(quotes: list[Quote]) -> None:
    """Print each quote as the docs read it, with the file it is in."""
    for file, template, values in quotes:
        print(f"{file}: {fill(template, tuple(values))}")
