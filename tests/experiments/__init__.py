"""Tests of rnnlab/experiments."""
