"""Benchmark: what does checkpointing cost per epoch, Lightning's default policy against this framework's?

Before: a ``ModelCheckpoint(save_last=True, save_top_k=1)`` wrote two full checkpoints (weights + AdamW
moments + loop state) every epoch, ``last.ckpt`` and, on improvement, ``best.ckpt``, each staged in memory
and in the system temp folder, then copied over the target. Now (``common.checkpointing``): one atomic
``last.ckpt`` (what exact resume needs) and, on improvement, the weights alone as safetensors.

The model is MVMD span-f over the offline MiniLM encoder, every parameter with AdamW state (as after
gradual unfreezing has opened all layers). Writes go to ``--dir`` (default: a temp folder); each policy
runs ``--repeats`` times, alternating, and the median is reported. Numbers depend on the disk and its load.

    python scripts/benchmark_checkpoints.py [--repeats 3] [--dir /tmp/ckpt-bench]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build_checkpoint():
    import torch
    from omegaconf import OmegaConf

    from faina.labels import LabelInventory
    from faina.model_io import build_model
    from models.encoder import offline_encoder_path

    conf = Path(__file__).resolve().parents[1] / "conf"
    model_cfg = OmegaConf.load(conf / "model" / "mvmd.yaml")
    encoder_cfg = OmegaConf.create({"name_or_path": offline_encoder_path(), "max_length": 128})
    inventory = LabelInventory.load("faina")
    labels = inventory.labels_of("fine")
    model = build_model(model_cfg, encoder_cfg, "span", labels, 2, inventory)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for parameter in model.parameters():
        parameter.grad = torch.zeros_like(parameter)
    optimizer.step()  # creates the two moment tensors per parameter
    checkpoint = {"epoch": 3, "global_step": 100, "state_dict": model.state_dict(),
                  "optimizer_states": [optimizer.state_dict()], "lr_schedulers": [], "loops": {}, "callbacks": {}}
    return model, checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()

    from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO
    from safetensors.torch import save

    from common.checkpointing import AtomicCheckpointIO
    from common.io import atomic_write_bytes

    model, checkpoint = build_checkpoint()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="ckpt-bench-"))
    folder.mkdir(parents=True, exist_ok=True)

    def before():
        io = TorchCheckpointIO()
        io.save_checkpoint(checkpoint, folder / "before-last.ckpt")
        io.save_checkpoint(checkpoint, folder / "before-best.ckpt")

    def after():
        AtomicCheckpointIO().save_checkpoint(checkpoint, folder / "after-last.ckpt")
        weights = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        atomic_write_bytes(folder / "after-best-epoch=3.safetensors", save(weights))

    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.repeats):
        for name, write in (("before", before), ("after", after)):
            start = time.perf_counter()
            write()
            times[name].append(time.perf_counter() - start)
    sizes = {name: sum(p.stat().st_size for p in folder.glob(f"{name}-*")) for name in times}
    print(f"{'policy':8} {'MB written per improving epoch':>31} {'median s':>9}")
    for name in times:
        print(f"{name:8} {sizes[name] / 1e6:31.1f} {statistics.median(times[name]):9.2f}")
    last = (folder / "after-last.ckpt").stat().st_size / 1e6
    print(f"an epoch without improvement writes only last.ckpt now: {last:.1f} MB")


if __name__ == "__main__":
    main()
