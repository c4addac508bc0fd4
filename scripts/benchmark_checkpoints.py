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
import tempfile
import time
from pathlib import Path


def build_checkpoint():
    import torch
    from omegaconf import OmegaConf

    from faina.formats.labels import LabelInventory
    from faina.training.model_building import build_model
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
    checkpoint = {
        "epoch": 3,
        "global_step": 100,
        "state_dict": model.state_dict(),
        "optimizer_states": [optimizer.state_dict()],
        "lr_schedulers": [],
        "loops": {},
        "callbacks": {},
    }
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

    old_io, new_io = TorchCheckpointIO(), AtomicCheckpointIO()

    def best_weights(path):
        weights = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        atomic_write_bytes(path, save(weights))

    writes = {  # (policy, file): the write
        ("before", "last.ckpt"): lambda: old_io.save_checkpoint(checkpoint, folder / "before-last.ckpt"),
        ("before", "best.ckpt"): lambda: old_io.save_checkpoint(checkpoint, folder / "before-best.ckpt"),
        ("after", "last.ckpt"): lambda: new_io.save_checkpoint(checkpoint, folder / "after-last.ckpt"),
        ("after", "best-epoch=<e>.safetensors"): lambda: best_weights(folder / "after-best.safetensors"),
    }
    times: dict[tuple[str, str], list[float]] = {key: [] for key in writes}
    for _ in range(args.repeats):
        for key, write in writes.items():
            start = time.perf_counter()
            write()
            times[key].append(time.perf_counter() - start)
    sizes = {
        key: (folder / f"{key[0]}-{'best.safetensors' if key[1].endswith('safetensors') else key[1]}").stat().st_size
        for key in writes
    }
    print(f"{'policy':7} {'file (written when)':50} {'MB':>7} {'median s':>9}")
    for (policy, file), values in times.items():
        when = "every epoch" if file == "last.ckpt" else "when dev F1 improves"
        print(
            f"{policy:7} {file + ' (' + when + ')':50} {sizes[(policy, file)] / 1e6:7.1f} "
            f"{statistics.median(values):9.2f}"
        )
    for policy in ("before", "after"):
        keys = [key for key in writes if key[0] == policy]
        print(
            f"{policy}: an improving epoch writes {sum(sizes[k] for k in keys) / 1e6:.1f} MB in "
            f"{sum(statistics.median(times[k]) for k in keys):.2f} s"
        )


if __name__ == "__main__":
    main()
