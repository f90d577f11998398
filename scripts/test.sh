#!/usr/bin/env bash
# Builds minitensor and runs its tests: `scripts/test.sh [preset]` (default: "default",
# which builds the CUDA backend when nvcc is found; GPU tests skip without a GPU).
# With the default and cpu-only presets it then installs the Python package into a venv
# (build/venv, pip packages from PyPI) from the same build folder, so nothing compiles
# twice, and runs pytest on the installed package.
# MT_WERROR=ON in the environment turns compiler warnings into errors (CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
case "$preset" in
  default | cpu-only) python=1 ;;
  *) python=0 ;;  # sanitizer and fuzz builds cannot be loaded into a stock interpreter
esac
deps=()
[ "$python" = 1 ] && deps+=(python3-venv python3-dev)
case "$preset" in
  tsan | fuzz) ;;
  *)
    # The report test renders the HTML report in headless Chromium; with the package
    # installed here, a missing browser fails that test instead of skipping it.
    deps+=(chromium)
    export MT_REQUIRE_CHROMIUM=1 ;;
esac
scripts/install-deps.sh "${deps[@]}"
cmake --preset "$preset" -DMT_WERROR="${MT_WERROR:-OFF}" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
ctest --preset "$preset" -j "$(nproc)"
[ "$python" = 1 ] || exit 0

root=$PWD
venv=$root/build/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip nanobind scikit-build-core numpy pytest \
  h5py safetensors  # the checkpoint tests read Keras and safetensors files
# The preset's build folder and options, plus the extension: only it and its stub compile.
cuda=AUTO
[ "$preset" = cpu-only ] && cuda=OFF
MT_CUDA=$cuda CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/python" -m pip install -q \
  --no-build-isolation --force-reinstall --no-deps \
  -C build-dir="build/$preset" -C cmake.define.MT_BUILD_TESTS=ON \
  -C cmake.define.MT_BUILD_BENCHMARKS=ON -C cmake.define.MT_BUILD_EXAMPLES=ON .
# From outside the source tree, so that the installed package is the one imported.
cd /tmp && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python"
