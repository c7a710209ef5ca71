"""The Streamlit dashboard's parts (``app.py`` is the page)."""
