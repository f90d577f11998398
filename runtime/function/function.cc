#include "runtime/function/function.h"

#include <utility>

#include "runtime/function/function_cache.h"

namespace mt {

Function::Function(Body body, std::string name)
    : cache_(std::make_unique<internal::FunctionCache>(std::move(name))), body_(std::move(body)) {}
Function::~Function() = default;
Function::Function(Function&&) noexcept = default;
Function& Function::operator=(Function&&) noexcept = default;

std::vector<Tensor> Function::operator()(absl::Span<const Tensor> args) {
  return cache_->call(args, body_);
}

int Function::tracing_count() const { return cache_->tracing_count(); }
std::string Function::replay_kind() const { return cache_->replay_kind(); }
int Function::graphs_per_replay() const { return cache_->graphs_per_replay(); }
int64_t Function::arena_bytes() const { return cache_->arena_bytes(); }

namespace config {
void run_functions_eagerly(bool run_eagerly) {
  internal::g_run_eagerly.store(run_eagerly, std::memory_order_relaxed);
}
bool functions_run_eagerly() { return internal::functions_run_eagerly(); }
}  // namespace config

}  // namespace mt
