"""From records to training data: task views (coarse/fine, targets), folds, features, the DataModule, HF datasets and the feature cache, the synthetic sample."""
