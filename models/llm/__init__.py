"""Causal language models: loading (hub, folder, GGUF, tiny config), generation backends (transformers, vLLM), the LoRA LightningModule."""
