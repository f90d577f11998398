#pragma once
// Included by every isa/*.cc file before any Eigen header. kernels/CMakeLists.txt compiles those
// files once per ISA level with MT_ISA_NS (the level's namespace, isa_avx2) and MT_ISA_EIGEN
// (Eigen_avx2) defined. Note [Kernels per ISA] in cpu_isa.h: renaming Eigen's namespace gives every
// level its own copy of Eigen's inline code, so the linker cannot swap an AVX-512 copy into the
// baseline build or the other way round. These files include only this header, loops.h, the other
// isa/ headers and standard headers; tests/kernels/isa_symbols_test.sh checks their object files.
#if !defined(MT_ISA_NS) || !defined(MT_ISA_EIGEN)
#error "isa/*.cc files are compiled once per ISA level by kernels/CMakeLists.txt"
#endif

#define Eigen MT_ISA_EIGEN
#include <Eigen/Core>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/wrapping_math.h"
