"""Text sizes for a projector: captions, the big numbers' details and the sidebar's help
read from the back of a room (Streamlit's defaults are 12-14 px and light grey)."""

from __future__ import annotations

import streamlit as st

MIN_TEXT_PX = 16
"""The smallest text the page shows, captions included."""
TEXT_COLOUR = "#31333f"
"""Streamlit's body text colour, for captions too (not its light grey)."""

CSS = f"""
<style>
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stMetricDelta"], [data-testid="stMetricDelta"] div,
[data-testid="stMetricLabel"] p, [data-testid="stWidgetLabel"] p,
[data-testid="stTooltipHoverTarget"] {{
  font-size: {MIN_TEXT_PX}px !important;
  color: {TEXT_COLOUR} !important;
}}
</style>
"""


def readable_text() -> None:
    """Put the page's text-size rules on the page."""
    st.html(CSS)
