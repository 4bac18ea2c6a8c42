"""Judging: which record stands for a configuration (``select``), the rules (``rules``), the seeds'
claims, headline findings and the recommendation."""
