"""Fuzzing ``missci.lora.bundle.read_bundle``: the ``missci_lora.json`` of a LoRA adapter folder.

Bundles are written by ``write_bundle`` (as the fine-tuning runner does, from a resolved ``conf/llm`` whose backend
is a Hydra node) and read back to exactly their values. Junk at every JSON path, deleted keys, NaN/inf, huge
numbers, deep nesting, broken bytes and hostile ``_target_`` / ``_partial_`` / ``${...}`` nodes anywhere end in
one ``UserError``; no planted target is called (tripwires) and the victim file survives.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.model_files import as_bytes, hostile_documents, spoiled_documents
from fuzz.support import SCRATCH, fuzz_settings, outcome, spoiled_bytes, tried
from helpers.hostile import tripwires
from missci.lora.bundle import BUNDLE_FILE, read_bundle, write_bundle
from missci.lora.tasks import CandidateSettings, ChatSettings

READER = "missci_lora.json (read_bundle)"
VICTIM_TEXT = "keep me\n"
BACKENDS = {
    "transformers": {"_target_": "models.llm.backends.TransformersBackend.load", "_partial_": True},
    "vllm": {
        "_target_": "models.llm.vllm_backend.VllmBackend.load",
        "_partial_": True,
        "gpu_memory_utilization": 0.85,
        "max_model_len": None,
        "max_lora_rank": 64,
        "enforce_eager": False,
    },
    # the path of the release before the restructuring (common.renames translates it)
    "old transformers": {"_target_": "models.backends.TransformersBackend.load", "_partial_": True},
}
tiny = st.fixed_dictionaries(
    {"hidden_size": st.integers(8, 64), "num_hidden_layers": st.integers(1, 4), "num_attention_heads": st.just(2)}
)


@st.composite
def llm_blocks(draw) -> dict:
    """A resolved ``conf/llm`` node as a run holds it (its backend the Hydra node of ``conf/llm/backend``)."""
    return {
        "name": draw(st.none() | st.sampled_from(("tiny-llama", "llama2-7b"))),
        "name_or_path": draw(st.sampled_from(("tiny-llama", "meta-llama/Llama-2-7b-chat-hf", "/m/x"))),
        "gguf_file": draw(st.none() | st.just("model.Q4_K_M.gguf")),
        "tokenizer": draw(st.none() | st.just("minilm")),
        "load_in_4bit": draw(st.booleans()),
        "dtype": draw(st.sampled_from(("auto", "float16", "bfloat16"))),
        "device": draw(st.sampled_from(("cpu", "auto", "cuda:0"))),
        "trust_remote_code": False,
        "tiny_config": draw(st.none() | tiny),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "converted_cache": None,
        "backend": dict(BACKENDS[draw(st.sampled_from(sorted(BACKENDS)))]),
    }


@st.composite
def bundles(draw) -> tuple[dict, dict]:
    """``(write_bundle's arguments, the llm block as it must read back)``."""
    llm = draw(llm_blocks())
    name = "vllm" if "vllm" in llm["backend"]["_target_"] else "transformers"
    options = {k: v for k, v in llm["backend"].items() if not k.startswith("_")}
    arguments = {
        "task": draw(st.sampled_from(("missci-gen", "missci-cls"))),
        "llm": llm,
        "prompt": {
            "definitions": draw(st.booleans()),
            "logical_forms": draw(st.booleans()),
            "examples": draw(st.booleans()),
            "num_candidates": draw(st.integers(1, 10)),
        },
        "chat": ChatSettings(draw(st.booleans()), draw(st.none() | st.text(max_size=20))),
        "candidates": CandidateSettings(
            draw(st.integers(1, 10)),
            draw(st.sampled_from(("beam", "sample"))),
            draw(st.integers(1, 512)),
            draw(st.floats(0.01, 2)),
            draw(st.floats(0.01, 1)),
            draw(st.integers(1, 64)),
            draw(st.integers(0, 100)),
        ),
        "lora": {
            "rank": draw(st.integers(1, 64)),
            "alpha": 16,
            "dropout": draw(st.floats(0, 0.5)),
            "target_modules": ["q_proj", "v_proj"],
            "max_train_examples": None,
            "merge": False,
        },
        "trained_on": draw(st.lists(st.text("arg-0123456789", min_size=1, max_size=6), max_size=5, unique=True)),
        "fold": draw(st.none() | st.integers(0, 9)),
    }
    return arguments, {**{k: v for k, v in llm.items() if k != "backend"}, "backend": {"name": name, **options}}


def folder():
    path = SCRATCH / "adapter"
    path.mkdir(parents=True, exist_ok=True)
    return path


def written(arguments: dict) -> dict:
    write_bundle(folder(), **arguments)
    return json.loads((folder() / BUNDLE_FILE).read_text(encoding="utf-8"))


def read(data: bytes):
    (folder() / BUNDLE_FILE).write_bytes(data)
    tried(READER)
    return outcome(lambda: read_bundle(folder()))


@fuzz_settings(250)
@given(bundles())
def test_written_bundles_read_back_to_their_values(drawn):
    arguments, llm = drawn
    content = written(arguments)
    bundle, err = read(json.dumps(content).encode("utf-8"))
    assert err is None, err
    assert bundle["llm"] == llm
    assert bundle["task"] == arguments["task"] and bundle["prompt"] == arguments["prompt"]
    assert bundle["chat"] == vars(arguments["chat"]) and bundle["candidates"] == vars(arguments["candidates"])
    assert bundle["lora"] == arguments["lora"] and bundle["fold"] == arguments["fold"]
    assert bundle["trained_on_arguments"] == sorted(arguments["trained_on"])


@fuzz_settings(400)
@given(bundles(), st.data())
def test_junk_in_a_bundle_ends_in_one_user_error(drawn, data):
    content = written(drawn[0])
    kind, spoiled = data.draw(spoiled_documents(content))
    bundle, err = read(as_bytes(spoiled))
    if kind in ("nan", "nested", "not-an-object"):
        assert err is not None
    if bundle is not None and isinstance(spoiled, dict):
        assert holds(
            {**bundle, "llm": {**bundle["llm"], "backend": {}}}, {**spoiled, "llm": {**spoiled["llm"], "backend": {}}}
        )


def holds(read, given) -> bool:
    """Every value the file gives is the value read (a mapping key by key: defaults may fill the rest)."""
    if isinstance(given, dict) and isinstance(read, dict):
        return all(key in read and holds(read[key], value) for key, value in given.items())
    return read == given and type(read) is type(given)


@fuzz_settings(250)
@given(bundles(), st.data())
def test_hostile_nodes_in_a_bundle_are_refused_and_never_called(drawn, data):
    victim = SCRATCH / "victim" / "VICTIM"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text(VICTIM_TEXT, encoding="utf-8")
    content = written(drawn[0])
    hostile = data.draw(hostile_documents(content, victim))
    with pytest.MonkeyPatch.context() as patch:
        calls = tripwires(patch)
        bundle, err = read(json.dumps(hostile).encode("utf-8"))
    assert calls == [] and victim.read_text(encoding="utf-8") == VICTIM_TEXT
    if err is None:  # only the free text may hold a ${...} string, and it is read as the text it is
        [(path, value)] = changes(content, hostile)
        assert is_free_text(path) and isinstance(value, str) and "${" in value, path
        assert holds(bundle, {key: hostile[key] for key in ("chat", "trained_on_arguments")})
    else:
        assert BUNDLE_FILE in str(err)


def is_free_text(path: tuple) -> bool:
    """The system prompt and the argument ids: text a bundle hands to the chat template or compares as ids, never
    to OmegaConf (missci/lora/bundle.py)."""
    return path == ("chat", "system_prompt") or path[:1] == ("trained_on_arguments",)


def changes(before, after, path: tuple = ()) -> list[tuple[tuple, object]]:
    """The paths where ``after`` differs from ``before``, with the new values."""
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        return [change for key in before for change in changes(before[key], after[key], (*path, key))]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [change for i, (b, a) in enumerate(zip(before, after)) for change in changes(b, a, (*path, i))]
    return [] if before == after else [(path, after)]


@fuzz_settings(100)
@given(bundles(), st.data())
def test_broken_bytes_in_a_bundle_end_in_one_user_error(drawn, data):
    content = written(drawn[0])
    kind, spoiled = data.draw(spoiled_bytes(json.dumps(content, ensure_ascii=False).encode("utf-8")))
    _, err = read(spoiled)
    if kind in ("utf-16", "invalid-utf8", "empty", "blank"):
        assert err is not None
