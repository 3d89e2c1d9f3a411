"""Generators of the documentation that is derived from code (checked by tests)."""
