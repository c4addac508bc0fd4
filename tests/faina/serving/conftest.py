"""One tiny trained span-f run (2 folds) and the export of its fold0, shared by the loader tests here."""

from __future__ import annotations

import pytest

from helpers.trained import save_tiny_encoder, train_run, write_small_sample


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> dict:
    from faina.serving.export import export_fold

    root = tmp_path_factory.mktemp("untrusted")
    encoder = save_tiny_encoder(root / "encoder")
    sample = write_small_sample(root / "sample")
    run_dir = train_run(root, encoder, sample, "span-f", "cv.num_folds=2")
    exported = export_fold(run_dir / "fold0", root / "exported")
    return {"root": root, "encoder": encoder, "sample": sample, "run": run_dir, "exported": exported}
