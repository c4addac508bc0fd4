"""Reading Missci results: baselines, the citable report table, error analysis, the paper's published figures."""
