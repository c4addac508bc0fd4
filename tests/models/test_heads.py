"""Head shapes, losses and the batched decoder layout."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from models.heads import BIODecoders, MultiLabelHead


def test_multilabel_head_shape_and_bce():
    torch.manual_seed(0)
    head = MultiLabelHead(hidden_size=8, num_views=2, num_labels=3)
    logits = head(torch.randn(4, 8))
    assert logits.shape == (4, 2, 3)
    targets = torch.randint(0, 2, (4, 2, 3)).float()
    manual = -(targets * torch.log(torch.sigmoid(logits)) + (1 - targets) * torch.log(1 - torch.sigmoid(logits))).mean()
    torch.testing.assert_close(head.loss(logits, targets), manual)


def test_decoders_share_one_projection_and_sum_weighted_mean_nll():
    torch.manual_seed(0)
    decoders = BIODecoders(hidden_size=8, num_decoders=5, loss_weights=[1, 0, 2, 1, 1])
    assert decoders.projection.out_features == 15
    words = torch.randn(3, 6, 8)
    emissions = decoders.emissions(words)
    assert emissions.shape == (3, 5, 6, 3)
    # decoder d's scores are rows 3d..3d+2 of the one projection
    torch.testing.assert_close(
        emissions[:, 2], F.linear(words, decoders.projection.weight[6:9], decoders.projection.bias[6:9])
    )
    tags = torch.randint(0, 2, (3, 5, 6))
    mask = torch.ones(3, 6, dtype=torch.bool)
    nll = decoders.crf.neg_log_likelihood(emissions, tags, mask)
    expected = (nll.mean(0) * torch.tensor([1.0, 0, 2, 1, 1])).sum()
    torch.testing.assert_close(decoders.loss(emissions, tags, mask), expected)


def test_zero_weight_decoder_gets_no_gradient():
    decoders = BIODecoders(hidden_size=4, num_decoders=2, loss_weights=[0.0, 1.0])
    emissions = decoders.emissions(torch.randn(2, 3, 4))
    decoders.loss(emissions, torch.zeros(2, 2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.bool)).backward()
    assert decoders.projection.weight.grad[:3].eq(0).all()
    assert decoders.projection.weight.grad[3:].ne(0).any()


def test_o_bias_favours_outside_at_initialisation():
    decoders = BIODecoders(hidden_size=4, num_decoders=3, o_bias=2.0)
    bias = decoders.projection.bias.view(3, 3)
    assert (bias[:, 0] - bias[:, 1:].max(dim=1).values > 1.0).all()
