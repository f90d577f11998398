#!/usr/bin/env bash
# Builds the Python extension for CPython 3.12 (the GPU machine's) from build folder $1,
# which has built the 3.11 one (pip install with -C build-dir=$1): the extension's and
# nanobind's objects are compiled again with 3.12's headers into $1/py312 and linked against
# $1's libraries, as its own ninja commands say; nothing else is rebuilt. Then the package
# (python/minitensor plus the extension) goes to $2, ready for PYTHONPATH.
# A faster stand-in for gpu-check.sh's wheel, whose own build compiles everything again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
dest=$2
py312=${MT_GPU_PYTHON_PREFIX:-$(pyenv prefix 3.12)}
inc311=$(grep -o '\-I[^ ]*include/python3\.11' "$build/build.ninja" | head -1 | cut -c3-)
[ -n "$inc311" ] || { echo "py312-extension: $build builds no 3.11 extension" >&2; exit 1; }
so311=python/_minitensor.cpython-311-x86_64-linux-gnu.so
out=$build/py312
mkdir -p "$out"
cd "$build"
ninja -t commands "$so311" | grep -E 'python/CMakeFiles/|python/libnanobind|-o python/_minitensor' |
  sed -e "s#$inc311#$py312/include/python3.12#g" \
      -e "s# -o python/_minitensor# -o py312/python/_minitensor#g" \
      -e "s#python/CMakeFiles/#py312/python/CMakeFiles/#g" \
      -e "s#python/libnanobind#py312/python/libnanobind#g" \
      -e "s#cpython-311-x86_64#cpython-312-x86_64#g" \
      -e 's# -MD -MT [^ ]* -MF [^ ]*##' >"$out/commands.sh"
grep -oE '(-o|-MF) py312/[^ ]*' "$out/commands.sh" | awk '{print $2}' | xargs -n1 dirname | sort -u |
  xargs mkdir -p
# The compiles in parallel, then the archive and the link, in order.
grep -- ' -c ' "$out/commands.sh" | xargs -P "$(nproc)" -I{} sh -c '{}'
grep -vE ' -c ' "$out/commands.sh" | sh
rm -rf "$dest" && mkdir -p "$dest"
cp -r "$root/python/minitensor" "$dest/"
rm -f "$dest"/minitensor/_minitensor*.so
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
cp "$out/python/_minitensor.cpython-312-x86_64-linux-gnu.so" "$dest/minitensor/"
echo "py312-extension: $dest/minitensor"
