"""Faina's file formats: span-level CoNLL, post-level TSV, raw posts, label inventories and the typed records they read into."""
