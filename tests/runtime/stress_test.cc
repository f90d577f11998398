// Concurrency stress: 16 threads x 10,000 random ops under random nested device scopes on
// four logical CPUs, with tensors passed between threads and copied between devices. Every
// result is checked against a reference computed on host vectors, and every pool is back
// to zero bytes in use at the end. MT_STRESS_ITERATIONS overrides the ops per thread
// (the ThreadSanitizer run uses fewer).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

constexpr int kCpus = 4;
constexpr int kThreads = 16;
constexpr int kPoolSize = 8;    // tensors each thread keeps
constexpr int kBoardSize = 32;  // tensors the threads share
constexpr double kBound = 1e4;  // larger results are checked, then dropped

using Dims = std::vector<int64_t>;

int iterations() {
  const char* env = std::getenv("MT_STRESS_ITERATIONS");
  return env != nullptr ? std::atoi(env) : 10000;
}

// A tensor and the values it holds, as read back and checked.
struct Entry {
  Tensor t;
  Dims shape;
  std::vector<double> v;
};

// Returns the largest magnitude in `e` (at least 1): the scale of the float rounding error.
double max_abs(const Entry& e) {
  double m = 1;
  for (double v : e.v) m = std::max(m, std::fabs(v));
  return m;
}

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Returns the element of `in` (a shape broadcast to `out`) that output element `flat` reads.
int64_t source_index(const Dims& out, int64_t flat, const Dims& in) {
  int64_t index = 0, stride = 1;
  for (int i = static_cast<int>(out.size()) - 1, j = static_cast<int>(in.size()) - 1; j >= 0;
       --i, --j) {
    int64_t coord = flat % out[i];
    flat /= out[i];
    if (in[j] != 1) index += coord * stride;
    stride *= in[j];
  }
  return index;
}

Dims broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (size_t k = 1; k <= out.size(); ++k) {
    int64_t da = k <= a.size() ? a[a.size() - k] : 1, db = k <= b.size() ? b[b.size() - k] : 1;
    out[out.size() - k] = da == 1 ? db : da;
  }
  return out;
}

Entry binary_ref(char op, const Entry& a, const Entry& b) {
  Entry r{Tensor(), broadcast(a.shape, b.shape), {}};
  for (int64_t i = 0; i < count(r.shape); ++i) {
    double x = a.v[source_index(r.shape, i, a.shape)];
    double y = b.v[source_index(r.shape, i, b.shape)];
    r.v.push_back(op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y);
  }
  return r;
}

Entry matmul_ref(const Entry& a, const Entry& b, bool ta, bool tb) {
  int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1], n = b.shape[tb ? 0 : 1];
  Entry r{Tensor(), {m, n}, std::vector<double>(m * n)};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        double x = ta ? a.v[p * m + i] : a.v[i * k + p];
        double y = tb ? b.v[j * k + p] : b.v[p * n + j];
        r.v[i * n + j] += x * y;
      }
    }
  }
  return r;
}

// kind: 's' sum, 'm' mean, 'x' max. `reduced[i]` says whether dimension i is reduced.
Entry reduce_ref(char kind, const Entry& x, const std::vector<bool>& reduced, bool keep) {
  Dims out_full;  // the output with reduced dimensions kept as 1
  Entry r;
  for (size_t i = 0; i < x.shape.size(); ++i) {
    out_full.push_back(reduced[i] ? 1 : x.shape[i]);
    if (!reduced[i] || keep) r.shape.push_back(out_full.back());
  }
  int64_t n = count(out_full);
  r.v.assign(n, kind == 'x' ? -INFINITY : 0.0);
  for (int64_t i = 0; i < count(x.shape); ++i) {
    int64_t o = source_index(x.shape, i, out_full);  // the output element i reduces into
    r.v[o] = kind == 'x' ? std::max(r.v[o], x.v[i]) : r.v[o] + x.v[i];
  }
  if (kind == 'm') {
    for (double& v : r.v) v /= static_cast<double>(count(x.shape) / std::max<int64_t>(n, 1));
  }
  return r;
}

// Tensors the threads hand to each other, so that buffers die on other threads.
class Board {
 public:
  void swap(int slot, Entry& e) {
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(slots_[slot], e);
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    for (Entry& e : slots_) e = Entry();
  }

 private:
  std::mutex mu_;
  Entry slots_[kBoardSize];
};

// What the workers saw: failures (reported by the main thread) and results checked.
class Outcomes {
 public:
  std::atomic<int64_t> checked{0};    // results whose device, shape and values were right
  std::atomic<int64_t> not_found{0};  // ops under an unknown device that failed as they must

  void add(std::string what) {
    if (failures_.fetch_add(1) >= 20) return;
    std::lock_guard<std::mutex> lock(mu_);
    first_.push_back(std::move(what));
  }
  int failures() const { return failures_.load(); }
  std::string summary() {
    std::lock_guard<std::mutex> lock(mu_);
    return absl::StrJoin(first_, "\n");
  }

 private:
  std::atomic<int> failures_{0};
  std::mutex mu_;
  std::vector<std::string> first_;
};

// The device names the scopes use: an outer one that always names a CPU (so that a
// machine with GPUs places nothing on them), inner ones that refine it, and names of no
// device.
constexpr const char* kOuter[] = {
    "/CPU:0",       "/CPU:1",        "/CPU:2",
    "/CPU:3",       "/device:CPU:2", "CPU:3",
    "/cpu:*",       "cpu",           "/job:localhost/replica:0/task:0/device:CPU:1",
    "/device:CPU:*"};
constexpr const char* kInner[] = {"/job:localhost",
                                  "/replica:0",
                                  "/task:0",
                                  "/device:*:2",
                                  "/CPU:1",
                                  "/cpu",
                                  "CPU:3",
                                  "/device:CPU:0",
                                  "/task:0/device:CPU:3",
                                  "/job:localhost/cpu:2"};
constexpr const char* kUnknown[] = {"/CPU:4", "/job:worker", "/replica:1", "/device:CPU:9",
                                    "/task:3"};

// Returns the logical CPU the placer must choose for `s`, or -1 when no device matches.
int expected_cpu(const DeviceSpec& s) {
  if ((s.job && *s.job != "localhost") || s.replica.value_or(0) != 0 || s.task.value_or(0) != 0)
    return -1;
  if (s.type && *s.type != "CPU") return -1;
  int id = s.id.value_or(0);
  return id < kCpus ? id : -1;
}

class Worker {
 public:
  Worker(int seed, Board* board, Outcomes* outcomes, const std::string* available)
      : rng_(seed), board_(board), outcomes_(outcomes), available_(available) {}

  void run(int n) {
    for (int i = 0; i < kPoolSize; ++i) pool_[i] = fresh(random_shape(), 0);
    for (int i = 0; i < n && outcomes_->failures() == 0; ++i) step();
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(int one_in) { return uniform(1, one_in) == 1; }

  Dims random_shape() {
    static const Dims kShapes[] = {{}, {4}, {2, 3}, {3, 2}, {2, 2}, {1, 3}, {2, 1, 3}, {3, 1}};
    return kShapes[uniform(0, 7)];
  }

  // Creates a tensor of `shape` under the current scope; `kind` 0: small integers, 1: a
  // nonzero divisor, 2: fill.
  Entry fresh(const Dims& shape, int kind) {
    static const float kDivisors[] = {1, 2, 4, -1, -2, -4, 0.5f};
    if (kind == 2) {
      double value = uniform(-4, 4);
      return Entry{fill(shape, value), shape, std::vector<double>(count(shape), value)};
    }
    std::vector<float> values(count(shape));
    for (float& v : values) v = kind == 1 ? kDivisors[uniform(0, 6)] : uniform(-4, 4);
    return Entry{constant(values, shape), shape, {values.begin(), values.end()}};
  }

  // Returns a pool entry; sometimes trades it with the board first.
  Entry& pick() {
    int i = uniform(0, kPoolSize - 1);
    if (coin(16)) {
      board_->swap(uniform(0, kBoardSize - 1), pool_[i]);
      if (!pool_[i].t.defined()) pool_[i] = fresh(random_shape(), 0);
    }
    return pool_[i];
  }

  // A shape that broadcasts with `s`: itself, a scalar, a suffix, or with some dims 1.
  Dims partner_shape(const Dims& s) {
    Dims out = s;
    switch (uniform(0, 3)) {
      case 0:
        return s;
      case 1:
        return {};
      case 2:
        out.erase(out.begin(), out.begin() + uniform(0, static_cast<int>(s.size())));
        return out;
      default:
        for (int64_t& d : out) d = coin(2) ? 1 : d;
        return out;
    }
  }

  void step() {
    std::vector<std::string> names = {kOuter[uniform(0, 9)]};
    for (int depth = uniform(0, 2); depth > 0; --depth) names.push_back(kInner[uniform(0, 9)]);
    if (coin(64)) names.push_back(kUnknown[uniform(0, 4)]);
    DeviceSpec merged;
    for (const std::string& name : names) merged = merge(merged, *parse_device_name(name));
    int want = expected_cpu(merged);
    std::optional<DeviceScope> scopes[4];  // destroyed innermost first
    for (size_t i = 0; i < names.size(); ++i) scopes[i].emplace(names[i]);
    if (want < 0) return expect_unknown(merged);
    int op = uniform(0, 12);
    try {
      run_op(op, want);
    } catch (const Error& e) {
      outcomes_->add(
          absl::StrCat("op ", op, " under ", absl::StrJoin(names, " > "), " threw: ", e.what()));
    }
  }

  void expect_unknown(const DeviceSpec& merged) {
    std::string want = absl::StrCat(canonical_name(merged),
                                    " unknown device. Available devices: ", *available_, ".");
    try {
      Tensor t = relu(pool_[0].t);
      outcomes_->add(absl::StrCat("no error under ", canonical_name(merged)));
    } catch (const Error& e) {
      if (e.code() != absl::StatusCode::kNotFound || e.what() != want) {
        return outcomes_->add(absl::StrCat("wrong error: ", e.what(), "\nwanted: ", want));
      }
      outcomes_->not_found++;
    }
  }

  void run_op(int op, int device) {
    Entry& a = pick();
    switch (op) {
      case 0:
        return keep(fresh(random_shape(), coin(2) ? 0 : 2), "fresh", device, 1);
      case 1:
      case 2:
      case 3:
      case 4:
        return run_binary("+-*/"[op - 1], a, device);
      case 5:
        return run_matmul(a, device);
      case 6:
        return run_add_n(a, device);
      case 7:
      case 8:
        return run_unary(op == 7 ? uniform(0, 2) : 3, a, device);
      case 9:
      case 10:
        return run_reduction("smx"[uniform(0, 2)], a, device);
      case 11: {  // a round trip through int32: values truncate toward zero
        Entry ref = a;
        for (double& v : ref.v) v = std::trunc(v);
        ref.t = cast(cast(a.t, DType::kInt32), DType::kFloat32);
        return keep(std::move(ref), "cast", device, 1);
      }
      default: {
        Entry ref = a;
        ref.t = identity(a.t);
        return keep(std::move(ref), "identity", device, 1);
      }
    }
  }

  void run_binary(char op, const Entry& a, int device) {
    Entry b = fresh(partner_shape(a.shape), op == '/' ? 1 : 0);
    bool swap = op != '/' && coin(2);
    const Entry& x = swap ? b : a;
    const Entry& y = swap ? a : b;
    Entry ref = binary_ref(op, x, y);
    ref.t = op == '+' ? x.t + y.t : op == '-' ? x.t - y.t : op == '*' ? x.t * y.t : x.t / y.t;
    double scale = op == '*' || op == '/' ? max_abs(x) * max_abs(y) : max_abs(x) + max_abs(y);
    keep(std::move(ref), std::string(1, op), device, scale);
  }

  void run_matmul(const Entry& pooled, int device) {
    Entry a = pooled.shape.size() == 2 ? pooled : fresh({2, 3}, 0);
    bool ta = coin(2), tb = coin(2);
    int64_t inner = a.shape[ta ? 0 : 1], n = uniform(1, 3);
    Entry b = fresh(tb ? Dims{n, inner} : Dims{inner, n}, 0);
    Entry ref = matmul_ref(a, b, ta, tb);
    ref.t = matmul(a.t, b.t, ta, tb);
    keep(std::move(ref), "matmul", device, inner * max_abs(a) * max_abs(b));
  }

  void run_add_n(const Entry& a, int device) {
    std::vector<Tensor> inputs = {a.t};
    std::vector<double> sum = a.v;
    double scale = max_abs(a);
    for (int k = uniform(0, 3); k > 0; --k) {
      Entry b = coin(2) ? a : fresh(a.shape, 0);
      inputs.push_back(b.t);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += b.v[i];
      scale += max_abs(b);
    }
    keep(Entry{add_n(inputs), a.shape, sum}, "add_n", device, scale);
  }

  void run_unary(int kind, const Entry& a, int device) {
    Entry ref = a;
    double big = 0;
    for (double v : a.v) big = std::max(big, std::fabs(v));
    if (kind == 3 && big > 5) kind = 0;  // keep exp finite
    for (double& v : ref.v) {
      v = kind == 0 ? -v : kind == 1 ? std::fabs(v) : kind == 2 ? std::max(v, 0.0) : std::exp(v);
    }
    ref.t = kind == 0 ? -a.t : kind == 1 ? abs(a.t) : kind == 2 ? relu(a.t) : exp(a.t);
    keep(std::move(ref), "unary", device, kind == 3 ? max_abs(ref) : 1);
  }

  void run_reduction(char kind, const Entry& a, int device) {
    const int rank = static_cast<int>(a.shape.size());
    std::vector<bool> reduced(rank, false);
    std::vector<int64_t> axes;
    bool all = coin(3), keep_dims = coin(2);
    for (int i = 0; i < rank; ++i) {
      if (!all && coin(2)) continue;
      reduced[i] = true;
      axes.push_back(coin(2) ? i : i - rank);  // negative axes count from the end
    }
    std::shuffle(axes.begin(), axes.end(), rng_);
    Axes which = all ? Axes() : Axes(absl::MakeConstSpan(axes));
    Entry ref = reduce_ref(kind, a, reduced, keep_dims);
    ref.t = kind == 's'   ? reduce_sum(a.t, which, keep_dims)
            : kind == 'm' ? reduce_mean(a.t, which, keep_dims)
                          : reduce_max(a.t, which, keep_dims);
    keep(std::move(ref), std::string("reduce_") + kind, device, count(a.shape) * max_abs(a));
  }

  // Checks `ref` (device, shape, values within float rounding of a computation whose terms
  // sum to at most `scale` in magnitude) and keeps it in the pool when its values are small.
  void keep(Entry ref, const std::string& what, int device, double scale) {
    std::string where = "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(device);
    if (ref.t.device() != where) {
      return outcomes_->add(absl::StrCat(what, " ran on ", ref.t.device(), ", not ", where));
    }
    Dims got_shape(ref.t.shape().dims().begin(), ref.t.shape().dims().end());
    if (got_shape != ref.shape) {
      return outcomes_->add(absl::StrCat(what, ": shape ", ref.t.shape().to_string(), " not [",
                                         absl::StrJoin(ref.shape, ","), "]"));
    }
    std::vector<float> got = ref.t.to_vector<float>();
    bool small = true;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::fabs(got[i] - ref.v[i]) > 1e-5 * std::max(1.0, scale)) {
        return outcomes_->add(
            absl::StrCat(what, ": element ", i, " is ", got[i], ", not ", ref.v[i]));
      }
      small = small && std::fabs(got[i]) <= kBound;
    }
    outcomes_->checked++;
    if (!small) return;                    // too large to build on
    ref.v.assign(got.begin(), got.end());  // go on from the exact float values
    pool_[uniform(0, kPoolSize - 1)] = std::move(ref);
  }

  std::mt19937 rng_;
  Board* board_;
  Outcomes* outcomes_;
  const std::string* available_;
  Entry pool_[kPoolSize];
};

class StressTest : public testing::RuntimeTest {};

TEST_F(StressTest, SixteenThreadsOfRandomOpsUnderNestedScopesLoseNothing) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  split_cpu(kCpus);
  std::vector<std::string> names;
  for (const LogicalDevice& d : config::list_logical_devices()) {
    names.push_back("/job:localhost/replica:0/task:0" + d.name);  // as errors name them
  }
  const std::string available = absl::StrJoin(names, ", ");
  const int n = iterations();
  Board board;
  Outcomes outcomes;
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { Worker(1000 + t, &board, &outcomes, &available).run(n); });
    }
    for (std::thread& t : threads) t.join();
  }
  board.clear();
  RecordProperty("checked", static_cast<int>(outcomes.checked.load()));
  RecordProperty("not_found", static_cast<int>(outcomes.not_found.load()));
  EXPECT_EQ(outcomes.failures(), 0) << outcomes.summary();
  // Every op was checked: its result, or the NotFound of a request that names no device.
  EXPECT_EQ(outcomes.checked + outcomes.not_found, int64_t{kThreads} * n);
  EXPECT_GT(outcomes.not_found, 0);
  for (int i = 0; i < kCpus; ++i) {
    MemoryInfo info = config::get_memory_info("CPU:" + std::to_string(i));
    EXPECT_EQ(info.current, 0) << "CPU:" << i;
    EXPECT_GT(info.num_allocs, 0) << "CPU:" << i;
  }
}

}  // namespace
}  // namespace mt
