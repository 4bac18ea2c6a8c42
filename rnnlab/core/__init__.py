"""Core: errors, parameters, records, the store, bundled results, environment, formatting, views."""
