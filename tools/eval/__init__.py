"""Evaluation harnesses: run by developers, never imported by the package or the unit tests."""
