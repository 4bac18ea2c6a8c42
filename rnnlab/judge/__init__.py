"""Judging: which record stands for a configuration (``select``), the seeds'
claims, headline findings and the recommendation."""
