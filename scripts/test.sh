#!/usr/bin/env bash
# Builds minitensor and runs its tests: `scripts/test.sh [preset]` (default: "default",
# which builds the CUDA backend when nvcc is found; GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
case "$preset" in
  tsan | fuzz) scripts/install-deps.sh ;;
  *)
    # The report test renders the HTML report in headless Chromium; with the package
    # installed here, a missing browser fails that test instead of skipping it.
    scripts/install-deps.sh chromium
    export MT_REQUIRE_CHROMIUM=1 ;;
esac
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
