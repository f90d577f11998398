// Fuzzes placement end to end on four logical CPUs: nested mt::DeviceScope blocks with
// fuzzed names, soft placement switched on and off, and ops on tensors of fuzzed dtypes,
// shapes and values. Every op either returns a tensor on the device the placement rules
// (docs/design.md) name, and logs that device, or throws mt::Error with the code they
// predict: NotFound for a request no device matches without soft placement, else
// InvalidArgument from the op ("[Op] ...") or ResourceExhausted. Afterwards no pool holds
// a byte.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"

namespace mt::fuzz {
namespace {

constexpr int kCpus = 4;
constexpr size_t kMaxPool = 8;

std::string& last_log_line() {
  static std::string line;
  return line;
}

std::string& available() {
  static std::string names;
  return names;
}

DeviceSpec cpu_spec(int i) { return DeviceSpec{"localhost", 0, 0, "CPU", i}; }

// Returns the CPU an op with a CPU kernel runs on under `request`, or -1 when the request
// names no device and soft placement is off (Placement rules 3 and 5).
int expected_device(const DeviceSpec& request, bool soft) {
  if (request == DeviceSpec{}) return 0;
  for (int i = 0; i < kCpus; ++i) {
    if (matches(request, cpu_spec(i))) return i;
  }
  return soft ? 0 : -1;
}

// Names the scopes draw from besides fuzzed strings: valid, unknown and partial names.
constexpr const char* kNames[] = {"",
                                  "/CPU:0",
                                  "/CPU:1",
                                  "/cpu:2",
                                  "CPU:3",
                                  "/CPU:4",
                                  "/GPU:0",
                                  "gpu",
                                  "/device:CPU:*",
                                  "/device:*:3",
                                  "/device:TPU:0",
                                  "/job:localhost",
                                  "/job:worker",
                                  "/replica:0",
                                  "/replica:1",
                                  "/task:0/device:CPU:2",
                                  "/job:localhost/replica:0/task:0/device:CPU:1"};

class Session {
 public:
  explicit Session(FuzzedDataProvider& in) : in_(in) {}

  void run() {
    for (int n = in_.ConsumeIntegralInRange(1, 3); n > 0; --n) pool_.push_back(random_tensor());
    std::optional<DeviceScope> scopes[4];  // destroyed innermost first
    for (int depth = in_.ConsumeIntegralInRange(0, 4), i = 0; i < depth; ++i) {
      open(scopes[i]);
    }
    for (int n = in_.ConsumeIntegralInRange(1, 8); n > 0 && in_.remaining_bytes() > 0; --n) {
      if (in_.ConsumeBool()) soft_ = !soft_;
      config::set_soft_device_placement(soft_);
      run_op(in_.ConsumeIntegralInRange(0, 17));
    }
  }

 private:
  std::vector<int64_t> random_shape() {
    std::vector<int64_t> shape(in_.ConsumeIntegralInRange(0, 3));
    for (int64_t& d : shape) d = in_.ConsumeIntegralInRange(0, 3);
    return shape;
  }

  // A tensor of a fuzzed dtype, shape and values, made under the current scopes.
  Tensor random_tensor() {
    const DType dtype = static_cast<DType>(in_.ConsumeIntegralInRange(0, kNumDTypes - 1));
    const std::vector<int64_t> shape = random_shape();
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::string bytes = in_.ConsumeBytesAsString(n * dtype_size(dtype));
    bytes.resize(n * dtype_size(dtype));
    return make_tensor(dtype, bytes, shape);
  }

  // Opens a scope on a fuzzed or listed name. A malformed name must throw InvalidArgument
  // exactly when parse_device_name rejects it, and leave the request unchanged.
  void open(std::optional<DeviceScope>& scope) {
    std::string name = in_.ConsumeBool()
                           ? in_.ConsumeRandomLengthString(48)
                           : kNames[in_.ConsumeIntegralInRange<size_t>(0, std::size(kNames) - 1)];
    absl::StatusOr<DeviceSpec> spec = parse_device_name(name);
    try {
      scope.emplace(name);
    } catch (const Error& e) {
      FUZZ_CHECK(!spec.ok() && e.code() == absl::StatusCode::kInvalidArgument);
      // The message quotes unprintable bytes, so what() holds all of it.
      FUZZ_CHECK(std::string(e.what()) == std::string(spec.status().message()));
      return;
    }
    FUZZ_CHECK(spec.ok());
    request_ = merge(request_, *spec);
  }

  const Tensor& pick() { return pool_[in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1)]; }

  Axes random_axes() {
    if (in_.ConsumeBool()) return Axes();
    std::vector<int64_t> axes(in_.ConsumeIntegralInRange(0, 3));
    for (int64_t& a : axes) a = in_.ConsumeIntegralInRange(-4, 4);
    return Axes(absl::MakeConstSpan(axes));
  }

  void run_op(int op) {
    static const char* kOpNames[] = {"AddV2", "Sub",  "Mul",      "RealDiv",     "MatMul", "AddN",
                                     "Neg",   "Abs",  "Exp",      "Relu",        "Sum",    "Mean",
                                     "Max",   "Cast", "Identity", "_EagerConst", "Fill",   "AddN"};
    const Tensor& a = pick();
    const Tensor& b = pick();
    const Tensor* input = &a;
    std::function<Tensor()> fn;
    switch (op) {
      case 0:
        fn = [&] { return a + b; };
        break;
      case 1:
        fn = [&] { return a - b; };
        break;
      case 2:
        fn = [&] { return a * b; };
        break;
      case 3:
        fn = [&] { return a / b; };
        break;
      case 4: {
        bool ta = in_.ConsumeBool(), tb = in_.ConsumeBool();
        fn = [&, ta, tb] { return matmul(a, b, ta, tb); };
        break;
      }
      case 5:
        fn = [&] { return add_n({a, b, a}); };
        break;
      case 6:
        fn = [&] { return -a; };
        break;
      case 7:
        fn = [&] { return abs(a); };
        break;
      case 8:
        fn = [&] { return exp(a); };
        break;
      case 9:
        fn = [&] { return relu(a); };
        break;
      case 10:
      case 11:
      case 12: {
        Axes axes = random_axes();
        bool keep = in_.ConsumeBool();
        fn = [&, op, axes, keep] {
          return op == 10   ? reduce_sum(a, axes, keep)
                 : op == 11 ? reduce_mean(a, axes, keep)
                            : reduce_max(a, axes, keep);
        };
        break;
      }
      case 13: {
        DType to = static_cast<DType>(in_.ConsumeIntegralInRange(0, kNumDTypes));  // one invalid
        fn = [&, to] { return cast(a, to); };
        break;
      }
      case 14:
        fn = [&] { return identity(a); };
        break;
      case 15:
        fn = [&] { return random_tensor(); };
        input = nullptr;
        break;
      case 16: {
        std::vector<int64_t> shape = random_shape();
        DType dtype = static_cast<DType>(in_.ConsumeIntegralInRange(0, kNumDTypes - 1));
        double value = in_.ConsumeIntegralInRange(-1000, 1000);
        fn = [shape, dtype, value] { return fill(shape, value, dtype); };
        input = nullptr;
        break;
      }
      default:
        fn = [] { return add_n(std::vector<Tensor>{}); };
        input = nullptr;
        break;
    }
    check(kOpNames[op], fn, op == 14 ? input : nullptr);
  }

  // Returns the op that `op` ran as, judging by `text`: matmul runs BatchMatMulV2 when an
  // input's rank is above 2.
  static std::string ran(const std::string& op, const std::string& text) {
    if (op == "MatMul" && text.find("BatchMatMulV2") != std::string::npos) return "BatchMatMulV2";
    return op;
  }

  // Runs `fn` and checks its outcome against the placement rules; for Identity, also that
  // the result holds `same`'s values.
  void check(const std::string& op, const std::function<Tensor()>& fn, const Tensor* same) {
    const int want = expected_device(request_, soft_);
    last_log_line().clear();
    Tensor result;
    try {
      result = fn();
    } catch (const Error& e) {
      const std::string what = e.what();
      // A call is validated before it is placed: bad inputs are the op's own error even
      // under a scope naming no device.
      if (want < 0 && e.code() != absl::StatusCode::kInvalidArgument) {
        FUZZ_CHECK_MSG(e.code() == absl::StatusCode::kNotFound, what);
        FUZZ_CHECK_MSG(what == canonical_name(request_) +
                                   " unknown device. Available devices: " + available() + ".",
                       what);
      } else if (e.code() == absl::StatusCode::kResourceExhausted) {
        FUZZ_CHECK_MSG(starts_with(what, "OOM when allocating tensor with shape"), what);
      } else {
        FUZZ_CHECK_MSG(e.code() == absl::StatusCode::kInvalidArgument, what);
        FUZZ_CHECK_MSG(starts_with(what, "[" + ran(op, what) + "] "), what);
      }
      return;
    }
    FUZZ_CHECK(want >= 0);
    const std::string device = "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(want);
    FUZZ_CHECK(result.device() == device);
    FUZZ_CHECK(last_log_line() ==
               "Executing op " + ran(op, last_log_line()) + " in device " + device);
    const std::string values = contents(result);
    if (same != nullptr) FUZZ_CHECK(values == contents(*same));
    if (pool_.size() < kMaxPool) pool_.push_back(result);
  }

  FuzzedDataProvider& in_;
  std::vector<Tensor> pool_;
  DeviceSpec request_;
  bool soft_ = false;
};

}  // namespace
}  // namespace mt::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace mt;
  // The expected devices follow the scope rules alone: TensorFlow's small-op rule, which
  // keeps small integer ops on CPU:0 whatever the scope, is off (tested in
  // tests/runtime/small_op_rule_test.cc). Read when the runtime initialises, below.
  setenv("TF_EAGER_ENABLE_SMALL_TENSOR_CPU_PINNING", "0", 1);
  PhysicalDevice cpu = config::list_physical_devices("CPU")[0];
  config::set_logical_device_configuration(
      cpu, std::vector<LogicalDeviceConfiguration>(mt::fuzz::kCpus, {.memory_limit_mb = 16}));
  // The unknown-device message lists full names; LogicalDevice.name is the short form.
  for (const LogicalDevice& d : config::list_logical_devices()) {
    std::string& names = fuzz::available();
    names += (names.empty() ? "" : ", ") + ("/job:localhost/replica:0/task:0" + d.name);
  }
  debugging::set_log_sink([](std::string_view line) { fuzz::last_log_line() = std::string(line); });
  debugging::set_log_device_placement(true);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  {
    mt::fuzz::Session session(input);
    session.run();
  }
  for (int i = 0; i < mt::fuzz::kCpus; ++i) {
    FUZZ_CHECK(mt::config::get_memory_info("CPU:" + std::to_string(i)).current == 0);
  }
  return 0;
}
