"""One module per command: ``setup_arguments(subparsers)`` and a keyword-only ``run(...)`` that tests call."""
