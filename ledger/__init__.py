"""The ledger core: event types, the append-only APSW event store and the pure domain rules.

Nothing here imports another project package; state comes in as arguments.
"""
