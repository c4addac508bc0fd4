"""Faina span and post metrics: hand-computed cases, the official quirks, and a reference scorer."""

from __future__ import annotations

import contextlib
import math
import tempfile
import warnings
from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faina.formats.any_file import write_any
from faina.formats.labels import LabelInventory
from faina.formats.records import Span
from faina.scoring.official import evaluate_files
from metrics.faina_post import NO_LABEL, PostMicroScore
from metrics.faina_scores import ZeroDenominatorWarning
from metrics.faina_span import SpanOverlapScore
from strategies import post_corpus_pairs, span_corpus_pairs

INV = LabelInventory.load()
LL, AE, DO, ST, VA, SL = ("Loaded-language", "Appeal-to-emotion", "Doubt", "Strawman", "Vagueness", "Slogan")
AH, RH, NC, HG, CO = (
    "Ad-hominem",
    "Red-herring",
    "Name-calling-or-labelling",
    "Hasty-generalization",
    "Causal-oversimplification",
)

# Direct parents, typed from the taxonomy of docs/faina-format.md (independent of faina_labels.yaml).
DIRECT_PARENTS = {
    "Vagueness": {"Evading-the-burden-of-proof", "Hasty-generalization"},
    "Causal-oversimplification": {"Hasty-generalization"},
    "False-dilemma": {"Hasty-generalization"},
    "Slippery-slope": {"Hasty-generalization"},
    "Cherry-picking": {"Hasty-generalization", "Red-herring"},
    "Thought-terminating-cliches": {"Hasty-generalization", "Appeal-to-emotion"},
    "Circular-reasoning": {"Causal-oversimplification"},
    "Ad-hominem": {"Red-herring"},
    "Appeal-to-authority": {"Red-herring"},
    "Appeal-to-emotion": {"Red-herring"},
    "False-analogy": {"Red-herring"},
    "Strawman": {"Red-herring"},
    "Doubt": {"Ad-hominem"},
    "Name-calling-or-labelling": {"Ad-hominem"},
    "Flag-waving": {"Appeal-to-emotion"},
    "Loaded-language": {"Appeal-to-emotion"},
    "Slogan": {"Appeal-to-emotion"},
}


def span_metric(mode="strict", views=2, per_label=False):
    return SpanOverlapScore(INV, num_views=views, mode=mode, per_label=per_label)


def scores(metric, preds, golds):
    metric.update(preds, golds)
    return metric.compute()


def assert_scores(result, expected, tol=1e-12):
    for view, row in expected.items():
        for key, value in row.items():
            assert result[view][key] == pytest.approx(float(value), abs=tol), (view, key)


# --- reference scorers: plain loops over the definitions of docs/faina-metrics.md -------------------------
def reference_weight(mode, predicted, gold):
    if predicted == gold:
        return 1.0
    if mode == "soft" and predicted in DIRECT_PARENTS.get(gold, ()):
        return 0.5
    return 0.0


def reference_span_scores(preds, golds, num_views, mode):
    out = {}
    for view in range(num_views):
        credit_p = credit_r = 0.0
        n_pred = n_gold = 0
        for pred_views, gold_views in zip(preds, golds):
            predicted = pred_views[0] if len(pred_views) == 1 else pred_views[view]
            gold = gold_views[view]
            n_pred += len(predicted)
            n_gold += len(gold)
            for s in predicted:
                for t in gold:
                    common = len(set(range(s.first, s.last + 1)) & set(range(t.first, t.last + 1)))
                    d = reference_weight(mode, s.label, t.label)
                    credit_p += common / (s.last - s.first + 1) * d
                    credit_r += common / (t.last - t.first + 1) * d
        p = credit_p / n_pred if n_pred else 0.0
        r = credit_r / n_gold if n_gold else 0.0
        out[f"a{view + 1}"] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}
    return _with_avg(out)


def reference_post_scores(preds, golds, num_views):
    out = {}
    for view in range(num_views):
        tp = fp = fn = 0
        for pred_views, gold_views in zip(preds, golds):
            predicted = set(pred_views[0] if len(pred_views) == 1 else pred_views[view]) or {"no fallacy"}
            gold = set(gold_views[view]) or {"no fallacy"}
            tp += len(predicted & gold)
            fp += len(predicted - gold)
            fn += len(gold - predicted)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        out[f"a{view + 1}"] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}
    return _with_avg(out)


def _with_avg(out):
    views = list(out.values())
    out["avg"] = {k: sum(v[k] for v in views) / len(views) for k in ("precision", "recall", "f1")}
    return out


def assert_close(result, reference, tol=1e-9):
    assert result.keys() == reference.keys()
    for view in reference:
        for key in ("precision", "recall", "f1"):
            assert math.isclose(result[view][key], reference[view][key], rel_tol=0, abs_tol=tol), (view, key)


# --- span metric ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["strict", "soft"])
def test_span_perfect_prediction_scores_one(mode):
    golds = [[(Span(1, 3, LL), Span(2, 6, ST)), (Span(4, 4, DO),)], [(), (Span(1, 9, ST), Span(3, 5, SL))]]
    result = scores(span_metric(mode), golds, golds)
    assert_scores(result, {v: {"precision": 1, "recall": 1, "f1": 1} for v in ("a1", "a2", "avg")})


def test_soft_perfect_prediction_exceeds_one_when_a_parent_span_overlaps_its_child():
    # Quirk of the official formula: gold AE(2-6) overlaps gold LL(1-3), AE is LL's direct parent, so the
    # (predicted AE, gold LL) pair earns 0.5 * 2/5 for P and 0.5 * 2/3 for R on top of the exact matches.
    golds = [[(Span(1, 3, LL), Span(2, 6, AE))]]
    assert scores(span_metric("strict", views=1), golds, golds)["a1"]["f1"] == 1.0
    soft = scores(span_metric("soft", views=1), golds, golds)["a1"]
    assert soft["precision"] == pytest.approx((2 + 0.5 * 2 / 5) / 2)
    assert soft["recall"] == pytest.approx((2 + 0.5 * 2 / 3) / 2)


def test_span_strict_hand_computed():
    # view a1 -- post 1: LL(2-5) vs gold LL(1-4) share 3 tokens: C_p = 3/4, C_r = 3/4;
    #             AE(3-8) equals gold AE(3-8): 1 and 1; DO(9-10) matches nothing; label mismatches give 0.
    #          -- post 2: ST(2-3) inside gold ST(1-5): C_p = 2/2, C_r = 2/5.
    #   P = (3/4 + 1 + 1) / 4 predicted spans, R = (3/4 + 1 + 2/5) / 3 gold spans.
    # view a2 -- post 1: one LL(1-8) over gold LL(1-4) and LL(5-8): C_p = 4/8 + 4/8, C_r = 4/4 + 4/4;
    #          -- post 2: gold SL(2-2) is missed.  P = 1 / 1, R = 2 / 3.
    golds = [
        [(Span(1, 4, LL), Span(3, 8, AE)), (Span(1, 4, LL), Span(5, 8, LL))],
        [(Span(1, 5, ST),), (Span(2, 2, SL),)],
    ]
    preds = [[(Span(2, 5, LL), Span(3, 8, AE), Span(9, 10, DO)), (Span(1, 8, LL),)], [(Span(2, 3, ST),), ()]]
    p1, r1 = F(11, 4) / 4, F(43, 20) / 3
    p2, r2 = F(1), F(2, 3)
    f1_1, f1_2 = 2 * p1 * r1 / (p1 + r1), 2 * p2 * r2 / (p2 + r2)
    assert f1_2 == F(4, 5)
    result = scores(span_metric("strict"), preds, golds)
    assert_scores(
        result,
        {
            "a1": {"precision": p1, "recall": r1, "f1": f1_1},
            "a2": {"precision": p2, "recall": r2, "f1": f1_2},
            "avg": {"precision": (p1 + p2) / 2, "recall": (r1 + r2) / 2, "f1": (f1_1 + f1_2) / 2},
        },
    )
    assert result["avg"]["f1"] != pytest.approx(
        2
        * result["avg"]["precision"]
        * result["avg"]["recall"]
        / (result["avg"]["precision"] + result["avg"]["recall"])
    )


@pytest.mark.parametrize(
    "predicted, gold, credit",
    [
        (AH, DO, 0.5),  # direct parent
        (HG, VA, 0.5),  # one of two direct parents
        (AE, "Thought-terminating-cliches", 0.5),
        (DO, AH, 0.0),  # child
        (RH, DO, 0.0),  # grandparent
        (NC, DO, 0.0),  # sibling
        (LL, ST, 0.0),  # unrelated
    ],
)
def test_soft_credit_only_for_a_direct_parent(predicted, gold, credit):
    golds = [[(Span(1, 4, gold),)]]
    preds = [[(Span(1, 4, predicted),)]]
    soft = scores(span_metric("soft", views=1), preds, golds) if credit else None
    if credit:
        assert soft["a1"]["precision"] == credit and soft["a1"]["recall"] == credit
    else:
        with pytest.warns(ZeroDenominatorWarning):  # P + R = 0
            soft = scores(span_metric("soft", views=1), preds, golds)
        assert soft["a1"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    with pytest.warns(ZeroDenominatorWarning):
        strict = scores(span_metric("strict", views=1), preds, golds)
    assert strict["a1"]["f1"] == 0.0


def test_soft_sums_are_not_capped():
    # One Hasty-generalization span over three gold spans: itself (1) and two children (0.5 each).
    golds = [[(Span(1, 4, CO), Span(1, 4, HG), Span(1, 4, VA))]]
    preds = [[(Span(1, 4, HG),)]]
    result = scores(span_metric("soft", views=1), preds, golds)
    assert result["a1"]["precision"] == 2.0
    assert result["a1"]["recall"] == pytest.approx(2 / 3)


def test_span_one_prediction_is_scored_against_every_view():
    golds = [[(Span(1, 4, LL),), (Span(1, 4, AE),)]]
    single = [[(Span(1, 4, LL), Span(3, 4, AE))]]
    result = scores(span_metric(), single, golds)
    # a1: LL exact (1, 1), AE no match; a2: AE(3-4) inside AE(1-4): C_p = 1, C_r = 2/4. Two predicted spans per view.
    assert_scores(result, {"a1": {"precision": 0.5, "recall": 1.0}, "a2": {"precision": 0.5, "recall": 0.5}})
    duplicated = scores(span_metric(), [[single[0][0], single[0][0]]], golds)
    assert result == duplicated
    metric = span_metric()
    metric.update(single, golds)
    assert metric.counts() == {"predicted": [2, 2], "gold": [1, 1]}


def test_span_zero_predictions_give_zero_and_a_warning():
    metric = span_metric()
    metric.update([[(), ()]], [[(Span(1, 2, LL),), ()]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = metric.compute()
    messages = [str(w.message) for w in caught if w.category is ZeroDenominatorWarning]
    assert any("view a1: the number of predicted spans is 0" in m for m in messages)
    assert any("view a2: the number of gold spans is 0" in m for m in messages)
    assert result["avg"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert metric.counts() == {"predicted": [0, 0], "gold": [1, 0]}


def test_span_batches_and_process_merge_give_the_same_figures():
    golds = [[(Span(1, 4, LL), Span(3, 8, AE)), (Span(2, 2, SL),)], [(Span(1, 5, ST),), ()], [(), (Span(1, 3, VA),)]]
    preds = [[(Span(2, 5, LL),), (Span(2, 3, SL),)], [(Span(2, 3, ST), Span(1, 1, DO)), ()], [(), (Span(1, 1, HG),)]]
    whole = scores(span_metric("soft"), preds, golds)
    batched = span_metric("soft")
    batched.update(preds[:1], golds[:1])
    batched.update(preds[1:], golds[1:])
    assert_close(batched.compute(), whole, tol=1e-15)
    first, second = span_metric("soft"), span_metric("soft")  # two DDP ranks, states reduced by sum
    first.update(preds[:2], golds[:2])
    second.update(preds[2:], golds[2:])
    first.merge_state(second)
    assert_close(first.compute(), whole, tol=1e-15)


def test_span_per_label_breakdown():
    golds = [[(Span(1, 4, LL), Span(1, 2, DO))]]
    preds = [[(Span(1, 2, LL), Span(5, 6, DO), Span(1, 4, AH))]]
    metric = span_metric("soft", views=1, per_label=True)
    metric.update(preds, golds)
    rows = metric.compute_per_label()["a1"]
    assert rows[LL] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "predicted": 1, "gold": 1}
    assert rows[DO]["precision"] == 0.0 and rows[DO]["recall"] == 0.5  # the parent AH earns DO's recall 0.5 * 2/2
    assert rows[AH] == {"precision": 0.25, "recall": 0.0, "f1": 0.0, "predicted": 1, "gold": 0}  # 0.5 * 2/4
    assert set(rows) == {LL, DO, AH}


def test_span_metric_rejects_wrong_view_counts_and_unknown_labels():
    with pytest.raises(ValueError, match="views"):
        span_metric(views=3).update([[(), ()]], [[(), (), ()]])
    with pytest.raises(ValueError, match="not in the inventory"):
        span_metric(views=1).update([[(Span(1, 1, "Nonsense"),)]], [[()]])


# --- post metric ---------------------------------------------------------------------------------
def test_post_perfect_prediction_scores_one_even_with_empty_posts():
    golds = [[(LL, AE), ()], [(), ()], [(DO,), (DO, ST)]]
    result = scores(PostMicroScore(2), golds, golds)
    assert_scores(result, {v: {"precision": 1, "recall": 1, "f1": 1} for v in ("a1", "a2", "avg")})


def test_post_empty_cell_quirk():
    base_pred, base_gold = [(LL,)], [(LL,)]  # one true positive so no denominator is 0
    # empty prediction on an empty gold post: one more TP
    assert scores(PostMicroScore(1), [base_pred, [()]], [base_gold, [()]])["a1"]["precision"] == 1.0
    # empty prediction on a labelled post: one FP (the pseudo-label) and |G| = 2 FN -> P = 1/2, R = 1/3
    assert_scores(
        scores(PostMicroScore(1), [base_pred, [()]], [base_gold, [(AE, DO)]]),
        {"a1": {"precision": F(1, 2), "recall": F(1, 3)}},
    )
    # labels predicted on an empty gold post: |P| = 2 FP and one FN -> P = 1/3, R = 1/2
    assert_scores(
        scores(PostMicroScore(1), [base_pred, [(AE, DO)]], [base_gold, [()]]),
        {"a1": {"precision": F(1, 3), "recall": F(1, 2)}},
    )


def test_post_hand_computed_two_views():
    # a1: TP {LL}, FP {AE}, FN {DO}; post 2 empty/empty TP -> TP 2, FP 1, FN 1
    # a2: post 1 pred {} gold {ST}: FP 1 (pseudo), FN 1; post 2 pred {SL} gold {SL, VA}: TP 1, FN 1
    preds = [[(LL, AE), ()], [(), (SL,)]]
    golds = [[(LL, DO), (ST,)], [(), (SL, VA)]]
    p1, r1, p2, r2 = F(2, 3), F(2, 3), F(1, 2), F(1, 3)
    f2 = 2 * p2 * r2 / (p2 + r2)
    assert_scores(
        scores(PostMicroScore(2), preds, golds),
        {
            "a1": {"precision": p1, "recall": r1, "f1": F(2, 3)},
            "a2": {"precision": p2, "recall": r2, "f1": f2},
            "avg": {"f1": (F(2, 3) + f2) / 2},
        },
    )


def test_post_one_prediction_is_scored_against_every_view():
    with pytest.warns(ZeroDenominatorWarning):  # a2: P + R = 0
        result = scores(PostMicroScore(2), [[(LL,)]], [[(LL,), (AE,)]])
    assert result["a1"]["f1"] == 1.0 and result["a2"]["f1"] == 0.0
    metric = PostMicroScore(2)
    metric.update([[(LL, AE)]], [[(LL,), (AE, DO)]])
    assert metric.compute()["a2"]["precision"] == 0.5 and metric.compute()["a2"]["recall"] == 0.5
    assert metric.counts() == {"predicted": [2, 2], "gold": [1, 2]}


def test_post_zero_denominator_gives_zero_and_a_warning():
    metric = PostMicroScore(1)
    metric.update([], [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert metric.compute()["a1"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert {str(w.message).split(": ")[1].split(" is")[0] for w in caught} == {
        "TP + FP",
        "TP + FN",
        "precision + recall",
    }


def test_post_per_label_breakdown_has_the_pseudo_label():
    metric = PostMicroScore(1, labels=INV.fine, per_label=True)
    metric.update([[(LL,)], [()], [()]], [[(LL, AE)], [()], [(DO,)]])
    rows = metric.compute_per_label()["a1"]
    assert rows[LL] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "predicted": 1, "gold": 1}
    assert rows[AE]["recall"] == 0.0 and rows[AE]["gold"] == 1
    assert rows[NO_LABEL] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3), "predicted": 2, "gold": 1}


def test_post_batches_and_process_merge_give_the_same_figures():
    preds = [[(LL, AE), ()], [(), (SL,)], [(DO,), (DO,)]]
    golds = [[(LL, DO), (ST,)], [(), (SL, VA)], [(), (DO, AH)]]
    whole = scores(PostMicroScore(2), preds, golds)
    first, second = PostMicroScore(2), PostMicroScore(2)
    first.update(preds[:1], golds[:1])
    second.update(preds[1:], golds[1:])
    first.merge_state(second)
    assert first.compute() == whole


# --- agreement with the reference loops on random valid corpora -------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=span_corpus_pairs())
def test_span_metric_matches_the_reference_scorer(pair):
    gold, pred = pair
    golds = [p.spans for p in gold.posts]
    preds = [p.spans for p in pred.posts]
    for mode in ("strict", "soft"):
        metric = span_metric(mode)
        metric.update(preds, golds)
        with _quiet():
            assert_close(metric.compute(), reference_span_scores(preds, golds, 2, mode))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=span_corpus_pairs(pred_views=1))
def test_span_one_prediction_matches_the_reference_scorer(pair):
    gold, pred = pair
    golds, preds = [p.spans for p in gold.posts], [p.spans for p in pred.posts]
    metric = span_metric("soft")
    metric.update(preds, golds)
    with _quiet():
        assert_close(metric.compute(), reference_span_scores(preds, golds, 2, "soft"))


@settings(max_examples=60, deadline=None)
@given(pair=post_corpus_pairs())
def test_post_metric_matches_the_reference_scorer(pair):
    gold, pred = pair
    golds, preds = [r.labels for r in gold.rows], [r.labels for r in pred.rows]
    metric = PostMicroScore(2)
    metric.update(preds, golds)
    with _quiet():
        assert_close(metric.compute(), reference_post_scores(preds, golds, 2))


def test_soft_weights_of_the_inventory_follow_the_documented_taxonomy():
    for predicted in INV.fine:
        for gold in INV.fine:
            assert INV.soft_weight(predicted, gold) == reference_weight("soft", predicted, gold), (predicted, gold)


@contextlib.contextmanager
def _quiet():
    """Random corpora may leave a view with no spans; the 0 (and its warning) is tested elsewhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroDenominatorWarning)
        yield


# --- the same agreement through files: writer -> reader -> evaluate_files -----------------------------
def _scores_of_written_files(task: str, suffix: str, gold, pred, one_pred: bool) -> dict:
    """``evaluate_files`` of the pair written to files with ``suffix`` (the writer -> reader -> scorer path)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = [write_any(corpus, f"{tmp}/{name}{suffix}") for name, corpus in (("gold", gold), ("pred", pred))]
        with _quiet():
            return evaluate_files(task, *paths, one_pred=one_pred)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=span_corpus_pairs(), one_pred=st.booleans())
def test_evaluate_files_on_written_span_files_matches_the_reference(pair, one_pred):
    gold, pred = pair
    result = _scores_of_written_files("span-fine", ".conll", gold, pred, one_pred)
    golds = [p.spans for p in gold.posts]
    preds = [p.spans[:1] if one_pred else p.spans for p in pred.posts]
    assert set(result) == {"strict", "soft"}
    for mode in ("strict", "soft"):
        assert_close(result[mode], reference_span_scores(preds, golds, 2, mode))


@settings(max_examples=40, deadline=None)
@given(pair=post_corpus_pairs(), one_pred=st.booleans())
def test_evaluate_files_on_written_post_files_matches_the_reference(pair, one_pred):
    gold, pred = pair
    result = _scores_of_written_files("post-fine", ".tsv", gold, pred, one_pred)
    golds = [r.labels for r in gold.rows]
    preds = [r.labels[:1] if one_pred else r.labels for r in pred.rows]
    assert set(result) == {"strict"}
    assert_close(result["strict"], reference_post_scores(preds, golds, 2))
