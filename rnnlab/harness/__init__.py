"""The measuring harness: statistics, the worker process, and the runner that spawns one worker per variant."""
