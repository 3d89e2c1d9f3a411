"""A mutation check: small bugs put into the rule modules one at a time, which the tests must notice.

``python -m tools.mutation`` (``--fast`` for the subset CI runs); see docs/testing.md.
"""
