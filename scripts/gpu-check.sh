#!/usr/bin/env bash
# The GPU check, in two halves:
#   scripts/gpu-check.sh bundle [BUILD]
#                                 (here) builds for sm_90 and fills .gpu/ with the test,
#                                  example and benchmark binaries plus the shared libraries
#                                  the GPU machine lacks (absl, benchmark, and gRPC,
#                                  protobuf and their dependencies for distributed/);
#   scripts/gpu-check.sh base BUILD
#                                 (here, after bundle) adds an earlier build's per-op
#                                  benchmarks, which gpu-run.sh's basecompare step runs
#                                  beside this build's;
#   bash .gpu/gpu-run.sh          (there, through the device tool with carry [".gpu"]) runs
#                                  the tests, compute-sanitizer memcheck over the GPU tests,
#                                  the examples, the benchmarks and the Python package
#                                  (pytest, the Python examples, the Python overhead
#                                  benchmark beside torch.add), writes logs under $OUT and
#                                  prints one summary table.
# The Python package is a cp312 wheel (the GPU machine's Python) built from the same build
# folder; MT_GPU_PYTHON names the Python 3.12 interpreter to build it with.
set -euo pipefail
cd "$(dirname "$0")/.."
# Builds the cp312 wheel of the Python package into .gpu/wheels in its own build folder,
# $1-wheel312 (configuring $1 itself for the wheel would rebuild all of it afterwards; the
# compiler cache, when there is one, serves the library objects), with pytest's wheels
# beside it; its absl libraries, and gRPC's when the build has the distributed layer, go to
# .gpu/lib (its OpenSSL and zlib are mt-server's, in .gpu/lib-fallback).
python_wheel() {
  local python="${MT_GPU_PYTHON:-$(pyenv prefix 3.12 2>/dev/null || echo /usr)/bin/python3.12}"
  local venv=build/venv312
  local dir="$1-wheel312"
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-C cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache
              -C cmake.define.CMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip nanobind scikit-build-core numpy
  MT_CUDA=ON CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv/bin/python" -m pip wheel -q \
    --no-build-isolation --no-deps -w .gpu/wheels -C build-dir="$dir" "${launcher[@]}" \
    -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90 .
  "$venv/bin/python" -m pip download -q --only-binary=:all: -d .gpu/wheels pytest
  ldd "$dir"/python/_minitensor*.so \
    | awk '/=> \/lib\/x86_64-linux-gnu\/lib(absl|dnnl|grpc|gpr|protobuf|upb|address_sorting|re2|cares)/{print $3}' \
    | xargs -r -I{} cp -L {} .gpu/lib/
}

case "${1:-bundle}" in
  bundle)
    scripts/install-deps.sh
    # BUILD: an existing build folder with the CUDA backend for sm_90 (the default preset's,
    # build/default, is one when nvcc is found), which saves a second full build.
    build="${2:-build/gpu-sm90}"
    if [ -z "${2:-}" ]; then cmake --preset gpu-sm90 >/dev/null; fi
    grep -q '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" 2>/dev/null ||
      { echo "gpu-check: $build has no CUDA backend" >&2; exit 1; }
    cmake --build "$build" -j "$(nproc)"
    rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
    find "$build"/tests "$build"/examples "$build"/bench -maxdepth 1 -type f -perm -u+x \
      -exec cp -t .gpu/bin/ {} +
    # distributed/ (when gRPC was found): the task server, the two-process example and the
    # remote benchmark (gpu-run.sh's tlsbench step).
    for p in mt-server remote_guide_example remote_benchmark; do
      if [ -x "$build/distributed/$p" ]; then cp "$build/distributed/$p" .gpu/bin/; fi
    done
    strip --strip-unneeded .gpu/bin/*
    for b in .gpu/bin/*; do
      ldd "$b" | awk '/=> \/lib\/x86_64-linux-gnu\/lib(absl|benchmark|gtest|gmock|grpc|gpr|protobuf|upb|address_sorting|re2|cares|dnnl)/{print $3}'
    done | sort -u | xargs -r -I{} cp -L {} .gpu/lib/
    # gRPC's OpenSSL and zlib, and GNU OpenMP: used there only when the machine has none
    # (gpu-run.sh).
    mkdir -p .gpu/lib-fallback
    for b in .gpu/bin/*; do
      ldd "$b" | awk '/=> \/lib\/x86_64-linux-gnu\/lib(ssl|crypto|z|gomp)\.so/{print $3}'
    done | sort -u | xargs -r -I{} cp -L {} .gpu/lib-fallback/
    if ls "$build"/python/_minitensor.cpython-311-*.so >/dev/null 2>&1; then
      # The build has the 3.11 extension (scripts/test.sh installed it from this folder):
      # only the extension is compiled again for 3.12 (scripts/py312-extension.sh), into
      # .gpu/python, which gpu-run.sh's python step puts over the wheel; pytest's wheels
      # still go to .gpu/wheels.
      scripts/py312-extension.sh "$build" "$PWD/.gpu/python"
      xz -T0 .gpu/python/minitensor/_minitensor*.so  # gpu-run.sh unpacks it
      mkdir -p .gpu/wheels
      python3 -m pip download -q --only-binary=:all: --python-version 3.12 -d .gpu/wheels pytest
      ldd "$build"/python/_minitensor*.so \
        | awk '/=> \/lib\/x86_64-linux-gnu\/lib(absl|dnnl|grpc|gpr|protobuf|upb|address_sorting|re2|cares)/{print $3}' \
        | xargs -r -I{} cp -L {} .gpu/lib/
    else
      python_wheel "$build"  # its absl libraries join .gpu/lib before the packing
    fi
    # The statically linked programs and libraries pass the device tool's 64 MiB limit: they
    # travel packed, and gpu-run.sh unpacks them.
    # MT_XZ_PRESET (6) trades size for time: 2 packs in minutes what 6 packs in ten, a
    # fifth larger.
    # One stream with a dictionary larger than a program: every program links the same
    # runtime and kernels (about 11 MiB each), which xz then stores once (75 MiB -> 20 MiB).
    tar -C .gpu -cf - bin lib | xz -T0 --lzma2=preset="${MT_XZ_PRESET:-6}",dict=256MiB >.gpu/bin.tar.xz &&
      rm -rf .gpu/bin .gpu/lib
    cp scripts/gpu-run.sh .gpu/gpu-run.sh
    # Sources the GPU machine compiles: the libtorch peers of the CPU, half-precision and
    # training-step benchmarks.
    mkdir -p .gpu/src/bench/peer .gpu/src/scripts
    cp bench/cpu_bench_util.h .gpu/src/bench/
    cp bench/peer/torch_cpu_peer.cc bench/peer/torch_gpu_peer.cc bench/peer/torch_train_peer.cc \
      .gpu/src/bench/peer/
    cp scripts/cpu-bench-table.py .gpu/src/scripts/
    du -sh .gpu
    echo "now run on the GPU machine: bash .gpu/gpu-run.sh  (carry: [\".gpu\"])"
    ;;
  base)
    # BUILD: a build folder of an earlier commit with the CUDA backend; its per-op
    # benchmarks go to .gpu/base.tar.xz, which gpu-run.sh's basecompare step runs beside
    # this build's (after `bundle`, which empties .gpu/).
    mkdir -p .gpu/base-bin
    for b in runtime_benchmark eager_gpu_benchmark function_benchmark cost_policy_benchmark \
             train_step_benchmark; do
      cp "${2:?usage: scripts/gpu-check.sh base BUILD}/bench/$b" .gpu/base-bin/
    done
    strip --strip-unneeded .gpu/base-bin/*
    tar -C .gpu/base-bin -cf - . | xz -T1 --lzma2=preset=6,dict=256MiB >.gpu/base.tar.xz
    rm -rf .gpu/base-bin
    du -sh .gpu/base.tar.xz ;;
  *) echo "usage: scripts/gpu-check.sh [bundle [BUILD] | base BUILD]" >&2; exit 2 ;;
esac
