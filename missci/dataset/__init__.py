"""The Missci data: the official JSONL reader and records, fallacy classes, folds, argument selection, prediction files, the synthetic sample."""
