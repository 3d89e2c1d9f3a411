"""The bitemporal timeline read model: its projector (``projector``), how its rows are written
(``rows``) and the as-of questions asked of it (``asof``)."""
