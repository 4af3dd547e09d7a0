"""The team's streaming pipelines."""
