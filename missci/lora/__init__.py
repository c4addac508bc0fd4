"""LoRA fine-tuning on Missci (the ``mode=finetune`` runner): supervised examples, the two tasks, adapter bundles."""
