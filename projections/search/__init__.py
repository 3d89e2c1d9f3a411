"""The full-text read model: the index and its upkeep (``index``), the queries asked of it
(``queries``) and how their candidates are scored (``ranking``)."""
