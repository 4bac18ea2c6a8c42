"""Tests of rnnlab/tf."""
