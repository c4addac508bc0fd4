"""Fuzzing ``models.weights_file.load_weights``: a ``model.safetensors`` checked against the model its config builds.

The model is the tiny untrained MVMD of ``fuzz.model_files`` (built once). Its own weights load and give back
exactly its tensors; files truncated anywhere, with garbage bytes, a damaged header (junk at any JSON path of
the header, a wrong length prefix), a tensor renamed, reshaped, dropped or added, or a NaN weight end in one
``UserError``. Garbage landing inside tensor data is a valid file with other numbers: it must load exactly them.
"""

from __future__ import annotations

import json
import math
import struct

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from safetensors.torch import load_file, save

from fuzz.missci_files import json_paths, replaced
from fuzz.model_files import tiny_model, tiny_state, tiny_weights
from fuzz.support import fuzz_settings, json_junk, outcome, scratch_file, tried

READER = "model.safetensors (load_weights)"
# decision and calibration buffers that exports of earlier releases lack: a file without one loads with the
# untuned, uncalibrated default
OPTIONAL = {
    "decision_o_bias": 0.0,
    "calibration_scale": 1.0,
    "calibration_shift": 0.0,
    "calibration_weight": 1.0,
    "calibration_prior": 0.0,
}
FIX = "export the model again"


@pytest.fixture(scope="module", autouse=True)
def artefacts():
    tiny_weights()


def load(data: bytes):
    from models.weights_file import load_weights

    path = scratch_file("weights/model.safetensors", data)
    model, _ = tiny_model()
    tried(READER)
    return outcome(lambda: load_weights(path, model, FIX)), path


def assert_model_holds(path):
    model, _ = tiny_model()
    held = model.state_dict()
    for name, tensor in load_file(str(path)).items():
        assert torch.equal(held[name], tensor.to(held[name].dtype)), name


def split(data: bytes) -> tuple[dict, bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + length]), data[8 + length :]


def joined(header, body: bytes) -> bytes:
    text = json.dumps(header).encode("utf-8")
    return struct.pack("<Q", len(text)) + text + body


@fuzz_settings(60)
@given(st.integers(0, 2**31 - 1))
def test_the_models_own_weights_load_back_exactly(seed):
    generator = torch.Generator().manual_seed(seed)
    state = {
        name: torch.randn(tensor.shape, generator=generator).to(tensor.dtype) if tensor.is_floating_point() else tensor
        for name, tensor in tiny_state().items()
    }
    (_, err), path = load(save(state))
    assert err is None, err
    model, _ = tiny_model()
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, state[name]), name


@fuzz_settings(350)
@given(st.data())
def test_truncated_and_garbled_files_end_in_one_user_error_or_load_exactly_their_tensors(data):
    raw = tiny_weights()
    kind = data.draw(st.sampled_from(("truncated", "overwrite", "insert", "prefix", "garbage")))
    if kind == "truncated":
        spoiled = raw[: data.draw(st.integers(0, len(raw) - 1))]
    elif kind == "overwrite":
        at = data.draw(st.integers(0, len(raw) - 1))
        junk = data.draw(st.binary(min_size=1, max_size=16))
        spoiled = raw[:at] + junk + raw[at + len(junk) :]
    elif kind == "insert":
        at = data.draw(st.integers(0, len(raw)))
        spoiled = raw[:at] + data.draw(st.binary(min_size=1, max_size=16)) + raw[at:]
    elif kind == "prefix":  # the header length: 0, past the end, absurd
        spoiled = struct.pack("<Q", data.draw(st.sampled_from((0, 1, len(raw), 2**40, 2**64 - 1)))) + raw[8:]
    else:
        spoiled = data.draw(st.binary(max_size=200))
    (_, err), path = load(spoiled)
    if kind in ("truncated", "prefix", "garbage", "insert"):
        assert err is not None, kind
    if err is None:
        assert_model_holds(path)


@fuzz_settings(400)
@given(st.data())
def test_junk_in_the_header_ends_in_one_user_error_or_loads_exactly_its_tensors(data):
    header, body = split(tiny_weights())
    path = data.draw(st.sampled_from(json_paths(header)))
    delete = data.draw(st.booleans())
    value = None if delete else data.draw(json_junk() | st.sampled_from(("F16", "I64", "BOOL", "F64", "U8")))
    (_, err), file = load(joined(replaced(header, path, value, delete), body))
    if err is None:
        assert_model_holds(file)


@fuzz_settings(250)
@given(st.data())
def test_tensors_of_another_model_end_in_one_user_error(data):
    state = dict(tiny_state())
    name = data.draw(st.sampled_from(sorted(state)))
    kind = data.draw(st.sampled_from(("rename", "reshape", "drop", "add", "nan", "dtype")))
    if kind == "rename":
        state[name + data.draw(st.sampled_from((".x", "_", "0")))] = state.pop(name)
    elif kind == "reshape":
        state[name] = torch.zeros(*[d + 1 for d in state[name].shape] or [2])
    elif kind == "drop":
        del state[name]
    elif kind == "add":
        state[data.draw(st.sampled_from(("extra", "encoder.model.extra", "head.bias2")))] = torch.zeros(3)
    elif kind == "nan":
        floats = sorted(k for k, v in state.items() if v.is_floating_point() and v.numel())
        name = data.draw(st.sampled_from(floats))
        tensor = state[name].clone().reshape(-1)
        tensor[data.draw(st.integers(0, tensor.numel() - 1))] = data.draw(st.sampled_from((math.nan, math.inf)))
        state[name] = tensor.reshape(state[name].shape)
    else:
        state[name] = state[name].to(data.draw(st.sampled_from((torch.float16, torch.int64, torch.bool))))
    (_, err), path = load(save(state))
    if kind == "drop" and name in OPTIONAL:
        assert err is None, err
        model, _ = tiny_model()
        assert bool((model.state_dict()[name] == OPTIONAL[name]).all())
    elif kind != "dtype":
        assert err is not None, kind
    elif err is None:
        assert_model_holds(path)
