"""Benchmark: fitting span O biases (``o_bias=tuned``, ``models/decision_rules.py``) with the candidates decoded
one by one against all candidates decoded as one batch (``SpanDev.sums_many``), side by side in one run.

Each of the 17 grid biases needs a Viterbi pass over dev. One by one, that is 17 Python loops over the words of
dev; batched, it is one loop over batches 17 times as wide (in chunks of at most ``--budget`` emission scores,
which bounds the memory). The two give the same sums, element by element (checked here, and in
``tests/models/test_decision_rule_scopes.py``). Each method runs in a fresh child process, so the peak resident
memory it reports (``ru_maxrss``) is its own; time is that process's CPU time (user + system, all threads) of the
fit, median over ``--rounds``.

    python scripts/benchmark_decision_rules.py [--posts 200] [--decoders 40] [--words 60] [--rounds 3]

The defaults are Faina-sized: a dev split of 200 posts, 2 views × 20 labels, posts padded to 60 words.
This is a benchmark, not a test: numbers depend on the machine and its load; compare ratios.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import sys
import time


def synthetic_dev(posts: int, decoders: int, words: int, seed: int = 0):
    """A ``SpanDev`` of random but informative emissions (gold tags scored up), posts of varied length."""
    import torch

    from models.crf import B, BatchedBIOCRF, I
    from models.decision_rules import SpanDev

    generator = torch.Generator().manual_seed(seed)
    roll = torch.rand(posts, decoders, words, generator=generator)
    gold = torch.where(roll < 0.03, B, torch.where(roll < 0.06, I, 0))
    gold[..., 0] = torch.where(gold[..., 0] == I, B, gold[..., 0])
    previous = torch.nn.functional.pad(gold[..., :-1], (1, 0))
    gold = torch.where((gold == I) & (previous == 0), B, gold)  # every I continues a span
    lengths = torch.randint(words // 4, words + 1, (posts,), generator=generator)
    mask = torch.arange(words)[None, :] < lengths[:, None]
    gold = gold * mask[:, None, :]
    emissions = torch.randn(posts, decoders, words, 3, generator=generator)
    emissions.scatter_add_(-1, gold.unsqueeze(-1), torch.full((posts, decoders, words, 1), 1.5))
    crf = BatchedBIOCRF(decoders)
    with torch.no_grad():
        crf.transitions.normal_(generator=generator)
    return SpanDev(crf, [(emissions, gold, mask)])


def _fit(method: str, posts: int, decoders: int, words: int, budget: int, queue) -> None:
    import torch

    from models.crf import BatchedBIOCRF  # noqa: F401  (imported before the clock starts)
    from models.decision_rules import O_BIAS_GRID, _span_sums, with_o_bias

    torch.set_num_threads(1)
    dev = synthetic_dev(posts, decoders, words)
    biases = torch.tensor(O_BIAS_GRID, dtype=torch.float32).unsqueeze(1).expand(-1, decoders)
    started = time.process_time()
    if method == "one by one":
        sums = torch.stack(
            [_span_sums(dev.crf.viterbi(with_o_bias(dev.emissions, b), dev.mask).long(), dev.gold) for b in biases]
        )
    else:
        sums = dev.sums_many(biases, budget=budget)
    seconds = time.process_time() - started
    queue.put((seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, sums.tolist()))


def measure(method: str, args) -> tuple[float, float, list]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_fit, args=(method, args.posts, args.decoders, args.words, args.budget, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=int, default=200)
    parser.add_argument("--decoders", type=int, default=40)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=1 << 20, help="emission scores per batched chunk")
    args = parser.parse_args(argv)
    methods = ("one by one", "batched")
    times = {m: [] for m in methods}
    peaks = {m: [] for m in methods}
    sums = {}
    for _ in range(args.rounds):  # interleaved, so a change of load hits both
        for method in methods:
            seconds, peak, sums[method] = measure(method, args)
            times[method].append(seconds)
            peaks[method].append(peak)
    same = sums["one by one"] == sums["batched"]
    print(
        f"O-bias fit over 17 grid values: {args.posts} dev posts × {args.decoders} decoders × {args.words} words, "
        f"torch threads 1, median of {args.rounds} rounds; identical sums: {same}"
    )
    print("| method | CPU s per fit | × one by one | peak RSS MiB |")
    print("|---|---|---|---|")
    base = statistics.median(times["one by one"])
    for method in methods:
        median = statistics.median(times[method])
        print(f"| {method} | {median:.2f} | {median / base:.3f} | {max(peaks[method]):.0f} |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
