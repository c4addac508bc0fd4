"""Make WordNet available to nltk offline, without any setting by the user.

METEOR's synonym stage needs WordNet. nltk only reads corpora from its data folders and its reader also
wants a ``lexnames`` file, which the Debian packages ``wordnet-base`` + ``wordnet-sense-index`` (WordNet 3.0
under /usr/share/wordnet) do not ship. On first use we therefore build ``<user cache>/nltk_data/corpora/
wordnet`` from the Debian files plus a written ``lexnames`` and put that folder on ``nltk.data.path``.
If nltk already finds a WordNet (e.g. after ``nltk.download("wordnet")``), that one is used.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from common.errors import UserError

DEBIAN_WORDNET = Path("/usr/share/wordnet")
INSTALL_FIX = (
    "install the Debian packages `wordnet-base wordnet-sense-index` "
    "(or run `python -c \"import nltk; nltk.download('wordnet')\"` where the internet is reachable)."
)

# The standard WordNet lexicographer files: number, name, syntactic category (1 noun, 2 verb, 3 adj, 4 adv).
_LEXFILES = (
    ["adj.all", "adj.pert", "adv.all", "noun.Tops"]
    + [
        "noun." + n
        for n in (
            "act animal artifact attribute body cognition communication event feeling food "
            "group location motive object person phenomenon plant possession process quantity "
            "relation shape state substance time"
        ).split()
    ]
    + [
        "verb." + n
        for n in (
            "body change cognition communication competition consumption contact creation "
            "emotion motion perception possession social stative weather"
        ).split()
    ]
    + ["adj.ppl"]
)
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(_LEXFILES))


def default_cache_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("fallacy-framework")) / "nltk_data"


def build_nltk_wordnet(source: Path = DEBIAN_WORDNET, root: Path | None = None) -> Path:
    """Copy the WordNet database into ``<root>/corpora/wordnet`` (once) and return ``root``."""
    root = root or default_cache_root()
    target = root / "corpora" / "wordnet"
    if (target / "lexnames").is_file() and (target / "data.noun").is_file():
        return root
    if not (source / "data.noun").is_file():
        raise UserError("WordNet is not installed, so METEOR cannot run.", path=source, fix=INSTALL_FIX)
    staging = target.with_name("wordnet.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for pattern in ("data.*", "index.*", "*.exc"):
        for file in source.glob(pattern):
            shutil.copyfile(file, staging / file.name)
    (staging / "lexnames").write_text(lexnames_text(), encoding="ascii")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return root


def ensure_wordnet(source: Path = DEBIAN_WORDNET, root: Path | None = None):
    """Return nltk's WordNet reader, building the offline copy if nltk has none."""
    import nltk
    from nltk.corpus import wordnet

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        built = str(build_nltk_wordnet(source, root))
        if built not in nltk.data.path:
            nltk.data.path.insert(0, built)
    try:
        wordnet.ensure_loaded()
    except LookupError as err:
        raise UserError(f"nltk cannot read WordNet ({str(err).strip().splitlines()[0]}).", fix=INSTALL_FIX) from None
    return wordnet
