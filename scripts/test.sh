#!/usr/bin/env bash
# Builds minitensor and runs its tests: `scripts/test.sh [preset]` (default: "default",
# which builds the CUDA backend when nvcc is found; GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
