// mt::random::Generator (random_generator.h): a Philox state in a variable, moved on by
// each draw as TensorFlow's stateful random ops move theirs.
#include "runtime/ops/random_generator.h"

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/mutex.h"
#include "kernels/philox.h"
#include "runtime/eager/error.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/random_reserve.h"

namespace mt::random {

struct Generator::Lock {
  internal::Mutex mu;
};

namespace {

// TensorFlow's reservation per output: enough blocks for any distribution of one value.
constexpr uint64_t kBlocksPerOutput = 256;

Tensor state_tensor(uint64_t counter_low, uint64_t counter_high, uint64_t key) {
  return constant(
      std::vector<int64_t>{static_cast<int64_t>(counter_low), static_cast<int64_t>(counter_high),
                           static_cast<int64_t>(key)},
      {3});
}

// Returns where the next `n` outputs of `state` start, and moves `state` past them.
PhiloxSeed reserve(Variable& state, int64_t n) {
  std::vector<int64_t> s = state.read_value().to_vector<int64_t>();
  const auto c0 = static_cast<uint64_t>(s[0]), c1 = static_cast<uint64_t>(s[1]);
  const auto key = static_cast<uint64_t>(s[2]);
  const PhiloxSeed start = {{{static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)}},
                            {{static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                              static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)}}};
  const PhiloxBlock next = counter_add(start.counter, static_cast<uint64_t>(n) * kBlocksPerOutput);
  state.assign(state_tensor(uint64_t{next.word[1]} << 32 | next.word[0],
                            uint64_t{next.word[3]} << 32 | next.word[2], key));
  return start;
}

void check_state(DType dtype, const Shape& shape) {
  if (dtype != DType::kInt64 || shape.rank() != 1 || shape.dim(0) != 3) {
    internal::throw_error(absl::InvalidArgumentError(
        absl::StrCat("[Generator] the state must be int64 [3] (Philox: counter, counter, key), "
                     "not ",
                     dtype_name(dtype), " ", shape.to_string())));
  }
}

}  // namespace

Generator::Generator(Variable state) : state_(std::move(state)), lock_(std::make_shared<Lock>()) {
  if (!state_.defined()) {
    internal::throw_error(absl::InvalidArgumentError("[Generator] the state variable is empty"));
  }
  check_state(state_.dtype(), state_.shape());
}

Generator Generator::from_seed(uint64_t seed) {
  return Generator(Variable(state_tensor(seed, 0, 0), /*trainable=*/false, "generator_state"));
}

Generator Generator::from_state(const Tensor& state) {
  check_state(state.dtype(), state.shape());
  return Generator(Variable(state, /*trainable=*/false, "generator_state"));
}

Generator Generator::from_non_deterministic_state() {
  std::random_device device;
  auto draw64 = [&device] { return uint64_t{device()} << 32 | device(); };
  const uint64_t c0 = draw64(), c1 = draw64(), key = draw64();
  return Generator(Variable(state_tensor(c0, c1, key), /*trainable=*/false, "generator_state"));
}

Tensor Generator::uniform(absl::Span<const int64_t> shape, double minval,
                          std::optional<double> maxval, DType dtype) {
  internal::MutexLock lock(&lock_->mu);
  internal::RandomReserve take = [this](int64_t n) -> absl::StatusOr<PhiloxSeed> {
    return reserve(state_, n);
  };
  return internal::value_or_throw(
      internal::random_uniform_from(take, shape, minval, maxval, dtype));
}

Tensor Generator::normal(absl::Span<const int64_t> shape, double mean, double stddev, DType dtype) {
  internal::MutexLock lock(&lock_->mu);
  internal::RandomReserve take = [this](int64_t n) -> absl::StatusOr<PhiloxSeed> {
    return reserve(state_, n);
  };
  return internal::value_or_throw(
      internal::random_normal_from(take, shape, mean, stddev, dtype, /*truncated=*/false));
}

Tensor Generator::truncated_normal(absl::Span<const int64_t> shape, double mean, double stddev,
                                   DType dtype) {
  internal::MutexLock lock(&lock_->mu);
  internal::RandomReserve take = [this](int64_t n) -> absl::StatusOr<PhiloxSeed> {
    return reserve(state_, n);
  };
  return internal::value_or_throw(
      internal::random_normal_from(take, shape, mean, stddev, dtype, /*truncated=*/true));
}

}  // namespace mt::random
