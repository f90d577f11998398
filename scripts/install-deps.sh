#!/usr/bin/env bash
# Installs the Debian packages minitensor needs, and any named as arguments (the fuzz
# preset's clang), when any is missing. Idempotent.
set -euo pipefail
packages=(cmake ninja-build g++ libeigen3-dev libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc protobuf-compiler openssl
  "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "minitensor: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
