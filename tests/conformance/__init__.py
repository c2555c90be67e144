"""Conformance harnesses over public kernel collections (not collected by the default run)."""
