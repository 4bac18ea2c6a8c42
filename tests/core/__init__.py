"""Tests of rnnlab/core."""
