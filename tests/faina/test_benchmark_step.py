"""scripts/benchmark_step.py on the tiny encoder and the small sample: the bare loops see the framework encoder's
own windows, and one short run writes every variant's timing and the ratios to its JSON file (no timing is
judged: the figures depend on the machine)."""

from __future__ import annotations

import json
import math

import torch

from helpers.scripts import load_script


def benchmark_script():
    return load_script("benchmark_step")


def test_bare_windows_give_the_chunked_encoders_word_vectors(tiny_encoder):
    """The bare loops' inputs (``encoder_windows``) hold what ``ChunkedEncoder`` feeds its model: each word's
    vector is the same, across window borders (windows of 6 content subwords) and for padded posts."""
    from faina.benchmarks.step_cost import encoder_windows
    from models.encoder import ChunkedEncoder

    encoder = ChunkedEncoder(tiny_encoder, max_length=8, dropout=0.0).eval()
    lengths, words = [13, 4, 7], 5
    ids = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    mask = torch.zeros_like(ids)
    starts = torch.zeros(len(lengths), words, dtype=torch.long)
    generator = torch.Generator().manual_seed(0)
    for row, length in enumerate(lengths):
        ids[row, :length] = torch.randint(1000, 2000, (length,), generator=generator)
        mask[row, :length] = 1
        first = sorted(torch.randperm(length, generator=generator)[: min(words, length)].tolist())
        starts[row, : len(first)] = torch.tensor(first)
    batch = {"input_ids": ids, "attention_mask": mask, "word_starts": starts}
    windowed = encoder_windows(batch, encoder.prefix, encoder.suffix, encoder.window, encoder.pad_id)
    with torch.no_grad():
        subwords, _ = encoder(ids, mask)
        expected = subwords.gather(1, starts.unsqueeze(-1).expand(-1, -1, subwords.shape[-1]))
        hidden = encoder.model(input_ids=windowed["window_ids"], attention_mask=windowed["window_mask"])
        got = hidden.last_hidden_state.flatten(0, 1)[windowed["word_positions"]]
    assert windowed["window_ids"].shape[0] == 3 + 1 + 2  # ceil(13/6), ceil(4/6), ceil(7/6) windows
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def test_a_short_run_writes_every_timing_and_the_ratios(tiny_encoder, small_sample, tmp_path):
    out = tmp_path / "step.json"
    overrides = [
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.conll'}",
        f"paths.root_dir={tmp_path}",
        "paths.feature_cache=null",
    ]
    argv = ["--steps", "2", "--rounds", "1", "--batch-size", "8", "--out", str(out), *overrides]
    benchmark_script().main(argv)
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["command"].startswith("python scripts/benchmark_step.py --steps 2")
    assert set(result["variants"]) == {"framework", "bare encoder + linear", "bare encoder + CRF"}
    for figures in result["variants"].values():
        assert figures["seconds_per_step"] > 0 and figures["cpu_seconds_per_step"] >= 0
        assert len(figures["losses"]) == 2 and all(math.isfinite(loss) for loss in figures["losses"])
    for ratio in ("ratio_framework_to_linear", "ratio_framework_to_crf", "ratio_crf_to_linear"):
        assert math.isfinite(result[ratio]) and result[ratio] > 0
    assert result["peak_rss_mib"] > 0 and result["steps"] == 2 and result["batch_size"] == 8
