"""Reading a data file as text with the checks every Faina reader shares (exists, UTF-8, no NUL, not empty)."""

from __future__ import annotations

from pathlib import Path

from common.errors import UserError

# Characters that mean the file is not the UTF-8, Unix-lines text the readers expect: (character, message, fix).
_REFUSED_CHARACTERS = (
    (
        "\x00",
        "the file holds NUL bytes (UTF-16 or a binary file, not UTF-8 text)",
        "re-encode the file as UTF-8, e.g. `iconv -f utf-16 -t utf-8`",
    ),
    ("\r", "Windows (CRLF) line endings", "convert the file to Unix line endings, e.g. `sed -i 's/\\r$//' FILE`"),
)


def read_lines(path: str | Path) -> list[str]:
    """The file's lines without their ``\\n``; the last empty element of a final newline is dropped."""
    path = Path(path)
    if not path.is_file():
        raise UserError("file not found", path=path, fix="check the path (data paths are set with data.*_path=...)")
    data = path.read_bytes()
    if not data.removeprefix(b"\xef\xbb\xbf").strip():  # a byte-order mark alone is an empty file too
        raise UserError("the file is empty", path=path, fix="point to a Faina-format file with at least one post")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise UserError(
            f"not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})",
            path=path,
            line=line,
            fix="re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf-8`",
        ) from None
    for character, message, fix in _REFUSED_CHARACTERS:
        if character in text:
            line = text[: text.index(character)].count("\n") + 1
            raise UserError(message, path=path, line=line, fix=fix)
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
