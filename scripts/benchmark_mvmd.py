"""Benchmark: what do 40 BIO+CRF decoders cost compared with one?

MVMD span-f runs one decoder per (view, label): 2 × 20 = 40. They are batched (one projection to
D × 3 and one CRF with a decoder axis), so they should cost little next to the encoder. This script
measures it on the offline MiniLM encoder with random batches (default 32 posts × ~40 words):
training throughput (posts/s), peak memory, and the decoders' share of a training step.

    python scripts/benchmark_mvmd.py [--steps 5] [--batch-size 32] [--words 40] [--device cpu]

Each configuration runs in its own subprocess, so peak memory (``ru_maxrss`` on CPU,
``torch.cuda.max_memory_allocated`` on GPU) belongs to that configuration alone. The decoders'
share is the time of their forward + backward on the same word vectors (detached from the encoder)
divided by the time of a whole training step (forward, backward, AdamW update).
This is a benchmark, not a test: numbers depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.errors import exit_on_user_error  # noqa: E402

CONFIGS = {"40 decoders (2 views x 20 labels)": (2, 20), "1 decoder (1 view x 1 label)": (1, 1)}


def random_batch(tokenizer, batch_size: int, words: int, num_decoders: int, generator):
    """Posts of ``words ± 25%`` words, each word 1-2 subwords; ~10% of words inside random spans."""
    import torch

    vocab_size = tokenizer.vocab_size
    lengths = torch.randint(int(words * 0.75), int(words * 1.25) + 1, (batch_size,), generator=generator)
    max_words = int(lengths.max())
    pieces = torch.randint(1, 3, (batch_size, max_words), generator=generator)
    starts = torch.zeros(batch_size, max_words, dtype=torch.long)
    word_mask = torch.arange(max_words)[None, :] < lengths[:, None]
    subword_counts = (pieces * word_mask).sum(-1)
    max_subwords = int(subword_counts.max())
    input_ids = torch.full((batch_size, max_subwords), tokenizer.pad_token_id)
    attention = torch.zeros(batch_size, max_subwords, dtype=torch.long)
    for i in range(batch_size):
        n = int(lengths[i])
        starts[i, :n] = torch.cumsum(pieces[i, :n], 0) - pieces[i, :n]
        count = int(subword_counts[i])
        input_ids[i, :count] = torch.randint(1000, vocab_size, (count,), generator=generator)
        attention[i, :count] = 1
    tags = torch.zeros(batch_size, num_decoders, max_words, dtype=torch.long)
    opens = torch.rand(batch_size, num_decoders, max_words, generator=generator) < 0.02
    tags[opens] = 1
    follows = torch.zeros_like(opens)
    follows[:, :, 1:] = opens[:, :, :-1]
    tags[follows & ~opens] = 2
    tags = tags * word_mask[:, None, :]
    return {"input_ids": input_ids, "attention_mask": attention, "word_starts": starts, "word_mask": word_mask,
            "tags": tags, "post_index": torch.arange(batch_size)}


def worker(num_views: int, num_labels: int, args) -> dict:
    import torch

    from models.encoder import ChunkedEncoder
    from models.mvmd import MVMD, gather_words

    torch.manual_seed(0)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    labels = [f"L{i:02d}" for i in range(num_labels)]
    model = MVMD(ChunkedEncoder(args.encoder), num_views=num_views, labels=labels).to(device).train()
    optimizer = model.configure_optimizers()
    generator = torch.Generator().manual_seed(0)
    batches = [{k: v.to(device) for k, v in random_batch(model.encoder.tokenizer, args.batch_size, args.words,
                                                         num_views * num_labels, generator).items()}
               for _ in range(args.steps + 1)]
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def step(batch) -> None:
        optimizer.zero_grad()
        model.decoders.loss(model.emissions(batch), batch["tags"], batch["word_mask"]).backward()
        optimizer.step()

    def decoders_only(batch, words) -> None:
        model.decoders.zero_grad()
        model.decoders.loss(model.decoders.emissions(words), batch["tags"], batch["word_mask"]).backward()

    step(batches[0])  # warm-up
    sync()
    start = time.perf_counter()
    for batch in batches[1:]:
        step(batch)
    sync()
    step_time = (time.perf_counter() - start) / args.steps

    with torch.no_grad():
        word_vectors = [gather_words(model.encoder(b["input_ids"], b["attention_mask"])[0], b["word_starts"])
                        for b in batches[1:]]
    decoders_only(batches[1], word_vectors[0].detach().requires_grad_())  # warm-up
    sync()
    start = time.perf_counter()
    for batch, words in zip(batches[1:], word_vectors):
        decoders_only(batch, words.detach().requires_grad_())
    sync()
    decoder_time = (time.perf_counter() - start) / args.steps

    if device.type == "cuda":
        peak_mb = torch.cuda.max_memory_allocated(device) / 2**20
        training_mb = peak_mb
    else:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
        peak_mb, training_mb = peak_kb / 1024, (peak_kb - rss_before) / 1024
    return {"decoders": num_views * num_labels, "posts_per_s": args.batch_size / step_time,
            "step_ms": step_time * 1000, "decoder_ms": decoder_time * 1000,
            "decoder_share": decoder_time / step_time, "peak_mb": peak_mb, "training_mb": training_mb,
            "parameters": sum(p.numel() for p in model.decoders.parameters())}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5, help="timed training steps per configuration")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--words", type=int, default=40, help="mean words per post")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--encoder", default=None, help="encoder folder (default: the offline MiniLM)")
    parser.add_argument("--worker", nargs=2, type=int, metavar=("VIEWS", "LABELS"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def forward_args(args) -> list[str]:
    flags = ["--steps", str(args.steps), "--batch-size", str(args.batch_size), "--words", str(args.words),
             "--device", args.device, "--threads", str(args.threads)]
    return flags + (["--encoder", args.encoder] if args.encoder else [])


@exit_on_user_error
def main(argv=None) -> None:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker, args)))
        return
    results = {}
    for name, (views, labels) in CONFIGS.items():
        done = subprocess.run([sys.executable, __file__, "--worker", str(views), str(labels), *forward_args(args)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise SystemExit(f"the {name} run failed")
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [("posts/s (training)", "posts_per_s", "{:.1f}"), ("step time (ms)", "step_ms", "{:.0f}"),
            ("decoders fwd+bwd (ms)", "decoder_ms", "{:.1f}"), ("decoders' share of a step", "decoder_share", "{:.1%}"),
            ("peak memory (MB)", "peak_mb", "{:.0f}"), ("growth while training (MB)", "training_mb", "{:.0f}"),
            ("decoder parameters", "parameters", "{:,}")]
    names = list(results)
    print(f"MVMD training benchmark: {args.batch_size} posts x ~{args.words} words, {args.steps} steps, "
          f"device {args.device}")
    print(f"| {'':28} | " + " | ".join(f"{n:>34}" for n in names) + " |")
    print(f"|{'-' * 30}|" + "|".join("-" * 36 for _ in names) + "|")
    for label, key, fmt in rows:
        print(f"| {label:28} | " + " | ".join(f"{fmt.format(results[n][key]):>34}" for n in names) + " |")


if __name__ == "__main__":
    main()
