import pytest
import torch

from metrics.missci_classification import accuracy, macro_f1
from metrics.missci_premise import MatchedPair, PremiseMetricConfig, match_premises, premise_metrics
from metrics.premise_nli import nli_scores

HG, FE = "Hasty Generalization", "False Equivalence"


def fake_embed(texts):
    """Deterministic 'embedding': counts of a few key words, so cosine similarity is hand-computable."""
    words = ["cancer", "patient", "mice", "all"]
    return torch.tensor([[float(t.lower().count(w)) + 1e-6 for w in words] for t in texts])


def test_match_by_class_uses_first_prediction_with_gold_class():
    gold = [(HG, "one patient suffices"), (FE, "mice are like humans")]
    predicted = [("Ambiguity", "x"), (FE, "mice equal people"), (HG, "y")]
    assert match_premises([(gold, predicted)], None) == [
        MatchedPair(FE, "mice are like humans", FE, "mice equal people", True)
    ]


def test_similarity_fallback_and_ties_take_first_index():
    gold = [(HG, "one patient"), (FE, "mice mice")]
    predicted = [("Other", "about cancer"), ("Ambiguity", "mice study"), ("Other", "mice again")]
    match = match_premises([(gold, predicted)], fake_embed)[0]
    # gold 'mice mice' is parallel to both mice predictions (cosine 1.0): the first one wins
    assert (match.gold_class, match.predicted_premise, match.matched_by_class) == (FE, "mice study", False)
    with pytest.raises(Exception, match="SBERT"):
        match_premises([(gold, predicted)], None)


def test_nli_a_and_s_from_entailment_function():
    table = {("g", "p"): 0.2, ("p", "g"): 0.7, ("g2", "p2"): 0.9, ("p2", "g2"): 0.1}
    entail = lambda premises, hyps: [table[(p, h)] for p, h in zip(premises, hyps)]  # noqa: E731
    nli_a, nli_s = nli_scores(entail, ["p", "p2"], ["g", "g2"])
    assert nli_a == [0.2, 0.9] and nli_s == [0.7, 0.9]


def test_meteor_hand_cases():
    from metrics.premise_meteor import MeteorScorer

    scorer = MeteorScorer()
    identical, disjoint = scorer.score(["the cat sat on the mat", "zzz qqq"], ["the cat sat on the mat", "aa bb"])
    # 6 matched unigrams in one chunk: F = 1, penalty = 0.5 * (1/6)^3
    assert identical == pytest.approx(1 - 0.5 * (1 / 6) ** 3)
    assert disjoint == 0.0
    # WordNet synonymy ("ill" ~ "sick") makes 4 matches in one chunk: 1 - 0.5 * (1/4)^3; "red" only 3 matches
    synonym, unrelated = scorer.score(["the man is ill", "the man is red"], ["the man is sick"] * 2)
    assert synonym == pytest.approx(1 - 0.5 * (1 / 4) ** 3)
    assert unrelated == pytest.approx(10 * 0.75 * 0.75 / (0.75 + 9 * 0.75) * (1 - 0.5 * (1 / 3) ** 3))


def test_unavailable_models_are_reported_not_scored(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from common import model_availability

    model_availability.hub_reachable.cache_clear()
    items = [([(HG, "one patient suffices")], [(HG, "a single patient is enough")])]
    config = PremiseMetricConfig(
        meteor=True,
        bertscore_model="no-such/bertscore-model",
        nli_model="no-such/nli-model",
        sbert_model="no-such/sbert",
    )
    metrics, models, unavailable = premise_metrics(items, config)
    assert "meteor" in metrics and models["meteor"].startswith("nltk")
    assert {"bertscore", "nli_a", "nli_s"} <= set(unavailable) and not {"bertscore", "nli_a"} & set(metrics)
    assert "no-such/nli-model" in unavailable["nli_a"]
    model_availability.hub_reachable.cache_clear()


def test_bertscore_with_packaged_minilm():
    from metrics.premise_bertscore import BertScoreScorer

    scorer = BertScoreScorer("minilm")
    same, different = scorer.score(
        ["one patient is enough", "one patient is enough"], ["one patient is enough", "vaccines change DNA"]
    )
    assert same == pytest.approx(1.0, abs=1e-4) and different < same
    assert scorer.score(["", "one patient"], ["one patient", "one patient"])[0] == 0.0


def test_classification_metrics_hand_computed():
    gold = ["A", "A", "B", "C"]
    pred = ["A", "B", "B", "Other"]
    assert accuracy(gold, pred) == 0.5
    # F1: A = 2/3, B = 2/3, C = 0, Other = 0 -> macro = 1/3
    assert macro_f1(gold, pred) == pytest.approx(1 / 3)
