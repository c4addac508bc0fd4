"""Faina corpora as Hugging Face ``datasets``, and any ``datasets`` token-classification data as a Faina task.

Columns of a span-level dataset: ``post_id``, ``post_date``, ``post_topic_keywords``, ``post_text``,
``tokens`` and one tag column per annotator view, ``tags_a1``, ``tags_a2`` ...: per token the view's cell as
the CoNLL file writes it (``O``, or ``B-X`` / ``I-X`` tags joined by ``|``, since Faina's spans overlap).
A post-level dataset has ``labels_a1``, ``labels_a2`` ... (each a list of labels) instead of tokens and tags.
``to_dataset_dict`` / ``from_dataset_dict`` convert both ways (``train``: labelled posts, ``test``: unlabelled).

The feature cache every run uses (``encode_cached``) is ``faina.data.feature_cache``.

``load_hf_task_data`` (``data=hf data.path=NAME_OR_DIR``) reads any dataset ``datasets.load_from_disk`` or
``datasets.load_dataset`` can open that has a token column and one or more BIO label columns (one per view):
plain ``ClassLabel`` tags (``B-PER``), tag strings, or Faina's multi-tag cells; the label inventory comes from
the dataset (its ``ClassLabel`` names or the tags it holds) or from a label YAML (``data.labels``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.errors import UserError
from faina.formats.conll import OUTSIDE, _cells, _PostParser
from faina.formats.labels import LabelInventory
from faina.formats.records import NOT_ANNOTATED, Post, PostCorpus, PostRow, SpanCorpus
from faina.formats.tsv import post_corpus_from_spans

TOKENS = "tokens"
META_COLUMNS = ("post_id", "post_date", "post_topic_keywords", "post_text")


def tag_column(view: int) -> str:
    return f"tags_a{view + 1}"


def labels_column(view: int) -> str:
    return f"labels_a{view + 1}"


# --- corpora <-> datasets --------------------------------------------------------------------------------
def corpus_to_dataset(corpus: SpanCorpus | PostCorpus):
    """One ``datasets.Dataset`` with a row per post (columns: see the module docstring)."""
    from datasets import Dataset, Features, Value
    from datasets import Sequence as Seq

    meta = {key: Value("string") for key in META_COLUMNS}
    if isinstance(corpus, SpanCorpus):
        columns: dict[str, list] = {key: [] for key in (*META_COLUMNS, TOKENS)}
        views = [tag_column(v) for v in range(corpus.num_views)]
        columns.update({view: [] for view in views})
        for post in corpus.posts:
            for key, value in zip(META_COLUMNS, (post.post_id, post.date, post.topic, post.text)):
                columns[key].append(value)
            columns[TOKENS].append(list(post.tokens))
            cells = _cells(post, corpus.num_views)
            for v, view in enumerate(views):
                columns[view].append([token_cells[v] for token_cells in cells])
        features = Features({**meta, TOKENS: Seq(Value("string")), **{view: Seq(Value("string")) for view in views}})
        return Dataset.from_dict(columns, features=features)
    views = [labels_column(v) for v in range(corpus.num_views)]
    columns = {key: [] for key in (*META_COLUMNS, *views)}
    for row in corpus.rows:
        for key, value in zip(META_COLUMNS, (row.post_id, row.date, row.topic, row.text)):
            columns[key].append(value)
        for v, view in enumerate(views):
            labels = row.label_set(v) if v < len(row.labels) else frozenset()
            columns[view].append([NOT_ANNOTATED] if labels is None else sorted(labels))  # a view that did not annotate
    features = Features({**meta, **{view: Seq(Value("string")) for view in views}})
    return Dataset.from_dict(columns, features=features)


def to_dataset_dict(labelled: SpanCorpus | PostCorpus, unlabelled: SpanCorpus | PostCorpus | None = None):
    """``DatasetDict`` with ``train`` (the labelled file) and, when given, ``test`` (the unlabelled one)."""
    from datasets import DatasetDict

    splits = {"train": corpus_to_dataset(labelled)}
    if unlabelled is not None:
        splits["test"] = corpus_to_dataset(unlabelled)
    return DatasetDict(splits)


def _tag_strings(dataset, column: str) -> list[list[str]]:
    """Each post's tag cells of ``column`` as strings (``ClassLabel`` ids become their names)."""
    feature = dataset.features[column]
    inner = getattr(feature, "feature", None)
    if inner is None and isinstance(feature, list) and feature:
        inner = feature[0]
    names = getattr(inner, "names", None)
    values = dataset[column]
    if names is not None:
        return [[names[i] for i in row] for row in values]
    return [[str(cell) if cell is not None else "" for cell in row] for row in values]


def dataset_to_span_corpus(
    dataset,
    inventory: LabelInventory,
    tag_columns: Sequence[str],
    tokens_column: str = TOKENS,
    source: str = "<dataset>",
) -> SpanCorpus:
    """Posts of a token-classification dataset, with spans read by the CoNLL reader's BIO rules."""
    columns = set(dataset.column_names)
    tokens = dataset[tokens_column]
    tags = [_tag_strings(dataset, column) for column in tag_columns]
    meta = {key: dataset[key] if key in columns else None for key in META_COLUMNS}
    allowed = set(inventory.fine) | set(inventory.coarse)
    posts = []
    labelled_file = None
    for i, words in enumerate(tokens):
        where = f"row {i}"
        if not words:
            raise UserError(
                f"{where} has no tokens",
                path=source,
                fix="drop empty rows from the dataset (e.g. dataset.filter(lambda r: len(r['tokens']) > 0))",
            )
        post_tags = [view[i] for view in tags]
        for column, view_tags in zip(tag_columns, post_tags):
            if len(view_tags) != len(words):
                raise UserError(
                    f"{where}: {len(words)} tokens but {len(view_tags)} tags in column {column!r}",
                    path=source,
                    fix="give every token exactly one tag cell in each label column",
                )
        labelled = any(cell != "" for view in post_tags for cell in view)
        labelled_file = labelled if labelled_file is None else labelled_file
        spans = None
        if labelled:
            parser = _PostParser(where, len(tag_columns), repair=False)
            for w in range(len(words)):
                cells = [_faina_cell(view[w]) for view in post_tags]
                parser.add_token(w + 1, cells, w + 1, allowed, inventory)
            spans = parser.finish()
        post_id = meta["post_id"][i] if meta["post_id"] is not None else str(i)
        text = meta["post_text"][i] if meta["post_text"] is not None else " ".join(words)
        posts.append(
            Post(
                str(post_id),
                meta["post_date"][i] if meta["post_date"] is not None else "",
                meta["post_topic_keywords"][i] if meta["post_topic_keywords"] is not None else "",
                text,
                tuple(words),
                spans,
                line=i,
            )
        )
    if not posts:
        raise UserError("the dataset split has no rows", path=source, fix="choose a split with posts (data.split=...)")
    return SpanCorpus(tuple(posts), len(tag_columns), path=source)


def _faina_cell(cell: str) -> str:
    """A tag of another dataset as a Faina cell (``O`` stays, ``B-X``/``I-X`` and ``|``-joined tags pass)."""
    return OUTSIDE if cell in ("", OUTSIDE) else cell


def dataset_to_post_corpus(dataset, num_views: int, source: str = "<dataset>") -> PostCorpus:
    rows = tuple(
        PostRow(
            str(r["post_id"]),
            r["post_date"],
            r["post_topic_keywords"],
            r["post_text"],
            tuple(tuple(sorted(r[labels_column(v)])) for v in range(num_views)),
            line=i,
        )
        for i, r in enumerate(dataset)
    )
    return PostCorpus(rows, num_views, path=source)


def from_dataset_dict(dataset_dict, inventory: LabelInventory | None = None) -> dict[str, SpanCorpus | PostCorpus]:
    """The corpora of a ``DatasetDict`` written by ``to_dataset_dict`` (split name -> corpus)."""
    inventory = inventory or LabelInventory.load()
    corpora = {}
    for split, dataset in dataset_dict.items():
        tag_columns = [c for c in dataset.column_names if c.startswith("tags_a")]
        if tag_columns:
            corpora[split] = dataset_to_span_corpus(dataset, inventory, sorted(tag_columns), source=split)
        else:
            views = len([c for c in dataset.column_names if c.startswith("labels_a")])
            corpora[split] = dataset_to_post_corpus(dataset, views, source=split)
    return corpora


# --- data=hf: any datasets-readable token-classification dataset ------------------------------------------
def open_dataset(path: str, split: str):
    """A split of a dataset folder saved with ``save_to_disk``, or of anything ``load_dataset`` reads.

    A folder with a Python loading script is refused whatever the ``datasets`` version (older ones ran such
    scripts with ``trust_remote_code``): a dataset is data, never code (docs/untrusted-files.md).
    """
    import datasets

    scripts = sorted(p.name for p in Path(path).glob("*.py")) if Path(path).is_dir() else []
    if scripts:
        raise UserError(
            f"the dataset folder holds a loading script ({scripts[0]}); datasets are read as data and "
            "no script is ever run",
            path=path,
            fix="convert the dataset to files (save_to_disk, JSON lines, CSV or Parquet) and remove the script",
        )
    try:
        if Path(path).is_dir() and (
            (Path(path) / "dataset_dict.json").is_file() or (Path(path) / "dataset_info.json").is_file()
        ):
            loaded = datasets.load_from_disk(path)
        else:
            loaded = datasets.load_dataset(path)
    except Exception as err:  # noqa: BLE001 - datasets raises many kinds (hub, file, format): one message
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(
            f"cannot open the dataset {path!r} ({type(err).__name__}: {reason})",
            path=path,
            fix="set data.path to a folder written by Dataset(Dict).save_to_disk, a local data folder "
            "or a dataset name that datasets.load_dataset can read (the hub may be unreachable)",
        ) from None
    if isinstance(loaded, datasets.DatasetDict):
        if split not in loaded:
            raise UserError(
                f"the dataset has no split {split!r} (it has {', '.join(loaded)})",
                path=path,
                fix="set data.split / data.test_split to one of them",
            )
        return loaded[split]
    return loaded


def label_columns_of(dataset, tokens_column: str, wanted: Sequence[str] | None, source: str) -> list[str]:
    """The BIO label columns: the configured ones, or every token-aligned tag column the dataset has."""
    columns = dataset.column_names
    if tokens_column not in columns:
        raise UserError(
            f"the dataset has no token column {tokens_column!r} (columns: {', '.join(columns)})",
            path=source,
            fix="set data.tokens_column to the column that holds each post's tokens",
        )
    if wanted:
        missing = [c for c in wanted if c not in columns]
        if missing:
            raise UserError(
                f"label column(s) {', '.join(missing)} not in the dataset (columns: {', '.join(columns)})",
                path=source,
                fix="set data.label_columns to columns of the dataset",
            )
        for column in wanted:
            if getattr(dataset.features[column], "feature", None) is None or column == tokens_column:
                raise UserError(
                    f"column {column!r} holds {dataset.features[column]}, not a tag per token",
                    path=source,
                    fix="name in data.label_columns only columns with one BIO tag per token",
                )
        return list(wanted)
    found = []
    sample = dataset.select(range(min(len(dataset), 50)))
    for column in columns:
        if column == tokens_column:
            continue
        inner = getattr(dataset.features[column], "feature", None)
        names = getattr(inner, "names", None)
        if names is not None:
            if all(n == OUTSIDE or n[:2] in ("B-", "I-") for n in names):
                found.append(column)
            continue
        if getattr(inner, "dtype", None) != "string":
            continue
        cells = [cell for row in sample[column] for cell in row]
        if cells and all(c == OUTSIDE or all(t[:2] in ("B-", "I-") for t in c.split("|")) for c in cells if c):
            found.append(column)
    if not found:
        raise UserError(
            f"the dataset has no BIO label columns (columns: {', '.join(columns)})",
            path=source,
            fix="give it one column per annotator view with a tag per token (O, B-Label, I-Label), "
            "or name them with data.label_columns=[...]",
        )
    return found


def inventory_of(dataset, label_columns: Sequence[str], labels_yaml: str | None, name: str) -> LabelInventory:
    """The labels from a YAML when given, else from the dataset's ``ClassLabel`` names or the tags it holds."""
    if labels_yaml:
        return LabelInventory.load(labels_yaml)
    labels: set[str] = set()
    for column in label_columns:
        inner = getattr(dataset.features[column], "feature", None)
        names = getattr(inner, "names", None)
        cells = names if names is not None else {cell for row in dataset[column] for cell in row}
        for cell in cells:
            for tag in (cell or OUTSIDE).split("|"):
                if tag != OUTSIDE:
                    labels.add(tag[2:])
    if not labels:
        raise UserError(
            "the label columns hold no B-/I- tags, so there are no labels to learn",
            path=name,
            fix="check data.label_columns, or give the inventory with data.labels=my_labels.yaml",
        )
    return LabelInventory.from_dict(
        {"name": Path(name).name or "dataset", "fine": {label: label for label in labels}},
        source=f"{name} (labels read from the dataset)",
    )


def load_hf_task_data(
    path: str,
    level: str,
    grain: str,
    split: str = "train",
    test_split: str | None = None,
    tokens_column: str = TOKENS,
    label_columns: Sequence[str] | None = None,
    labels: str | None = None,
    targets: str = "views",
):
    """``TaskData`` from a ``datasets`` dataset (the runner trains on it like on a Faina file); ``targets`` as
    for a Faina file (``data.targets``: the views themselves, or one aggregated/soft view scored against each)."""
    from faina.data.task_data import task_data_with_targets

    if grain != "fine":
        raise UserError(
            "data=hf trains fine-grained tasks (the dataset's own labels)", fix="use task=span-f or task=post-f"
        )
    train = open_dataset(path, split)
    columns = label_columns_of(train, tokens_column, label_columns, path)
    inventory = inventory_of(train, columns, labels, path)
    labelled = dataset_to_span_corpus(train, inventory, columns, tokens_column, source=f"{path}[{split}]")
    if labelled.posts and not labelled.labelled:
        raise UserError(
            "the training split is unlabelled (no tags)", path=path, fix="train on a labelled split (data.split=...)"
        )
    unlabelled = None
    if test_split:
        test = open_dataset(path, test_split)
        unlabelled = dataset_to_span_corpus(test, inventory, columns, tokens_column, source=f"{path}[{test_split}]")
    if level == "post":
        labelled = post_corpus_from_spans(labelled)
        unlabelled = post_corpus_from_spans(unlabelled) if unlabelled is not None else None
    return task_data_with_targets(level, grain, inventory, labelled, unlabelled, targets)
