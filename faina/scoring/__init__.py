"""Scoring Faina predictions exactly as the official scorers do (the library behind ``python -m faina.evaluate``)."""
