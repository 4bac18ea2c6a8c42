"""Tests of rnnlab/judge."""
