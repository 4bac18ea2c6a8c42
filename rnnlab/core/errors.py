"""The one user-facing error type.

Lower layers wrap KeyError, JSONDecodeError, sqlite and TensorFlow errors into ``RnnlabError`` with context;
the CLI prints its message on one line and exits 2, a page shows it with ``st.error`` and keeps working.
Anything else that escapes is a bug and keeps its traceback.
"""


class RnnlabError(Exception):
    """A mistake of the user's (bad flag, bad file, impossible configuration): one line that says what to do."""

    def __str__(self) -> str:  # always one line, whatever the wrapped text held
        return " ".join(str(self.args[0] if self.args else "").split())


class VariantUnsupported(RnnlabError):
    """Raised inside a worker when a variant cannot run with these params on this device.

    The harness turns it into an error record whose reason is this message; the rest of the run goes on.
    """
