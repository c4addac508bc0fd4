"""``common.weight_averaging``: the running mean is the exact mean of the averaged epochs' weights, training is the
same with and without it, its state survives a ``weights_only=True`` round trip, and bad values are one clear
error."""

from __future__ import annotations

import io

import lightning.pytorch as pl
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from common.errors import UserError
from common.weight_averaging import LastEpochsAverage
from helpers.tiny_regression import TinyRegression


class EpochEnds(pl.Callback):
    """The module's weights at the end of every epoch, as the averaging callback sees them."""

    def __init__(self):
        self.states = []

    def on_train_epoch_end(self, trainer, pl_module):
        self.states.append({k: v.detach().clone() for k, v in pl_module.state_dict().items()})


def fit(callbacks, epochs=4):
    pl.seed_everything(3, verbose=False)
    data = TensorDataset(torch.randn(16, 3), torch.randn(16, 1))
    module = TinyRegression()
    trainer = pl.Trainer(
        max_epochs=epochs,
        callbacks=callbacks,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
    )
    trainer.fit(module, DataLoader(data, batch_size=4, shuffle=True))
    return module


def test_the_mean_is_that_of_the_last_epochs_and_training_is_unchanged():
    recorder, average = EpochEnds(), LastEpochsAverage(2)
    averaged_run = fit([recorder, average])
    plain_run = fit([])
    assert average.count == 2
    last_two = recorder.states[-2:]
    expected = (last_two[0]["layer.weight"] + last_two[1]["layer.weight"]) / 2
    assert torch.allclose(average.weights()["layer.weight"], expected, atol=1e-7)
    assert not torch.equal(average.weights()["layer.weight"], recorder.states[-1]["layer.weight"])
    # an integer buffer is not averaged: it keeps the latest value
    assert average.weights()["steps"].dtype == torch.long and int(average.weights()["steps"]) == 16
    # averaging draws no random number and changes no gradient: the run trains exactly as without it
    for name, value in plain_run.state_dict().items():
        assert torch.equal(value, averaged_run.state_dict()[name]), name


def test_more_epochs_averaged_than_trained_averages_them_all():
    average = LastEpochsAverage(10)
    fit([average], epochs=3)
    assert average.count == 3


def test_the_running_mean_is_exact():
    average = LastEpochsAverage(3)
    values = [torch.tensor([1.0, -2.0]), torch.tensor([4.0, 0.5]), torch.tensor([-1.0, 7.0])]
    for value in values:
        average.add({"w": value.to(torch.bfloat16)})
    assert average.weights()["w"].dtype == torch.float32  # accumulated in float32, cast back on loading
    assert torch.allclose(average.weights()["w"], torch.stack(values).mean(0))


def test_state_survives_a_weights_only_round_trip():
    average = LastEpochsAverage(2)
    average.add({"w": torch.tensor([1.0, 3.0]), "n": torch.tensor(4)})
    buffer = io.BytesIO()
    torch.save({"callbacks": {average.state_key: average.state_dict()}}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)["callbacks"][average.state_key]
    resumed = LastEpochsAverage(2)
    resumed.load_state_dict(loaded)
    resumed.add({"w": torch.tensor([3.0, 5.0]), "n": torch.tensor(5)})
    assert resumed.count == 2 and torch.equal(resumed.weights()["w"], torch.tensor([2.0, 4.0]))
    assert int(resumed.weights()["n"]) == 5


@pytest.mark.parametrize("value", [-1, 0, 2.5, "3", True])
def test_a_bad_number_of_epochs_is_one_clear_error(value):
    with pytest.raises(UserError, match="checkpoint.average_last"):
        LastEpochsAverage(value)
