"""What an offline W&B run holds, read from its ``run-<id>.wandb`` file as ``wandb sync`` would upload it.

wandb keeps an offline run as one transaction log: a 7-byte header (``:W&B``, magic, version) and then 32 KiB
blocks of LevelDB-log records (checksum, length, type: full, first, middle, last), each payload one protobuf
``Record`` of wandb's own schema (``wandb.proto.wandb_internal_pb2``). wandb 0.31 no longer ships a Python
reader for it, so the tests read the framing here and parse every payload with wandb's protobuf classes.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

BLOCK = 32 * 1024
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _payloads(data: bytes):
    if data[:4] != b":W&B":
        raise ValueError("not a W&B transaction log")
    position, pending = HEADER, b""
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:  # a block's tail too short for a record header is padding
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        chunk = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        if kind == FULL:
            yield chunk
        elif kind == FIRST:
            pending = chunk
        elif kind == MIDDLE:
            pending += chunk
        elif kind == LAST:
            yield pending + chunk
            pending = b""


@dataclass
class OfflineRun:
    """The run's identity, its config and its final summary (each key's last value)."""

    name: str = ""
    group: str = ""
    job_type: str = ""
    config: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)


def _key(item) -> str:
    return item.key or "/".join(item.nested_key)


def read_offline_run(run_dir: Path) -> OfflineRun:
    from wandb.proto import wandb_internal_pb2

    (log,) = Path(run_dir).glob("run-*.wandb")
    run = OfflineRun()
    for payload in _payloads(log.read_bytes()):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(payload)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run.name, run.group, run.job_type = record.run.display_name, record.run.run_group, record.run.job_type
            run.config.update({_key(item): json.loads(item.value_json) for item in record.run.config.update})
        elif kind == "config":
            run.config.update({_key(item): json.loads(item.value_json) for item in record.config.update})
        elif kind == "summary":
            run.summary.update({_key(item): json.loads(item.value_json) for item in record.summary.update})
        elif kind == "history":
            run.history.append({_key(item): json.loads(item.value_json) for item in record.history.item})
    return run


def offline_runs(folder: Path) -> list[OfflineRun]:
    """Every offline run under ``folder`` (``<folder>/wandb/offline-run-*``)."""
    return [read_offline_run(path) for path in sorted(Path(folder).glob("wandb/offline-run-*"))]
