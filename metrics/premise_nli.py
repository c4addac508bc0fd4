"""NLI-A and NLI-S: entailment probabilities between gold and generated premises from a T5 NLI model.

The paper uses google/t5_xxl_true_nli_mixture, which reads "premise: {p} hypothesis: {h}" and answers
"1" (entailed) or "0"; the score is the probability of "1" as the first generated token.
NLI-A = P(gold entails generated); NLI-S = max over both directions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from common.model_availability import ensure_model_available

EntailmentFn = Callable[[Sequence[str], Sequence[str]], list[float]]


def nli_scores(
    entail: EntailmentFn, generated: Sequence[str], references: Sequence[str]
) -> tuple[list[float], list[float]]:
    """Per pair (NLI-A, NLI-S) given a function that returns P(premise entails hypothesis) for pairs."""
    forward = entail(references, generated)
    backward = entail(generated, references)
    return list(forward), [max(a, b) for a, b in zip(forward, backward)]


class T5EntailmentScorer:
    name = "nli"

    def __init__(self, model: str = "google/t5_xxl_true_nli_mixture", batch_size: int = 8, device: str | None = None):
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        reference = ensure_model_available(model, "NLI model")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(reference)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(reference).to(self.device).eval()
        self.entail_token = self.tokenizer.convert_tokens_to_ids("1")
        if self.entail_token is None or self.entail_token == self.tokenizer.unk_token_id:
            self.entail_token = self.tokenizer("1", add_special_tokens=False).input_ids[-1]
        self.batch_size, self.model_name = batch_size, model

    def entail(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        import torch

        texts = [f"premise: {p} hypothesis: {h}" for p, h in zip(premises, hypotheses)]
        result: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer(
                texts[start : start + self.batch_size], return_tensors="pt", padding=True, truncation=True
            ).to(self.device)
            start_ids = torch.full(
                (batch.input_ids.shape[0], 1), self.model.config.decoder_start_token_id, device=self.device
            )
            with torch.no_grad():
                logits = self.model(**batch, decoder_input_ids=start_ids).logits[:, 0, :]
            result.extend(torch.softmax(logits.float(), dim=-1)[:, self.entail_token].tolist())
        return result

    def score_pairs(self, generated: Sequence[str], references: Sequence[str]) -> tuple[list[float], list[float]]:
        return nli_scores(self.entail, generated, references)
