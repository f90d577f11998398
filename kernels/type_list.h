#pragma once
// TypeList: the element types a kernel family is instantiated for, shared by the CPU and
// CUDA registration helpers (kernels/cpu/cpu_kernels.h, kernels/cuda/cuda_kernels.h).

#include <cstdint>

namespace mt {

template <typename... Ts>
struct TypeList {};
using AllTypes = TypeList<float, double, int32_t, int64_t, bool>;
using NumericTypes = TypeList<float, double, int32_t, int64_t>;
using FloatTypes = TypeList<float, double>;

}  // namespace mt
