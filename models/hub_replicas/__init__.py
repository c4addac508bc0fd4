"""Hub-shaped replicas of the models the framework is for (``layouts``: the files; ``builders``, ``tokenizer_files``:
how each is written). The command is ``models.replicas`` (``fallacy models replicas OUT_DIR``)."""
