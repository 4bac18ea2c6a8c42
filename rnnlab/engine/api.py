"""The engine's one front door: everything outside ``rnnlab/engine`` (the commands, the judges and views, the app)
imports the engine from here, and only from here; the modules behind it import each other, never this one.

- plan a run (``engine.plan``) and price it before it starts (``engine.estimates``);
- run it (``engine.running``: served from the store where possible, else by workers; ``cluster`` for Ray);
- the environment a run records (``engine.environment``); importing records (``engine.importing``);
- the app's background runs (``engine.jobs``), a hosted copy's caps (``hosted``), a checkpoint's conversion
  (``convert``); competing load for the method's own tests (``competing``, ``run_arms``).
"""

from __future__ import annotations

from rnnlab.engine import convert, hosted
from rnnlab.engine.contend import load as competing
from rnnlab.engine.environment import cached_probe, copy_probes, environment, known_env, needs_probe, probe_key
from rnnlab.engine.estimates import (MAX_RUN_S, MAX_WORKERS, PROBE_S, QUICK_WORK_S, WORKER_START_S, Estimate,
                                     check_cost, estimate)
from rnnlab.engine.importing import MAX_IMPORT_BYTES, ImportCount, import_file, read_import
from rnnlab.engine.jobs import Job, JobManager, plan_key, try_again
from rnnlab.engine.plan import NOT_KEYED, Plan, first_run_command, own_run_words, plan, spec_of
from rnnlab.engine.points import reference_records, variant_task
from rnnlab.engine.runner import Cancelled, Progress
from rnnlab.engine.running import busy_warning, others_now, run, run_arms


def cluster(address: str):
    """A Ray cluster to run on (``engine.cluster.Cluster``: a context manager); Ray is imported only now."""
    from rnnlab.engine.cluster import Cluster

    return Cluster(address)


__all__ = [
    # planning and pricing
    "Plan", "plan", "spec_of", "NOT_KEYED", "first_run_command", "own_run_words",
    "Estimate", "estimate", "check_cost", "MAX_RUN_S", "MAX_WORKERS", "PROBE_S", "QUICK_WORK_S", "WORKER_START_S",
    # running
    "run", "run_arms", "cluster", "Progress", "Cancelled", "reference_records", "variant_task", "others_now",
    "busy_warning", "competing",
    # the environment and imports
    "environment", "known_env", "needs_probe", "cached_probe", "copy_probes", "probe_key",
    "import_file", "read_import", "ImportCount", "MAX_IMPORT_BYTES",
    # the app's
    "Job", "JobManager", "plan_key", "try_again", "hosted", "convert",
]
