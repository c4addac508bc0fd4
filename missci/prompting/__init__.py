"""Talking to a causal LM about Missci: prompt templates and the parser of its free-text answers."""
