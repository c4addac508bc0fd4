"""BERTScore F1 (no baseline rescaling) between generated and reference premises, via ``bert-score``.

The paper used microsoft/deberta-xlarge-mnli (bert-score knows its layer); offline the packaged MiniLM
("minilm", 6 layers) stands in. The model name is part of every result so numbers are never mixed up.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.model_availability import ensure_model_available


class BertScoreScorer:
    name = "bertscore"

    def __init__(
        self, model: str = "minilm", num_layers: int | None = None, batch_size: int = 32, device: str | None = None
    ):
        from bert_score import BERTScorer
        from bert_score.utils import model2layers

        reference = ensure_model_available(model, "BERTScore model")
        if num_layers is None and reference not in model2layers:
            from transformers import AutoConfig

            num_layers = AutoConfig.from_pretrained(reference).num_hidden_layers
        self._scorer = BERTScorer(
            model_type=reference,
            num_layers=num_layers,
            batch_size=batch_size,
            rescale_with_baseline=False,
            device=device,
        )
        self.model_name = model

    def score(self, generated: Sequence[str], references: Sequence[str]) -> list[float]:
        """F1 per pair; an empty side (e.g. a premise the parser could not find) scores 0.0, since
        bert-score cannot encode empty text with current tokenizers and nothing generated earns nothing."""
        scores = [0.0] * len(generated)
        keep = [i for i, (g, r) in enumerate(zip(generated, references)) if g.strip() and r.strip()]
        if keep:
            _, _, f1 = self._scorer.score([generated[i] for i in keep], [references[i] for i in keep], verbose=False)
            for i, value in zip(keep, f1.tolist()):
                scores[i] = float(value)
        return scores
