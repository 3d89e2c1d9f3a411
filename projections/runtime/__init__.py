"""The embedding runtime: a local GGUF model read, checked and run through llama-cpp-python.

Kept apart from the read models: :mod:`.gguf_header` reads a model file's header without loading
it, :mod:`.model_file` says what a file is (identity, dimension, digests), :mod:`.llama_encoder`
runs llama.cpp, and :mod:`.embedding` turns text into the vectors the read models store.
"""
