"""rnnlab's version, in one place: the package's ``__version__``, every record's ``env.rnnlab``, the build's."""

VERSION = "0.1.0"
