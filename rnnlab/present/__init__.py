"""Presentation: records and verdicts -> formatted tables and charts, one module per page topic."""
