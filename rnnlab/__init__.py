"""rnnlab: how a recurrent network is unrolled in TensorFlow, measured on your machine.

The public API (no TensorFlow is imported by any of it; measurements run in spawned worker processes)::

    import rnnlab
    p = rnnlab.plan("unroll", preset="seed")            # validate: RnnlabError on bad input
    records = rnnlab.run(p, on_progress=print)           # measure what is not stored yet
    rnnlab.Store().records("unroll")                     # everything stored
"""

from rnnlab.core.errors import RnnlabError, VariantUnsupported
from rnnlab.core.version import VERSION as __version__

# the rest load on first use (PEP 562), so importing any module of the package (``rnnlab.core.format``) loads
# ``rnnlab`` itself without the run path, the store or NumPy
_LAZY = {"Plan": "rnnlab.engine.api", "environment": "rnnlab.engine.api", "import_file": "rnnlab.engine.api",
         "plan": "rnnlab.engine.api", "run": "rnnlab.engine.api", "Record": "rnnlab.core.record",
         "Store": "rnnlab.core.store"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rnnlab' has no attribute {name!r}")

__all__ = ["Plan", "Record", "RnnlabError", "Store", "VariantUnsupported", "environment", "import_file", "plan",
           "run", "__version__"]
