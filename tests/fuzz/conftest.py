"""The fuzz suite's profiles: ``tests/fuzz/support.py``.

Profiles: ``fuzz`` (default, thousands of inputs per reader in about a minute) and ``slow`` (ten times more), chosen
with ``FALLACY_FUZZ_PROFILE=slow``. Both are derandomized and keep no example database, so every run tries the same
inputs. The summary of the inputs each reader was given is printed at the end of the run by ``tests/conftest.py``
(so it shows without ``-s``, and under ``pytest -n`` too, gathered from the workers).
"""
