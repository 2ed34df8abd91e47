#!/usr/bin/env bash
# Rebuilds the strata-tiny-gpt causal-LM test fixture into src/test/resources/models/strata-tiny-gpt/.
# Needs root once (apt-get install python3-torch, Debian's PyTorch). Takes about 10 minutes on 2 cores.
#
#   tools/causal-lm-fixture/build.sh [OUT_DIR]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:-$HERE/../../src/test/resources/models/strata-tiny-gpt}
PYTHON=/usr/bin/python3 # Debian's python, where python3-torch installs (not a pyenv shim)

if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch
fi
mkdir -p "$OUT"
"$PYTHON" "$HERE/train.py" "$OUT"
cp "$HERE/README.txt" "$OUT/README.txt"
du -sh "$OUT"
