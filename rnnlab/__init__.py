"""rnnlab: how a recurrent network is unrolled in TensorFlow, measured on your machine.

The public API (no TensorFlow is imported by any of it; measurements run in spawned worker processes)::

    import rnnlab
    p = rnnlab.plan("unroll", preset="seed")            # validate: RnnlabError on bad input
    records = rnnlab.run(p, on_progress=print)           # measure what is not stored yet
    rnnlab.Store().records("unroll")                     # everything stored
"""

__version__ = "0.1.0"

from rnnlab.engine.api import Plan, environment, import_file, plan, run  # noqa: E402
from rnnlab.core.errors import RnnlabError, VariantUnsupported  # noqa: E402
from rnnlab.core.record import Record  # noqa: E402
from rnnlab.core.store import Store  # noqa: E402

__all__ = ["Plan", "Record", "RnnlabError", "Store", "VariantUnsupported", "environment", "import_file", "plan",
           "run", "__version__"]
