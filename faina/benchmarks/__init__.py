"""Measurements of the framework's options on real data: the quality benchmark (``scripts/benchmark_quality.py``)."""
