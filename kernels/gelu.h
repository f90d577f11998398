#pragma once
// Gelu's element function, shared by the CPU and GPU kernels: x * Phi(x) as
// 0.5 * x * (1 + erf(x / sqrt(2))), or with `approximate` TensorFlow's tanh form
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). F is float (the 2-byte floats
// widen to it and round once) or double; the C library's erff/erf and tanhf/tanh, which
// CUDA provides in device code too.

#include <math.h>

#include "kernels/philox.h"  // MT_HOST_DEVICE

namespace mt {

MT_HOST_DEVICE inline float gelu_erf(float x) { return erff(x); }
MT_HOST_DEVICE inline double gelu_erf(double x) { return erf(x); }
MT_HOST_DEVICE inline float gelu_tanh(float x) { return tanhf(x); }
MT_HOST_DEVICE inline double gelu_tanh(double x) { return tanh(x); }

template <typename F>
MT_HOST_DEVICE inline F gelu_value(F x, bool approximate) {
  if (approximate) {
    const F u = F(0.7978845608028654) * (x + F(0.044715) * (x * x * x));
    return F(0.5) * x * (F(1) + gelu_tanh(u));
  }
  return F(0.5) * x * (F(1) + gelu_erf(x / F(1.4142135623730951)));
}

}  // namespace mt
