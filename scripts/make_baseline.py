"""Regenerate the bundled results (data/baseline/<machine>.json) on this machine: see ``--help`` for the plan, what
each experiment costs, and how a stopped run resumes (rnnlab.commands._baseline). From the checkout's root:
``python -m scripts.make_baseline``."""

import sys

from rnnlab.commands import _baseline

if __name__ == "__main__":
    sys.exit(_baseline.main())
