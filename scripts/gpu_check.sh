#!/usr/bin/env bash
# One command for a GPU machine without the Hugging Face hub: MVMD span-f and MVML post-f on the sample
# (trainer=gpu, bf16-mixed), SmolLM2 QLoRA + candidates on Missci, vLLM generation when installed; one table
# (time, peak GPU memory, score), non-zero exit on any failure. Options: bash scripts/gpu_check.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the checkout, also where it is not pip-installed
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
exec "$PYTHON" scripts/gpu_check.py --python "$PYTHON" "$@"
