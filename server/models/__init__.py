"""Embedding models for semantic recall: GGUF writing, registry conversion, install and list."""
