"""Tests of rnnlab/present."""
