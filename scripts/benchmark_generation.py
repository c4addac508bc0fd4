"""Generation throughput and model loading, side by side in one run: batch size 1 (the old default) against
length-sorted, left-padded batches, and a GGUF load without / with the converted-model cache.

    python scripts/benchmark_generation.py                          # SmolLM2, 8 Missci dev prompts
    python scripts/benchmark_generation.py --prompts 16 --batch-sizes 1,8,16 --max-new-tokens 256
    python scripts/benchmark_generation.py --skip-load              # generation only
    python scripts/benchmark_generation.py --skip-load --dtypes float32,bfloat16 --batch-sizes 1,16
    python scripts/benchmark_generation.py --skip-load --step-sizes 1,8,16,32  # what a batch size buys
    python scripts/benchmark_generation.py --skip-load --beams 3        # LoRA candidates: shared prefill or not

``--dtypes`` runs the generation once per weight dtype (``llm.dtype``; bf16 matmuls are native on CPUs with
AVX512-BF16 or AMX): batch sizes are compared with batch size 1 of the same dtype, and each later dtype's answers
are compared with the first dtype's (bf16 rounds differently, so some greedy answers may change).

Prompts are the Missci zero-shot reconstruction prompts of the dev split (task defaults: class definitions,
3 ranked answers, the model's chat template), greedy decoding as ``task=missci-gen mode=zero-shot`` runs it.
tokens/s counts the new tokens of every answer (its end token included); every batch size must reproduce the
answers of batch size 1 exactly, else the run says which differ and exits non-zero.

Loading runs in child processes (each load starts cold in its own interpreter): ``off`` (cache switched off:
the GGUF file is de-quantised, as before), ``first`` (empty cache folder: convert, save, load the copy) and
``second`` (the same folder again). Each child also prints a checksum of the model's logits on a fixed input,
so the cached model is shown to be the same model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def llm_config(name: str) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "llm" / f"{name}.yaml"), resolve=True)


def phase_load(args) -> dict:
    """Load the model once (the cache setting comes from FALLACY_MODEL_CACHE) and fingerprint it."""
    import torch

    from models.llm.backends import spec_from_config
    from models.llm.loading import load_causal_lm

    start = time.perf_counter()
    model, tokenizer = load_causal_lm(spec_from_config({**llm_config(args.llm), "device": "cpu"}))
    seconds = time.perf_counter() - start
    ids = tokenizer("Premise: one study. Claim: all studies.", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    return {
        "seconds": seconds,
        "logit_sum": float(logits.double().sum()),
        "vocab": len(tokenizer),
        "chat_template": bool(tokenizer.chat_template),
    }


def missci_prompts(args) -> list[str]:
    from missci.dataset.reader import iter_fallacies, load_split
    from missci.prompting.prompts import PromptOptions, reconstruction_prompt

    pairs = list(iter_fallacies(load_split("dev", args.data)))[: args.prompts]
    return [reconstruction_prompt(a, f, PromptOptions()) for a, f in pairs]


def phase_generate(args) -> dict:
    import torch

    from models.llm.backends import build_backend
    from models.llm.generation import GenerationSettings, encode_prompts

    backend = build_backend({**llm_config(args.llm), "device": "cpu", "dtype": args.phase_dtype})
    tokenizer = backend.tokenizer
    prompts = missci_prompts(args)
    prompt_tokens = [len(ids) for ids in encode_prompts(tokenizer, prompts)]
    rows, reference = [], None
    for batch_size in args.batch_sizes:
        settings = GenerationSettings(max_new_tokens=args.max_new_tokens, batch_size=batch_size)
        start = time.perf_counter()
        answers = backend.generate(prompts, settings)
        seconds = time.perf_counter() - start
        tokens = sum(
            min(len(tokenizer(a, add_special_tokens=False)["input_ids"]) + 1, args.max_new_tokens) for a in answers
        )
        reference = reference if reference is not None else answers
        differ = [i for i, (a, b) in enumerate(zip(reference, answers)) if a != b]
        rows.append(
            {
                "batch_size": batch_size,
                "seconds": seconds,
                "tokens": tokens,
                "tokens_per_s": tokens / seconds,
                "differ_from_first": differ,
            }
        )
        print(f"batch size {batch_size}: {tokens} tokens in {seconds:.1f} s", file=sys.stderr, flush=True)
    return {
        "dtype": args.phase_dtype,
        "prompts": len(prompts),
        "prompt_tokens_mean": sum(prompt_tokens) / len(prompt_tokens),
        "max_new_tokens": args.max_new_tokens,
        "threads": torch.get_num_threads(),
        "rows": rows,
        "answers": reference,
    }


def phase_steps(args) -> dict:
    """Cost of the two halves of generation per batch size, on random prompts of the Missci prompt length:
    prefill (every prompt token once, compute-bound) and one decoding step with the prompt in the cache (reads
    all weights once whatever the batch size: memory-bound for small batches). What a batch size buys is the
    decoding cost per token; prefill per prompt does not shrink."""
    import torch

    from models.llm.backends import spec_from_config
    from models.llm.loading import load_causal_lm

    model, _ = load_causal_lm(spec_from_config({**llm_config(args.llm), "device": "cpu", "dtype": args.phase_dtype}))
    generator = torch.Generator().manual_seed(0)
    rows = []
    for batch_size in args.step_sizes:
        ids = torch.randint(100, 1000, (batch_size, args.step_prompt_tokens), generator=generator)
        with torch.no_grad():
            start = time.perf_counter()
            cache = model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values
            prefill = time.perf_counter() - start
            token = torch.randint(100, 1000, (batch_size, 1), generator=generator)
            start = time.perf_counter()
            for _ in range(args.steps):
                cache = model(input_ids=token, past_key_values=cache, use_cache=True, logits_to_keep=1).past_key_values
            step = (time.perf_counter() - start) / args.steps
        rows.append(
            {
                "batch_size": batch_size,
                "prefill_s_per_prompt": prefill / batch_size,
                "step_ms": step * 1000,
                "step_ms_per_token": step * 1000 / batch_size,
            }
        )
        print(
            f"steps: batch size {batch_size}: prefill {prefill:.1f} s, step {step * 1000:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
    return {
        "dtype": args.phase_dtype,
        "prompt_tokens": args.step_prompt_tokens,
        "steps": args.steps,
        "threads": torch.get_num_threads(),
        "rows": rows,
    }


def phase_beams(args) -> dict:
    """Ranked candidates (beam search, ``--beams`` k) of the same prompts in one batch, with the prompts
    prefilled once and their cache copied k times (the default) and copied k times by ``generate`` (before)."""
    import torch

    from models.llm.backends import build_backend
    from models.llm.generation import encode_prompts, generate_token_batches

    backend = build_backend({**llm_config(args.llm), "device": "cpu", "dtype": args.phase_dtype})
    token_ids = encode_prompts(backend.tokenizer, missci_prompts(args))
    rows, answers = [], {}
    for shared in (False, True):
        start = time.perf_counter()
        answers[shared] = generate_token_batches(
            backend.model,
            backend.tokenizer,
            token_ids,
            len(token_ids),
            num_return_sequences=args.beams,
            shared_prefill=shared,
            num_beams=args.beams,
            do_sample=False,
            max_new_tokens=args.max_new_tokens,
        )
        rows.append({"shared_prefill": shared, "seconds": time.perf_counter() - start})
        print(f"beams: shared prefill {shared}: {rows[-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
    return {
        "dtype": args.phase_dtype,
        "beams": args.beams,
        "prompts": len(token_ids),
        "threads": torch.get_num_threads(),
        "rows": rows,
        "same_candidates": answers[False] == answers[True],
    }


PHASES = {"load": phase_load, "generate": phase_generate, "steps": phase_steps, "beams": phase_beams}


def child(argv: list[str], phase: str, env: dict[str, str]) -> dict:
    # stderr passes through: progress of the long phases, and the traceback of a failed one
    done = subprocess.run(
        [sys.executable, __file__, *argv, "--phase", phase],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    if done.returncode != 0:
        raise SystemExit(done.returncode)
    return json.loads(done.stdout.strip().splitlines()[-1])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", default="smollm2", help="a conf/llm/<name>.yaml (default smollm2)")
    parser.add_argument("--data", default=None, help="Missci folder (default: $MISSCI_DATA, else data/missci)")
    parser.add_argument("--prompts", type=int, default=8, help="first N R_i of the dev split")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 8])
    parser.add_argument(
        "--dtypes",
        type=lambda s: s.split(","),
        default=["float32"],
        help="weight dtypes to generate with, comma-separated (float32, bfloat16)",
    )
    parser.add_argument("--skip-load", action="store_true", help="do not time the loads")
    parser.add_argument(
        "--step-sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[],
        help="also time prefill and one decoding step at these batch sizes (e.g. 1,8,16,32)",
    )
    parser.add_argument("--step-prompt-tokens", type=int, default=570, help="prompt length of --step-sizes")
    parser.add_argument("--steps", type=int, default=10, help="decoding steps averaged by --step-sizes")
    parser.add_argument(
        "--beams",
        type=int,
        default=0,
        help="also time k-beam candidates of all prompts in one batch, with and without the "
        "shared prefill (e.g. 3, the LoRA candidates' default)",
    )
    parser.add_argument("--phase", choices=sorted(PHASES), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--phase-dtype", default="float32", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    return parser


def main(argv=None) -> dict:
    argv = list(argv if argv is not None else sys.argv[1:])
    args = build_parser().parse_args(argv)
    if args.phase:
        print(json.dumps(PHASES[args.phase](args)))
        return {}
    result: dict = {"llm": args.llm, "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()[0]}
    if not args.skip_load:
        with tempfile.TemporaryDirectory(prefix="gguf-cache-") as folder:
            result["load"] = {
                "off": child(argv, "load", {"FALLACY_MODEL_CACHE": "off"}),
                "first": child(argv, "load", {"FALLACY_MODEL_CACHE": folder}),
                "second": child(argv, "load", {"FALLACY_MODEL_CACHE": folder}),
            }
    if args.step_sizes:
        result["steps_by_dtype"] = [child([*argv, "--phase-dtype", dtype], "steps", {}) for dtype in args.dtypes]
    if args.beams > 1:
        result["beams"] = child([*argv, "--phase-dtype", args.dtypes[0]], "beams", {})
    result["generate_by_dtype"] = [child([*argv, "--phase-dtype", dtype], "generate", {}) for dtype in args.dtypes]
    result["generate"] = result["generate_by_dtype"][0]
    first_answers = result["generate"]["answers"]
    for gen in result["generate_by_dtype"]:
        gen["differ_from_first_dtype"] = [i for i, (a, b) in enumerate(zip(first_answers, gen["answers"])) if a != b]
    result["loadavg_end"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"generation benchmark: llm={args.llm} cpus={result['cpus']} "
            f"load average {result['loadavg_start']:.1f} -> {result['loadavg_end']:.1f}"
        )
        if "load" in result:
            load = result["load"]
            same = len({round(v["logit_sum"], 3) for v in load.values()}) == 1
            print("| model load | seconds |\n|---|---|")
            for name, label in (
                ("off", "GGUF, no cache"),
                ("first", "first load (convert + cache)"),
                ("second", "second load (cached safetensors)"),
            ):
                print(f"| {label} | {load[name]['seconds']:.1f} |")
            print(f"same logits from all three: {'yes' if same else 'NO'}")
        for steps in result.get("steps_by_dtype", []):
            print(
                f"\nprefill and decoding cost, {steps['prompt_tokens']} random prompt tokens, {steps['dtype']}, "
                f"torch threads={steps['threads']}, mean of {steps['steps']} steps"
            )
            print("| batch size | prefill s/prompt | decoding step ms | ms per new token |\n|---|---|---|---|")
            for row in steps["rows"]:
                print(
                    f"| {row['batch_size']} | {row['prefill_s_per_prompt']:.2f} | {row['step_ms']:.0f} | "
                    f"{row['step_ms_per_token']:.1f} |"
                )
        if "beams" in result:
            beams = result["beams"]
            before, after = (row["seconds"] for row in beams["rows"])
            print(
                f"\n{beams['prompts']} prompts, {beams['beams']} beams each, one batch, {beams['dtype']}, "
                f"torch threads={beams['threads']}"
            )
            print("| prompt prefill | seconds | speed-up |\n|---|---|---|")
            print(f"| copied {beams['beams']} times by generate (before) | {before:.1f} | 1.00x |")
            print(f"| once per prompt, cache copied (default) | {after:.1f} | {before / after:.2f}x |")
            print(f"same candidates: {'yes' if beams['same_candidates'] else 'NO'}")
        first = result["generate"]
        base = first["rows"][0]["tokens_per_s"]
        print(
            f"\n{first['prompts']} Missci dev prompts (mean {first['prompt_tokens_mean']:.0f} prompt tokens), "
            f"greedy, max_new_tokens={first['max_new_tokens']}, torch threads={first['threads']}; speed-up over "
            f"the first row (batch size {first['rows'][0]['batch_size']}, {first['dtype']})"
        )
        print("| dtype | batch size | new tokens | seconds | tokens/s | speed-up | answers as batch size 1 |")
        print("|---|---|---|---|---|---|---|")
        for gen in result["generate_by_dtype"]:
            for row in gen["rows"]:
                same = "yes" if not row["differ_from_first"] else f"NO (prompts {row['differ_from_first']})"
                print(
                    f"| {gen['dtype']} | {row['batch_size']} | {row['tokens']} | {row['seconds']:.1f} | "
                    f"{row['tokens_per_s']:.2f} | {row['tokens_per_s'] / base:.2f}x | {same} |"
                )
        for gen in result["generate_by_dtype"][1:]:
            print(
                f"{gen['dtype']} answers that differ from {first['dtype']}: {len(gen['differ_from_first_dtype'])} "
                f"of {gen['prompts']}"
            )
    if any(row["differ_from_first"] for gen in result["generate_by_dtype"] for row in gen["rows"]) or not result.get(
        "beams", {}
    ).get("same_candidates", True):
        raise SystemExit(1)
    return result


if __name__ == "__main__":
    main()
