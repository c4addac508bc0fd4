"""Throughput and peak memory of LoRA training and of ranked-candidate generation on Missci prompts.

    python scripts/benchmark_lora.py                       # SmolLM2 (offline default) on this machine
    python scripts/benchmark_lora.py --llm tiny-llama --steps 2 --prompts 1
    python scripts/benchmark_lora.py --llm llama2-7b --device cuda --json

Each phase (training, generation) runs in its own child process, so its peak memory is its own: peak
resident set size on a CPU (``ru_maxrss``: model loading included, so "after load" is printed too), peak
allocated CUDA memory on a GPU. Training tokens/s counts every input token of a step (prompt + answer);
generation tokens/s counts the new tokens of all k returned sequences. Examples are real Missci prompts
(dev split, zero-shot template with the class names only, so a CPU run stays short).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def rss_mib() -> float:
    """Current resident set size of this process (Linux /proc), MiB."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib(device: str) -> float:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def load(args):
    from omegaconf import OmegaConf

    from missci.lora.runner import load_base_model

    llm = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "llm" / f"{args.llm}.yaml"), resolve=True)
    llm["device"] = args.device
    start = time.perf_counter()
    model, tokenizer, quantized = load_base_model(llm)
    return model, tokenizer, quantized, time.perf_counter() - start


def missci_examples(args):
    from missci.dataset.reader import load_split
    from missci.lora.sft_data import reconstruction_examples
    from missci.prompting.prompts import PromptOptions

    options = PromptOptions(definitions=False, num_candidates=args.candidates)
    return load_split("dev", args.data), options, reconstruction_examples(load_split("dev", args.data), options)


def phase_train(args) -> dict:
    import torch

    from missci.lora.sft_data import encode_examples
    from models.llm.lora_lm import LoraSettings, add_lora, answer_only_loss, count_parameters, pad_batch

    model, tokenizer, quantized, load_s = load(args)
    after_load = rss_mib()
    peft_model = add_lora(model, LoraSettings(rank=args.rank, alpha=2 * args.rank), quantized)
    peft_model.train()
    _, _, examples = missci_examples(args)
    features = encode_examples(tokenizer, examples[: args.steps * args.batch_size])
    optimiser = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=1e-4)
    device = next(peft_model.parameters()).device
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    tokens, start = 0, time.perf_counter()
    for step in range(args.steps):
        batch = pad_batch(features[step * args.batch_size : (step + 1) * args.batch_size], tokenizer.pad_token_id)
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = peft_model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
        ).logits
        answer_only_loss(logits, batch["labels"]).backward()
        optimiser.step()
        optimiser.zero_grad()
        tokens += int(batch["attention_mask"].sum())
    seconds = time.perf_counter() - start
    trainable, total = count_parameters(peft_model)
    return {
        "phase": "train",
        "load_s": load_s,
        "seconds": seconds,
        "tokens": tokens,
        "tokens_per_s": tokens / seconds,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "mean_sequence_tokens": tokens / (args.steps * args.batch_size),
        "trainable_parameters": trainable,
        "total_parameters": total,
        "rss_after_load_mib": after_load,
        "peak_mib": peak_mib(args.device),
    }


def phase_generate(args) -> dict:
    import torch

    from missci.dataset.reader import iter_fallacies
    from missci.lora.tasks import CandidateSettings, generate_candidates
    from missci.prompting.prompts import reconstruction_prompt
    from models.llm.lora_lm import LoraSettings, add_lora

    model, tokenizer, quantized, load_s = load(args)
    after_load = rss_mib()
    peft_model = add_lora(model, LoraSettings(rank=args.rank, alpha=2 * args.rank), quantized).eval()
    peft_model.config.use_cache = True
    arguments, options, _ = missci_examples(args)
    prompts = [reconstruction_prompt(a, f, options) for a, f in list(iter_fallacies(arguments))[: args.prompts]]
    settings = CandidateSettings(
        num_candidates=args.candidates, strategy=args.strategy, max_new_tokens=args.max_new_tokens
    )
    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    outputs = generate_candidates(peft_model, tokenizer, prompts, settings)
    seconds = time.perf_counter() - start
    new_tokens = sum(
        len(tokenizer(text, add_special_tokens=False)["input_ids"]) + 1 for texts in outputs for text in texts
    )  # +1: the closing end token
    return {
        "phase": "generate",
        "load_s": load_s,
        "seconds": seconds,
        "tokens": new_tokens,
        "tokens_per_s": new_tokens / seconds,
        "prompts": len(prompts),
        "candidates": args.candidates,
        "strategy": args.strategy,
        "max_new_tokens": args.max_new_tokens,
        "rss_after_load_mib": after_load,
        "peak_mib": peak_mib(args.device),
    }


PHASES = {"train": phase_train, "generate": phase_generate}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", default="smollm2", help="a conf/llm/<name>.yaml (default smollm2)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data", default=None, help="Missci folder (default: $MISSCI_DATA, else data/missci)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--strategy", choices=["beam", "sample"], default="beam")
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--phase", choices=sorted(PHASES), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    return parser


def main(argv=None) -> list[dict]:
    from common.errors import exit_on_user_error

    args = build_parser().parse_args(argv)
    if args.phase:
        print(json.dumps(exit_on_user_error(PHASES[args.phase])(args)))
        return []
    results = []
    for phase in ("train", "generate"):
        child = subprocess.run(
            [sys.executable, __file__, *(argv if argv is not None else sys.argv[1:]), "--phase", phase],
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            sys.stderr.write(child.stderr[-3000:])
            raise SystemExit(child.returncode)
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"LoRA benchmark: llm={args.llm} device={args.device} threads={os.cpu_count()} rank={args.rank}")
        print("| phase | tokens | seconds | tokens/s | peak MiB | MiB after load | model load s |")
        print("|---|---|---|---|---|---|---|")
        for r in results:
            print(
                f"| {r['phase']} | {r['tokens']} | {r['seconds']:.1f} | {r['tokens_per_s']:.1f} | "
                f"{r['peak_mib']:.0f} | {r['rss_after_load_mib']:.0f} | {r['load_s']:.1f} |"
            )
    return results


if __name__ == "__main__":
    main()
