"""``make_cfg``: ``conf/train.yaml`` composed like the command line would, on the small sample and the tiny encoder
(both fixtures of ``tests/conftest.py``)."""

from __future__ import annotations

import pytest

from helpers.configs import compose_train


@pytest.fixture
def make_cfg(tmp_path, tiny_encoder, small_sample):
    """Compose conf/train.yaml like the command line would, on the small sample and the tiny encoder."""

    def _make(*overrides: str, sample: bool = True, tiny: bool = True):
        base = [f"paths.root_dir={tmp_path}", "callbacks=none", "logger=none", "loader.batch_size=8"]
        if tiny:
            base.append(f"encoder.name_or_path={tiny_encoder}")
        if sample:
            task = next((o.split("=", 1)[1] for o in overrides if o.startswith("task=")), "span-f")
            ext = "conll" if task.startswith("span") else "tsv"
            base += [
                "data=custom",
                f"data.train_path={small_sample / ('sample.' + ext)}",
                f"data.test_path={small_sample / ('sample-unlabelled.' + ext)}",
            ]
        return compose_train(*base, *overrides)

    return _make
