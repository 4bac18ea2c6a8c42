"""Developer scripts, run from the checkout root: ``python -m scripts.<name> --help``."""
