"""METEOR between generated and reference premises, as HuggingFace ``evaluate``'s "meteor" computes it.

``evaluate`` downloads nltk data when loaded, so we call nltk directly with the same settings (alpha 0.9,
beta 3, gamma 0.5, lower-casing, WordNet synonyms). Tokenisation uses nltk's Treebank-style word tokenizer
(what ``word_tokenize`` applies after sentence splitting); it needs no punkt data. Premises are mostly one
sentence, so skipping sentence splitting changes nothing in practice.
"""

from __future__ import annotations

from collections.abc import Sequence


class MeteorScorer:
    name = "meteor"

    def __init__(self):
        from nltk.tokenize import NLTKWordTokenizer

        from metrics.wordnet_data import ensure_wordnet

        self._wordnet = ensure_wordnet()
        self._tokenize = NLTKWordTokenizer().tokenize
        self.model_name = "nltk-wordnet-3.0"

    def score(self, generated: Sequence[str], references: Sequence[str]) -> list[float]:
        from nltk.translate.meteor_score import single_meteor_score

        return [
            single_meteor_score(self._tokenize(ref), self._tokenize(gen), wordnet=self._wordnet)
            for gen, ref in zip(generated, references)
        ]
