#!/usr/bin/env bash
# Builds minitensor and runs the main demo: the GPU guide's first example, which logs
# where each op runs and prints the product.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target guide_logging
build/default/examples/guide_logging
