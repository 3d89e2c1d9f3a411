"""Benchmarks: run by developers and CI, never imported by the package."""
