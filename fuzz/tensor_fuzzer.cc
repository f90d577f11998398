// Fuzzes tensor construction on a logical CPU limited to 8 MiB: shapes with negative, zero,
// huge and overflowing dimensions; mt::constant from vectors whose length may not match;
// zeros, ones and fill with any double and any dtype byte; then reductions over fuzzed
// axes, to_vector with the right and the wrong type, and printing. Every outcome is
// compared with a model written here: the error code and message, or the shape, dtype and
// values of the result. Between those, calls of any op of the table on fuzzed inputs and
// attributes (tensor_fuzzer_ops.h). Afterwards the pool holds no byte.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/tensor_fuzzer_ops.h"

namespace mt::fuzz {
namespace {

constexpr int64_t kLimitMb = 8;
constexpr int64_t kSureBytes = 1 << 20;  // requests this small must succeed
constexpr int64_t kMaxChecked = 4096;    // elements whose reduction values are checked

// Returns the error Shape::make gives for `dims`, or "" when they are valid; sets `*count`.
std::string shape_error(const std::vector<int64_t>& dims, int64_t* count) {
  const std::string list = absl::StrJoin(dims, ",");
  bool zero = false, overflow = false;
  __int128 n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::StrCat("[Shape] dimension ", i, " is negative (", dims[i], ") in [", list, "]");
    }
    zero |= dims[i] == 0;
    if (!overflow) n *= dims[i];
    overflow |= n * 8 > std::numeric_limits<int64_t>::max();
  }
  if (overflow && !zero) {
    return absl::StrCat("[Shape] too many elements in [", list, "]: the byte size overflows int64");
  }
  *count = zero ? 0 : static_cast<int64_t>(n);
  return "";
}

std::string shape_string(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat("(", dims[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
}

std::vector<int64_t> random_dims(FuzzedDataProvider& in) {
  std::vector<int64_t> dims(in.ConsumeIntegralInRange(0, 8));
  for (int64_t& d : dims) {
    switch (in.ConsumeIntegralInRange(0, 3)) {
      case 0:
        d = in.ConsumeIntegralInRange(0, 4);
        break;
      case 1:
        d = int64_t{1} << in.ConsumeIntegralInRange(0, 62);
        break;
      case 2:
        d = -in.ConsumeIntegralInRange<int64_t>(1, 1 << 20);
        break;
      default:
        d = in.ConsumeIntegral<int64_t>();
    }
  }
  return dims;
}

// Checks that `fn` throws mt::Error with `code` and `message`.
template <typename Fn>
void expect_error(Fn&& fn, absl::StatusCode code, const std::string& message) {
  try {
    fn();
  } catch (const Error& e) {
    FUZZ_CHECK_MSG(e.code() == code, e.what());
    FUZZ_CHECK_MSG(e.what() == message, absl::StrCat(e.what(), "\n  wanted: ", message));
    return;
  }
  FUZZ_CHECK(false && "expected mt::Error");
}

// Runs `fn`, a tensor of `bytes` bytes: an OOM is allowed only for a large request.
template <typename Fn>
std::optional<Tensor> allocate(Fn&& fn, int64_t bytes) {
  try {
    return fn();
  } catch (const Error& e) {
    FUZZ_CHECK_MSG(e.code() == absl::StatusCode::kResourceExhausted, e.what());
    FUZZ_CHECK_MSG(starts_with(e.what(), "OOM when allocating tensor with shape"), e.what());
    FUZZ_CHECK(bytes > kSureBytes);
    return std::nullopt;
  }
}

// Checks dtype, shape and the printed form of `t`.
void check_tensor(const Tensor& t, DType dtype, const std::vector<int64_t>& dims) {
  FUZZ_CHECK(t.dtype() == dtype);
  FUZZ_CHECK(std::vector<int64_t>(t.shape().dims().begin(), t.shape().dims().end()) == dims);
  FUZZ_CHECK(t.device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  if (t.num_elements() <= 64) {
    std::ostringstream out;
    out << t;
    const std::string tail =
        absl::StrCat(", shape=", shape_string(dims), ", dtype=", dtype_name(dtype), ")");
    FUZZ_CHECK(starts_with(out.str(), "Tensor("));
    FUZZ_CHECK(out.str().size() > tail.size() &&
               out.str().compare(out.str().size() - tail.size(), tail.size(), tail) == 0);
  }
  const DType wrong = dtype == DType::kInt32 ? DType::kFloat32 : DType::kInt32;
  expect_error(
      [&] { wrong == DType::kInt32 ? (void)t.to_vector<int32_t>() : (void)t.to_vector<float>(); },
      absl::StatusCode::kInvalidArgument,
      absl::StrCat("[to_vector] the tensor holds ", dtype_name(dtype), ", not ",
                   dtype_name(wrong)));
}

// Returns the error fill(dims, value, dtype byte) must give, in the order fill checks: the
// dtype, a value no integer converts from (integers go through int64), the shape, then the
// int32 range (in Fill's shape function). Returns "" when it must succeed.
std::string fill_error(double value, uint8_t byte, const std::string& bad_shape) {
  if (byte >= kNumDTypes) return absl::StrCat("[Fill] invalid dtype ", static_cast<int>(byte));
  const DType dtype = static_cast<DType>(byte);
  const bool integer = dtype == DType::kInt32 || dtype == DType::kInt64;
  if (integer && !(value >= -0x1p63 && value < 0x1p63)) {
    return absl::StrCat("[Fill] value ", value, " is out of range for ", dtype_name(dtype));
  }
  if (!bad_shape.empty()) return bad_shape;
  if (dtype == DType::kInt32 && !(value > -2147483649.0 && value < 2147483648.0)) {
    return absl::StrCat("[Fill] value ", static_cast<int64_t>(value), " is out of range for int32");
  }
  return "";
}

// Returns the bytes each element of fill(dims, value, dtype) holds, for a value that fits.
std::string fill_element(double value, DType dtype) {
  auto bytes = [](auto v) { return std::string(reinterpret_cast<const char*>(&v), sizeof(v)); };
  switch (dtype) {
    case DType::kFloat32:
      return bytes(static_cast<float>(value));
    case DType::kFloat64:
      return bytes(value);
    case DType::kBool:
      return std::string(1, value != 0 ? 1 : 0);
    case DType::kInt32:
      return bytes(static_cast<int32_t>(value));
    case DType::kInt64:
      return bytes(static_cast<int64_t>(value));
    case DType::kBFloat16:
      return bytes(bfloat16(static_cast<float>(value)));
    case DType::kFloat16:
      return bytes(float16(static_cast<float>(value)));
  }
  return "";
}

double random_value(FuzzedDataProvider& in) {
  static const double kSpecial[] = {0.0,          -0.0,         1.0,           -1.0,   0.5,
                                    2147483647.0, 2147483648.0, -2147483649.0, 9.3e18, -9.3e18,
                                    1e300,        INFINITY,     -INFINITY,     NAN};
  if (in.ConsumeBool()) return kSpecial[in.ConsumeIntegralInRange<size_t>(0, 13)];
  return in.ConsumeFloatingPoint<double>();
}

// Returns the output element that element `flat` of an input of shape `dims` reduces into,
// where `kept` is the output shape with reduced dimensions kept as 1.
int64_t reduced_index(const std::vector<int64_t>& dims, int64_t flat,
                      const std::vector<int64_t>& kept) {
  int64_t index = 0, stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    const int64_t coord = flat % dims[i];
    flat /= dims[i];
    if (kept[i] != 1) index += coord * stride;
    stride *= kept[i];
  }
  return index;
}

// Checks reduction `op` ('s' sum, 'm' mean, 'x' max) of `in` into `out` element by element.
template <typename T>
void check_values(char op, const std::vector<int64_t>& dims, const std::vector<int64_t>& kept,
                  const std::vector<T>& in, const std::vector<T>& out) {
  using Acc = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                          std::type_identity<long double>>::type;
  std::vector<Acc> sum(out.size(), 0), magnitude(out.size(), 0);
  std::vector<T> max(out.size(), std::numeric_limits<T>::has_infinity
                                     ? -std::numeric_limits<T>::infinity()
                                     : std::numeric_limits<T>::lowest());
  std::vector<bool> nan(out.size(), false);
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t o = reduced_index(dims, static_cast<int64_t>(i), kept);
    sum[o] += static_cast<Acc>(in[i]);
    if constexpr (!std::is_integral_v<T>)
      magnitude[o] += std::fabs(static_cast<long double>(in[i]));
    nan[o] = nan[o] || in[i] != in[i];
    if (in[i] > max[o]) max[o] = in[i];
  }
  const int64_t group = out.empty() ? 0 : static_cast<int64_t>(in.size() / out.size());
  for (size_t o = 0; o < out.size(); ++o) {
    if constexpr (std::is_integral_v<T>) {
      const T total = static_cast<T>(sum[o]);
      const T want = op == 'x'    ? max[o]
                     : op == 's'  ? total
                     : group == 0 ? T(0)
                                  : static_cast<T>(int64_t{total} / group);
      FUZZ_CHECK(out[o] == want);
    } else if (op == 'x') {
      FUZZ_CHECK(nan[o] ? out[o] != out[o] : out[o] == max[o]);
    } else if (std::isfinite(static_cast<double>(magnitude[o])) && magnitude[o] < 1e30) {
      long double want = op == 's' ? sum[o] : sum[o] / group;
      if (op == 'm' && group == 0) {
        FUZZ_CHECK(out[o] != out[o]);  // 0 / 0
        continue;
      }
      const long double slack = (sizeof(T) == 4 ? 1e-5L : 1e-12L) * magnitude[o] * (group + 1);
      FUZZ_CHECK(std::fabs(static_cast<long double>(out[o]) - want) <=
                 slack / (op == 'm' ? group : 1) + 1e-30L);
    }
  }
}

// Reduces `t` over fuzzed axes with a fuzzed reduction, checking the error or the result.
void reduce(FuzzedDataProvider& in, const Tensor& t, const std::vector<int64_t>& dims) {
  static const char* kNames[] = {"Sum", "Mean", "Max"};
  const int which = in.ConsumeIntegralInRange(0, 2);
  const char op = "smx"[which];
  const std::string name = kNames[which];
  const bool all = in.ConsumeBool(), keep = in.ConsumeBool();
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> axes(all ? 0 : in.ConsumeIntegralInRange(0, 4));
  for (int64_t& a : axes) a = in.ConsumeIntegralInRange(-rank - 2, rank + 1);
  const Axes spec = all ? Axes() : Axes(absl::MakeConstSpan(axes));
  auto run = [&] {
    return op == 's'   ? reduce_sum(t, spec, keep)
           : op == 'm' ? reduce_mean(t, spec, keep)
                       : reduce_max(t, spec, keep);
  };
  if (t.dtype() == DType::kBool) {
    return expect_error(run, absl::StatusCode::kInvalidArgument,
                        "[" + name +
                            "] dtype bool is not supported; expected one of "
                            "float32, float64, int32, int64, bfloat16, float16");
  }
  std::vector<bool> reduced(rank, all);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return expect_error(
          run, absl::StatusCode::kInvalidArgument,
          absl::StrCat("[", name, "] axis ", a,
                       " is out of range for input of "
                       "shape ",
                       shape_string(dims), "; expected an axis in [", -rank, ", ", rank, ")"));
    }
    const int64_t d = a < 0 ? a + rank : a;
    if (reduced[d]) {
      return expect_error(run, absl::StatusCode::kInvalidArgument,
                          absl::StrCat("[", name, "] axes [", absl::StrJoin(axes, ", "),
                                       "] name dimension ", d, " twice"));
    }
    reduced[d] = true;
  }
  std::vector<int64_t> kept, out_dims;
  for (int i = 0; i < rank; ++i) {
    kept.push_back(reduced[i] ? 1 : dims[i]);
    if (!reduced[i] || keep) out_dims.push_back(kept.back());
  }
  // Reducing a zero dimension away can leave an output too large to describe.
  int64_t out_count = 0;
  if (!shape_error(out_dims, &out_count).empty()) {
    return expect_error(run, absl::StatusCode::kInvalidArgument,
                        absl::StrCat("[", name, "] output shape [", absl::StrJoin(out_dims, ","),
                                     "] has too many elements: its byte size overflows int64"));
  }
  const int64_t bytes =
      (t.num_elements() + out_count) * static_cast<int64_t>(dtype_size(t.dtype()));
  std::optional<Tensor> r = allocate(run, bytes);
  if (!r) return;
  check_tensor(*r, t.dtype(), out_dims);
  if (t.num_elements() > kMaxChecked) return;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // 2-byte floats are checked against a double reference in half_kernels_test.cc.
    if constexpr (!std::is_same_v<T, bool> && dtype_kind(dtype_of<T>()) != DTypeKind::kHalf) {
      check_values<T>(op, dims, kept, t.to_vector<T>(), r->to_vector<T>());
    }
  });
}

// mt::constant from a vector of fuzzed values whose length may not match the shape.
std::optional<Tensor> from_vector(FuzzedDataProvider& in, const std::vector<int64_t>& dims,
                                  const std::string& bad_shape, int64_t count) {
  const DType dtype = static_cast<DType>(in.ConsumeIntegralInRange(0, kNumDTypes - 1));
  const int64_t n = in.ConsumeBool() && bad_shape.empty() && count <= kMaxChecked
                        ? count
                        : in.ConsumeIntegralInRange<int64_t>(0, 64);
  std::string bytes = in.ConsumeBytesAsString(n * dtype_size(dtype));
  bytes.resize(n * dtype_size(dtype));
  auto run = [&] { return make_tensor(dtype, bytes, dims); };
  if (!bad_shape.empty()) {
    expect_error(run, absl::StatusCode::kInvalidArgument, bad_shape);
    return std::nullopt;
  }
  if (n != count) {
    expect_error(run, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("[_EagerConst] ", n, " values given for shape ", shape_string(dims),
                              ", which holds ", count));
    return std::nullopt;
  }
  std::optional<Tensor> t = allocate(run, static_cast<int64_t>(bytes.size()));
  if (!t) return t;
  check_tensor(*t, dtype, dims);
  if (dtype == DType::kBool) {
    for (char& c : bytes) c &= 1;
  }
  FUZZ_CHECK(contents(*t) == bytes);
  return t;
}

// zeros, ones or fill with a fuzzed value and dtype byte (values past kBool are invalid).
std::optional<Tensor> filled(FuzzedDataProvider& in, const std::vector<int64_t>& dims,
                             const std::string& bad_shape, int64_t count) {
  const int kind = in.ConsumeIntegralInRange(0, 2);
  const double value = kind == 0 ? 0.0 : kind == 1 ? 1.0 : random_value(in);
  const uint8_t byte = in.ConsumeBool() ? in.ConsumeIntegral<uint8_t>()
                                        : in.ConsumeIntegralInRange<uint8_t>(0, kNumDTypes - 1);
  const DType dtype = static_cast<DType>(byte);
  auto run = [&] {
    return kind == 0   ? zeros(dims, dtype)
           : kind == 1 ? ones(dims, dtype)
                       : fill(dims, value, dtype);
  };
  const std::string error = fill_error(value, byte, bad_shape);
  if (!error.empty()) {
    expect_error(run, absl::StatusCode::kInvalidArgument, error);
    return std::nullopt;
  }
  const std::string element = fill_element(value, dtype);
  std::optional<Tensor> t = allocate(run, count * static_cast<int64_t>(element.size()));
  if (!t) return t;
  check_tensor(*t, dtype, dims);
  if (count <= kMaxChecked) {
    std::string want;
    for (int64_t i = 0; i < count; ++i) want += element;
    FUZZ_CHECK(contents(*t) == want);
  }
  return t;
}

void construct_and_reduce(FuzzedDataProvider& in) {
  const std::vector<int64_t> dims = random_dims(in);
  int64_t count = 0;
  const std::string bad_shape = shape_error(dims, &count);
  std::optional<Tensor> t = in.ConsumeBool() ? from_vector(in, dims, bad_shape, count)
                                             : filled(in, dims, bad_shape, count);
  if (t) reduce(in, *t, dims);
}

}  // namespace
}  // namespace mt::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mt::PhysicalDevice cpu = mt::config::list_physical_devices("CPU")[0];
  mt::config::set_logical_device_configuration(cpu, {{.memory_limit_mb = mt::fuzz::kLimitMb}});
  mt::config::list_logical_devices();  // initialises the runtime
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  while (input.remaining_bytes() > 0) {
    if (input.ConsumeBool()) {
      mt::fuzz::call_any_op(input);
    } else {
      mt::fuzz::construct_and_reduce(input);
    }
  }
  FUZZ_CHECK(mt::config::get_memory_info("CPU:0").current == 0);
  return 0;
}
