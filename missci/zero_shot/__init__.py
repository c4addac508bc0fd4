"""Zero-shot Missci runs with any causal LM: argument reconstruction, and classification given the gold premise."""
