"""The claim sets read model: its tables and projector (``projector``) and the questions the layers
above ask of them (``queries``)."""
