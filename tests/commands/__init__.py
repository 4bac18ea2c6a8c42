"""Tests of rnnlab/commands: the command line."""
