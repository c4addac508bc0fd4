"""A BIO CRF with every parameter drawn at random (importable as ``helpers.random_crf``): transitions and start/end
scores far from the zero initialisation, so calibration tests see marginals a trained decoder could give."""

from __future__ import annotations

import torch

from models.crf import BatchedBIOCRF


def random_crf(decoders: int, seed: int = 3) -> BatchedBIOCRF:
    """``decoders`` CRFs in one batched module, each parameter standard normal under ``seed``."""
    torch.manual_seed(seed)
    crf = BatchedBIOCRF(decoders)
    with torch.no_grad():
        for parameter in crf.parameters():
            parameter.normal_()
    return crf
