"""Static type checks: ``mypy --strict`` over the packages that must hold it (``python -m tools.typecheck``)."""
