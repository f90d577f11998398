#pragma once
// Central-difference checks of GradientTape's gradients, shared by gradient_check_test.cc
// (math, reductions, nn and conv ops; the check itself) and gradient_check_array_test.cc
// (array ops).
// Each GradCase runs one differentiable op (a kGrad row of kernels/op_table.h) on float64
// inputs; check() compares the tape's gradient of sum(output * w), w fixed and random, with
// (loss(x + h) - loss(x - h)) / 2h for every input element.

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/op_id.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {

// A float64 input of a case: its shape and row-major values.
struct GradInput {
  Ints shape;
  std::vector<double> values;
};

// One check: `fn` runs `op` on one float64 tensor per input (with whatever attrs, labels,
// conditions or segment ids it captures) and returns a float64 result.
struct GradCase {
  OpId op;
  std::string name;
  std::vector<GradInput> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

// Random inputs from one fixed-seed stream, shaped to keep away from kinks and ties.
class RandomInputs {
 public:
  explicit RandomInputs(uint64_t seed) : rng_(seed) {}
  // Returns values uniform in [lo, hi).
  GradInput uniform(const Ints& shape, double lo = -1, double hi = 1);
  // Returns values with |x| uniform in [0.2, 1.2) and a random sign.
  GradInput away_from_zero(const Ints& shape);
  // Returns distinct values 0.1 apart, shuffled (no ties anywhere in the tensor).
  GradInput distinct(const Ints& shape);
  // Returns values 0.2 k + offset for random k in [-5, 5): two inputs with offsets 0.05 and
  // 0.15 are never within 0.1 of each other.
  GradInput grid(const Ints& shape, double offset);

 private:
  std::mt19937_64 rng_;
};

// Returns the number of elements of `shape`.
int64_t element_count(const Ints& shape);
// Returns a float64 tensor of `input`.
Tensor tensor_of(const GradInput& input);

// The cases of each file.
std::vector<GradCase> math_grad_cases();   // gradient_check_test.cc
std::vector<GradCase> array_grad_cases();  // gradient_check_array_test.cc

class GradientCheckTest : public RuntimeTest {
 protected:
  // Checks that `c.fn` runs `c.op` (placement log; on `device` when given, a scope around the
  // whole check) and that the tape's gradient of every input matches central differences to
  // rtol 1e-6, atol 1e-8.
  void check(const GradCase& c, const char* device = nullptr);
};

}  // namespace mt::testing
