"""Cross-validated training of MVML/MVMD: the fold runner behind train.py, decision-rule tuning on dev, the results table."""
