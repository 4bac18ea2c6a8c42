"""Tests of the app: Streamlit AppTest pages, the hosted demo, the browser."""
