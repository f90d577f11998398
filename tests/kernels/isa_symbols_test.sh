#!/usr/bin/env bash
# Usage: isa_symbols_test.sh LEVEL "OBJ;OBJ;..."  Fails when an object compiled for ISA
# LEVEL defines a weak symbol (inline or template code the linker may merge with another
# object's copy) outside mt::cpu::isa_LEVEL and Eigen_LEVEL (Note [Kernels per ISA]).
set -euo pipefail
level="$1"
IFS=';' read -r -a objects <<<"$2"
[ ${#objects[@]} -gt 0 ] || { echo "no objects for $level"; exit 1; }
shared=$(nm -C --defined-only "${objects[@]}" | awk '$2 ~ /^[WVuvw]$/' |
  grep -v -E "(mt::cpu::isa_${level}::|Eigen_${level}::|DW\.ref\.__gxx_personality_v0)" || true)
if [ -n "$shared" ]; then
  echo "weak symbols outside the ${level} namespaces:"
  echo "$shared"
  exit 1
fi
echo "isa_symbols ${level}: ${#objects[@]} objects, no shared inline code"
