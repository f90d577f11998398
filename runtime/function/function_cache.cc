#include "runtime/function/function_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/eager/placement_log.h"
#include "runtime/eager/scope_stack.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/function/function_recorder.h"
#include "runtime/strategy/replica_hooks.h"

namespace mt::internal {
namespace {

template <typename T>
void append(std::string* key, const T& value) {
  key->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// The signature of a call: each argument's dtype, shape, device and first alias, the
// innermost device scope, the replica (Note [Replicas in a function]) and the configuration
// epoch, after `extra`.
// Written into `key`, whose capacity a caller keeps from call to call.
void signature(absl::Span<const Tensor> args, std::string_view extra, std::string& key) {
  key.assign(extra);
  key.push_back('\0');
  append(&key, Context::get().epoch());
  append(&key, current_replica_id());
  append(&key, current_strategy_id());
  const ScopeEntry* scope = scope_stack().top();
  append(&key, scope == nullptr ? uint64_t{0} : scope->hash);
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorImpl* impl = args[i].impl();
    if (impl == nullptr) {
      throw_if_error(absl::InvalidArgumentError(
          absl::StrCat("[function] argument ", i, " is an empty tensor")));
    }
    int32_t alias = static_cast<int32_t>(i);
    for (size_t j = 0; j < i; ++j) {
      if (args[j].impl() == impl) {
        alias = static_cast<int32_t>(j);
        break;
      }
    }
    append(&key, alias);
    append(&key, impl->dtype);
    append(&key, impl->device);
    append(&key, static_cast<int32_t>(impl->shape.rank()));
    for (int64_t d : impl->shape.dims()) append(&key, d);
  }
}

// This thread's buffer for signatures (a replay allocates none).
std::string& signature_buffer() {
  thread_local std::string buffer;
  return buffer;
}

const char* kind_of(const ConcreteFunction* f) {
  if (f == nullptr) return "eager";
  return f->uses_graph() ? "graph" : "steps";
}

}  // namespace

std::atomic<bool> g_run_eagerly{false};

bool functions_run_eagerly() { return g_run_eagerly.load(std::memory_order_relaxed); }

std::shared_ptr<FunctionCache::Entry> FunctionCache::find(const std::string& key) {
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  last_kind_ = kind_of(it->second->concrete.get());
  last_graphs_ = it->second->concrete == nullptr ? 0 : it->second->concrete->num_graphs();
  return it->second;
}

std::vector<Tensor> FunctionCache::call(absl::Span<const Tensor> args, const Body& body,
                                        std::string_view extra_key,
                                        absl::Span<const std::string> arg_names) {
  if (functions_run_eagerly() || active_recorder() != nullptr) {
    return body(args);
  }
  std::string& key = signature_buffer();
  signature(args, extra_key, key);
  std::shared_ptr<Entry> entry = find(key);
  if (entry == nullptr) return trace(args, body, key, arg_names);
  if (entry->concrete == nullptr) return body(args);
  replay_count_.fetch_add(1, std::memory_order_relaxed);
  return value_or_throw(entry->concrete->call(args));
}

std::optional<std::vector<Tensor>> FunctionCache::replay(absl::Span<const Tensor> args,
                                                         std::string_view extra_key) {
  if (functions_run_eagerly() || active_recorder() != nullptr) return std::nullopt;
  std::string& key = signature_buffer();
  signature(args, extra_key, key);
  std::shared_ptr<Entry> entry = find(key);
  if (entry == nullptr || entry->concrete == nullptr) return std::nullopt;
  replay_count_.fetch_add(1, std::memory_order_relaxed);
  return value_or_throw(entry->concrete->call(args));
}

std::vector<Tensor> FunctionCache::trace(absl::Span<const Tensor> args, const Body& body,
                                         std::string key, absl::Span<const std::string> arg_names) {
  tracing_count_.fetch_add(1, std::memory_order_relaxed);
  auto entry = std::make_shared<Entry>();
  std::vector<Tensor> outputs;
  absl::StatusOr<std::unique_ptr<FunctionGraph>> graph;
  {
    FunctionRecorder recorder(args);
    outputs = body(args);
    graph = recorder.finish(outputs);
  }
  absl::Status why = graph.status();
  if (graph.ok()) {
    if (arg_names.size() == args.size())
      (*graph)->arg_names.assign(arg_names.begin(), arg_names.end());
    Runtime* rt = value_or_throw(Context::get().runtime());
    absl::StatusOr<std::unique_ptr<ConcreteFunction>> concrete =
        ConcreteFunction::create(*std::move(graph), rt->registry(), name_);
    if (concrete.ok()) {
      entry->concrete = *std::move(concrete);
      if (Context::get().log_placement()) {
        for (std::string& line : entry->concrete->placement_lines()) log_line(std::move(line));
      }
    } else {
      why = concrete.status();
    }
  }
  if (!why.ok()) {
    log_line(absl::StrCat(
        "WARNING:minitensor:function '", name_,
        "' cannot replay this signature and runs it eagerly at every call: ", why.message()));
  }
  MutexLock lock(&mu_);
  last_kind_ = kind_of(entry->concrete.get());
  last_graphs_ = entry->concrete == nullptr ? 0 : entry->concrete->num_graphs();
  entries_.try_emplace(std::move(key), std::move(entry));
  return outputs;
}

int FunctionCache::graphs_per_replay() const {
  MutexLock lock(&mu_);
  return last_graphs_;
}

std::string FunctionCache::replay_kind() const {
  MutexLock lock(&mu_);
  return last_kind_;
}

int64_t FunctionCache::arena_bytes() const {
  MutexLock lock(&mu_);
  int64_t bytes = 0;
  for (const auto& [key, entry] : entries_) {
    if (entry->concrete != nullptr) bytes += entry->concrete->arena_bytes();
  }
  return bytes;
}

}  // namespace mt::internal
