"""Read models: deterministic folds over the event log, rebuilt bit-for-bit by ``ledger rebuild``."""
