"""Text sizes for a projector: captions, the big numbers' details and the sidebar's help
read from the back of a room (Streamlit's defaults are 12-14 px and light grey); labels
that wrap on a narrow screen rather than end in an ellipsis."""

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
/* On a narrow screen a label wraps instead of ending in "...". */
[data-testid="stMain"] [data-testid="stMetricLabel"] *,
[data-testid="stMain"] [data-testid="stMetricDelta"] *,
[data-testid="stMain"] button p, [data-testid="stMain"] button div {{
  white-space: normal !important;
  overflow: visible !important;
  text-overflow: clip !important;
}}
</style>
"""


def readable_text() -> None:
    """Put the page's text-size rules on the page."""
    st.html(CSS)
