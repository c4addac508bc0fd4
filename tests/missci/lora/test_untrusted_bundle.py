"""A LoRA adapter bundle from someone else is data: its backend is a name, hostile or wrong fields end in one message.

An adapter folder is made without training (a tiny random Llama with a fresh LoRA adapter) and its
``missci_lora.json`` written as today's runner writes it; the earlier release's bundle (``llm.backend`` a Hydra
``_target_`` node, the old ``models.backends`` path included) still loads and generates the same text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from common.errors import UserError
from helpers.hostile import FAMILIES, issue_payload, tripwires, with_node
from helpers.lora import compose, tiny_spec
from missci.lora.tasks import BUNDLE_FILE, CandidateSettings, ChatSettings, load_tuned_backend, write_bundle
from models.llm.backends import Decoding

PROMPTS = ["the claim is false", "masks work, so every mask works everywhere"]


@pytest.fixture(scope="module")
def adapter(tmp_path_factory) -> Path:
    from models.llm.loading import load_causal_lm
    from models.llm.lora_lm import LoraSettings, add_lora, save_adapter

    cfg = compose(["task=missci-gen", "llm=tiny-llama"])
    llm = OmegaConf.to_container(cfg.llm, resolve=True)
    llm["tiny_config"] = dict(tiny_spec().tiny_config)  # the helpers' 2-layer model
    model, _ = load_causal_lm(tiny_spec())
    peft_model = add_lora(model, LoraSettings(rank=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"]))
    folder = save_adapter(peft_model, tmp_path_factory.mktemp("adapter") / "adapter")
    settings = OmegaConf.to_container(cfg.task, resolve=True)
    write_bundle(
        folder,
        task="missci-gen",
        llm=llm,
        prompt=settings["prompt"],
        chat=ChatSettings(),
        candidates=CandidateSettings(),
        lora=settings["lora"],
        trained_on=["a1"],
        fold=0,
    )
    return folder


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "VICTIM"
    path.write_text("keep me\n", encoding="utf-8")
    return path


def bundle_of(folder: Path) -> dict:
    return json.loads((folder / BUNDLE_FILE).read_text(encoding="utf-8"))


def copy_with(adapter: Path, tmp_path: Path, bundle: dict) -> Path:
    import shutil

    folder = tmp_path / "adapter"
    shutil.copytree(adapter, folder)
    (folder / BUNDLE_FILE).write_text(json.dumps(bundle), encoding="utf-8")
    return folder


def answers(folder: Path) -> list[list[str]]:
    backend, _ = load_tuned_backend(folder, device="cpu")
    return backend.complete_prompts(PROMPTS, Decoding(max_new_tokens=4))


def test_the_bundle_names_its_backend(adapter):
    bundle = bundle_of(adapter)
    assert bundle["llm"]["backend"] == {"name": "transformers"}
    assert "_target_" not in json.dumps(bundle) and "_partial_" not in json.dumps(bundle)


@pytest.mark.parametrize(
    "old_target", ["models.llm.backends.TransformersBackend.load", "models.backends.TransformersBackend.load"]
)
def test_a_bundle_of_the_earlier_release_generates_what_todays_does(adapter, tmp_path, old_target):
    old = with_node(bundle_of(adapter), "llm.backend", {"_target_": old_target, "_partial_": True})
    assert answers(copy_with(adapter, tmp_path, old)) == answers(adapter)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_target_family_runs_from_a_bundle(adapter, tmp_path, victim, family, monkeypatch):
    node = FAMILIES[family][0](victim)
    if "_target_" not in node:  # the named families: a backend with code keys beside its name
        node = {**node, "name": "transformers"}
    folder = copy_with(adapter, tmp_path, with_node(bundle_of(adapter), "llm.backend", node))
    calls = tripwires(monkeypatch)
    with pytest.raises(UserError) as caught:
        load_tuned_backend(folder, device="cpu")
    monkeypatch.undo()
    assert str(folder / BUNDLE_FILE) in str(caught.value) and "llm.backend" in str(caught.value)
    assert calls == [] and victim.read_text(encoding="utf-8") == "keep me\n"


def test_the_issue_payload_as_the_backend_exits_2_with_one_message(adapter, tmp_path, victim, capsys):
    from missci.predict_lora import main

    folder = copy_with(adapter, tmp_path, with_node(bundle_of(adapter), "llm.backend", issue_payload(victim)))
    with pytest.raises(SystemExit) as exited:
        main([str(folder), "--out", str(tmp_path / "out.jsonl"), "--data", "sample"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "llm.backend._target_" in err[0]
    assert victim.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize(
    "key, value, field",
    [
        ("llm.backend", {"name": "vllm", "worker_extension_cls": "evil.Worker"}, "llm.backend.worker_extension_cls"),
        ("llm.backend", {"name": "ollama"}, "llm.backend.name"),
        ("llm.extra", {"device_map": "auto"}, "llm.extra"),
        ("llm.dtype", "load", "llm.dtype"),
        ("llm.device", "cuda; rm -rf /", "llm.device"),
        ("llm.gguf_file", "../../etc/passwd", "llm.gguf_file"),
        ("llm.trust_remote_code", True, "llm.trust_remote_code"),
        ("task", "missci-anything", "task"),
        ("candidates.num_candidates", 0, "candidates.num_candidates"),
        ("candidates.top_p", 1.5, "candidates.top_p"),
        ("candidates.strategy", "exec", "candidates.strategy"),
        ("prompt.definitions", "yes", "prompt.definitions"),
        ("lora.rank", {"_target_": "os.system"}, "lora.rank._target_"),
        ("trained_on_arguments", "a1", "trained_on_arguments"),
    ],
)
def test_a_wrong_bundle_field_is_one_message_naming_it(adapter, tmp_path, key, value, field):
    folder = copy_with(adapter, tmp_path, with_node(bundle_of(adapter), key, value))
    with pytest.raises(UserError) as caught:
        load_tuned_backend(folder, device="cpu")
    assert str(folder / BUNDLE_FILE) in str(caught.value) and field in str(caught.value)


def test_trust_remote_code_of_a_bundle_needs_the_users_consent(adapter, tmp_path):
    folder = copy_with(adapter, tmp_path, with_node(bundle_of(adapter), "llm.trust_remote_code", True))
    with pytest.raises(UserError, match="--trust-remote-code"):
        load_tuned_backend(folder, device="cpu")
    consent = True  # the user's own choice, as --trust-remote-code gives it (the tiny model has no code)
    backend, bundle = load_tuned_backend(folder, device="cpu", trust_remote_code=consent)
    assert bundle["llm"]["trust_remote_code"] is True and backend.tokenizer is not None
