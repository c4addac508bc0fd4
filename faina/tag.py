"""``python -m faina.tag MODEL_DIR (--text TEXT ... | --input posts.txt|posts.jsonl) [--json] [--html OUT.html]``.

Tags raw posts with a trained model: an exported model folder (``python -m faina.export``) or a fold folder
of a run. Posts are tokenised with Faina's rule (``faina/formats/tokenization.py``). Inputs: ``--text`` with
one or more posts (``--text A B``; repeating it, ``--text A --text B``, adds more), a ``.txt`` file (one post
per line; blank lines are not posts) or a ``.jsonl`` file (one JSON object per line with a ``"text"`` field, or
a JSON string). Output: one block per post listing each span with its view, label, tokens and characters
(0-based, end exclusive), or each view's labels for post models; ``--json`` prints one JSON object per post and
line instead; ``--html`` also writes an offline page of the tagged posts, drawn by the span renderer of
``faina.show`` (``faina/analysis/span_html.py``); ``--probabilities PATH`` also writes the model's
probabilities (``probabilities.jsonl`` layout, posts named by their number: docs/soft-labels.md; calibrated when the
model is, its raw ones with ``--uncalibrated``).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from common.io import atomic_write_text
from faina.analysis.span_html import inventory_order
from faina.formats.labels import LabelInventory
from faina.formats.probability_file import refuse_uncalibrated_alone, write_probabilities
from faina.formats.raw_posts import (  # noqa: F401  (re-exported: the library API of this command)
    read_posts,
)
from faina.serving.tag_page import render_page

log = logging.getLogger(__name__)


def format_post(number: int, post: dict, views: list[str]) -> str:
    lines = [f"post {number}: {post['text']}"]
    if "post_labels" in post:
        lines += [f"  {view}  labels: {', '.join(post['post_labels'][view]) or '(none)'}" for view in views]
        return "\n".join(lines)
    if not post["spans"]:
        lines.append("  no fallacy found")
    for span in post["spans"]:
        lines.append(
            f"  {span['view']}  {span['label']:<28} tokens {span['start_token']}-{span['end_token']}  "
            f"chars {span['start_char']}-{span['end_char']}  {span['text']!r}"
        )
    return "\n".join(lines)


def build_parser():
    parser = command_parser(
        "faina.tag",
        "Tag raw posts with a trained Faina model: each span's view, label, tokens "
        "and character offsets (or each view's labels, for post models).",
    )
    parser.add_argument("model_dir", help="exported model folder (faina.export) or a fold folder of a run")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--text",
        nargs="+",
        action="extend",
        metavar="TEXT",
        help="posts to tag: --text A B, or --text A --text B",
    )
    source.add_argument("--input", help='posts.txt (one post per line) or posts.jsonl ({"text": ...} per line)')
    parser.add_argument("--json", action="store_true", help="print one JSON object per post and line")
    parser.add_argument("--html", metavar="OUT.html", default=None, help="also write an offline HTML page")
    parser.add_argument(
        "--probabilities",
        metavar="PATH",
        default=None,
        help="also write the model's probabilities as JSONL, gzip-compressed when PATH ends in .gz "
        "(docs/soft-labels.md)",
    )
    parser.add_argument(
        "--uncalibrated",
        action="store_true",
        help="with --probabilities: write the model's raw probabilities, not the calibrated ones it reports "
        "(docs/soft-labels.md#calibration)",
    )
    parser.add_argument(
        "--topic",
        default="",
        help="the posts' topic keywords, for a model trained with data.context (docs/training.md#post-context-topic-and-date-as-input)",
    )
    parser.add_argument(
        "--date", default="", help="the posts' date (e.g. 2021-08), for a model trained with data.context"
    )
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (None: cuda when available, else cpu)")
    parser.add_argument("--batch-size", type=int, default=32, help="posts per forward pass")
    parser.add_argument(
        "--head",
        metavar="NAME",
        default=None,
        help="a multi-task model's head to use (default: every head, each tagging the posts in turn; docs/multitask.md)",
    )
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    refuse_uncalibrated_alone(args)
    texts = args.text if args.text is not None else read_posts(args.input)
    if not texts:
        raise UserError("no posts to tag", path=args.input, fix="give at least one non-blank line")
    from faina.serving.heads import head_folders

    heads = head_folders(args.model_dir, args.head)
    several = len(heads) > 1
    everything = []
    for head, folder in heads:
        if several:
            print(f"# head {head}", file=sys.stderr)
        posts = tag_with(folder, texts, args, head, several)
        everything += [{**post, "head": head} for post in posts] if several else posts
    return everything


def tag_with(folder: Path, texts: list[str], args, head: str | None, several: bool) -> list[dict]:
    """Tag ``texts`` with the model in ``folder`` and print them (and write the page and probabilities asked for)."""
    from faina.serving.heads import head_output
    from faina.serving.tagger import FallacyTagger

    tagger = FallacyTagger.load(
        folder, device=args.device, batch_size=args.batch_size, topic=args.topic, date=args.date
    )
    given = {"topic": args.topic, "date": args.date}
    missing = [name for name in tagger.context if not given[name]]
    if missing:
        log.warning(
            "the model reads each post's %s before its text (data.context) and none was given: pass %s",
            " and ".join(tagger.context),
            " ".join(f"--{name} ..." for name in missing),
        )
    if args.probabilities:
        tagged, probabilities = tagger.tag_with_probabilities(texts, args.uncalibrated)
        write_probabilities(probabilities, head_output(args.probabilities, head, several))
    else:
        tagged = tagger(texts)
    posts = [post.to_dict() for post in tagged]
    for number, post in enumerate(posts, 1):
        shown = {**post, "head": head} if several else post
        print(json.dumps(shown, ensure_ascii=False) if args.json else format_post(number, post, tagger.views))
    if args.html:
        title = f"{tagger.meta['task']} · {Path(args.model_dir).name}" + (f" · {head}" if head else "")
        labels = inventory_order(LabelInventory.load(tagger.meta["labels_inventory"]))
        path = atomic_write_text(head_output(args.html, head, several), render_page(posts, tagger.views, title, labels))
        print(f"page written: {path}", file=sys.stderr)
    return posts


if __name__ == "__main__":
    main()
