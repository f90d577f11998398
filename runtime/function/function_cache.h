#pragma once
// FunctionCache: the traced signatures of one function and their replays (internal); what
// mt::Function (runtime/function/function.h) and mt.function (python/) call.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "runtime/eager/tensor.h"
#include "runtime/function/concrete_function.h"

namespace mt::internal {

class FunctionCache {
 public:
  using Body = std::function<std::vector<Tensor>(absl::Span<const Tensor> args)>;

  explicit FunctionCache(std::string name) : name_(std::move(name)) {}

  // Replays the signature of `args` (with `extra_key`: what a caller adds to it, Python's
  // constants), tracing `body` when the signature is new; inside MirroredStrategy::run each
  // replica traces and replays its own (Note [Replicas in a function]). Runs `body` eagerly
  // when functions run eagerly, inside another function's trace (which records the ops
  // itself), or when the signature cannot replay. Throws mt::Error.
  // `arg_names` (optional, one per argument) name the graph's _Arg nodes in the
  // placement log, as Python's parameter names do in TensorFlow's.
  std::vector<Tensor> call(absl::Span<const Tensor> args, const Body& body,
                           std::string_view extra_key = {},
                           absl::Span<const std::string> arg_names = {});

  // Replays the signature of `args` (with `extra_key`) when it has traced and can replay;
  // nullopt when call() would trace or run a body instead (a new signature, one that runs
  // eagerly, functions running eagerly, another function tracing). A caller's fast path:
  // it needs no body. Throws mt::Error as call() does.
  std::optional<std::vector<Tensor>> replay(absl::Span<const Tensor> args,
                                            std::string_view extra_key = {});

  int tracing_count() const { return tracing_count_.load(std::memory_order_relaxed); }
  // How many calls replayed a trace (through call() or replay()).
  int64_t replay_count() const { return replay_count_.load(std::memory_order_relaxed); }
  std::string replay_kind() const;
  // The CUDA graphs a replay of the last signature called launches.
  int graphs_per_replay() const;
  int64_t arena_bytes() const;

 private:
  struct Entry {
    std::unique_ptr<ConcreteFunction> concrete;  // null: runs eagerly
  };
  // The entry of signature `key`, null when it has not traced; notes it as the last called.
  std::shared_ptr<Entry> find(const std::string& key);
  std::vector<Tensor> trace(absl::Span<const Tensor> args, const Body& body, std::string key,
                            absl::Span<const std::string> arg_names);

  std::string name_;
  std::atomic<int> tracing_count_{0};
  std::atomic<int64_t> replay_count_{0};
  mutable Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  const char* last_kind_ ABSL_GUARDED_BY(mu_) = "";
  int last_graphs_ ABSL_GUARDED_BY(mu_) = 0;
};

// Whether functions run their bodies eagerly (mt::config::run_functions_eagerly).
extern std::atomic<bool> g_run_eagerly;
bool functions_run_eagerly();

}  // namespace mt::internal
