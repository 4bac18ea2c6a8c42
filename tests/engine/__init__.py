"""Tests of rnnlab/engine."""
