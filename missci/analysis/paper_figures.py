"""The Missci paper's published figures, copied (not re-run) so that reports can show them as reference lines.

Source: Glockner, Hou, Nakov, Gurevych. "Missci: Reconstructing Fallacies in Misrepresented Science", ACL 2024
(figures as summarised in docs/missci-metrics.md). A figure the paper does not publish is simply absent.
"""

from __future__ import annotations

CITATION = "Glockner, Hou, Nakov, Gurevych: Missci: Reconstructing Fallacies in Misrepresented Science, ACL 2024"

# Table 2: argument reconstruction on the test split (154 arguments / 363 R_i). (D) = class definitions in the
# prompt, (L) = logical forms. BERTScore used microsoft/deberta-xlarge-mnli, NLI google/t5_xxl_true_nli_mixture.
# The paper evaluates GPT-4 and LLaMA 2 only: it has no GPT-3.5 row.
RECONSTRUCTION: dict[str, dict[str, float]] = {
    "random + claim": {
        "p@1": 0.131,
        "arg@1": 0.264,
        "f1_micro": 0.117,
        "meteor": 0.181,
        "bertscore": 0.611,
        "nli_a": 0.120,
        "nli_s": 0.130,
    },
    "random + p0": {"meteor": 0.188, "bertscore": 0.599, "nli_a": 0.062, "nli_s": 0.067},
    "LLaMA 2 70B (D)": {
        "p@1": 0.223,
        "arg@1": 0.416,
        "f1_micro": 0.233,
        "meteor": 0.222,
        "bertscore": 0.617,
        "nli_a": 0.123,
        "nli_s": 0.148,
    },
    "LLaMA 2 70B (L)": {
        "p@1": 0.193,
        "arg@1": 0.377,
        "f1_micro": 0.208,
        "meteor": 0.253,
        "bertscore": 0.627,
        "nli_a": 0.140,
        "nli_s": 0.165,
    },
    "GPT-4 (D)": {
        "p@1": 0.317,
        "arg@1": 0.571,
        "f1_micro": 0.297,
        "meteor": 0.239,
        "bertscore": 0.619,
        "nli_a": 0.069,
        "nli_s": 0.126,
    },
    "GPT-4 (L)": {
        "p@1": 0.292,
        "arg@1": 0.526,
        "f1_micro": 0.290,
        "meteor": 0.238,
        "bertscore": 0.613,
        "nli_a": 0.064,
        "nli_s": 0.140,
    },
}
RECONSTRUCTION_NOTES = (
    "The paper also reports Arg@6 = 0.890 for GPT-4 and 0.597 for LLaMA 2 (its best prompts); its other P@k/Arg@k "
    "figures are not copied here.",
    "The paper has no GPT-3.5 row (it evaluates GPT-4 and LLaMA 2 70B only).",
)

# Table 3: classification given the gold premise (test split, 454 interchangeable fallacies): accuracy and
# macro-F1. Per-class figures are not copied here (not available to this project in citable form).
CLASSIFICATION: dict[str, dict[str, float]] = {
    "LLaMA 2 70B (class names only)": {"accuracy": 0.493, "f1_macro": 0.406},
    "LLaMA 2 70B (L+E)": {"accuracy": 0.645, "f1_macro": 0.499},
    "GPT-4 (L+E)": {"accuracy": 0.771, "f1_macro": 0.682},
}


def classification_reference() -> dict:
    """What a missci-cls metrics JSON shows next to its own figures."""
    return {
        "source": f"{CITATION}, Table 3 (test split, 454 rows); not re-run",
        "rows": CLASSIFICATION,
        "per_class": "not published in a form copied here",
    }
