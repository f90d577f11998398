#include "runtime/debugging.h"

#include <cstdio>
#include <string>

#include "core/mutex.h"
#include "runtime/context.h"
#include "runtime/placement_log.h"

namespace mt {
namespace {

internal::Mutex& sink_mutex() {
  static internal::Mutex* mu = new internal::Mutex();
  return *mu;
}

std::function<void(std::string_view)>& sink() {
  static auto* fn = new std::function<void(std::string_view)>();
  return *fn;
}

}  // namespace

namespace debugging {

void set_log_device_placement(bool enable) { internal::Context::get().set_log_placement(enable); }

bool get_log_device_placement() { return internal::Context::get().log_placement(); }

void set_log_sink(std::function<void(std::string_view)> fn) {
  internal::MutexLock lock(&sink_mutex());
  sink() = std::move(fn);
}

}  // namespace debugging

namespace internal {

void log_placement(OpId op, const std::string& device) {
  std::string line = "Executing op ";
  line.append(op_name(op)).append(" in device ").append(device);
  internal::MutexLock lock(&sink_mutex());
  if (sink()) {
    sink()(line);
    return;
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace internal
}  // namespace mt
