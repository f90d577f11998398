#include "runtime/debugging.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "core/mutex.h"
#include "runtime/eager/context.h"
#include "runtime/eager/placement_log.h"

namespace mt {
namespace {

using Sink = std::function<void(std::string_view)>;

// Note [Re-entrant sinks]: the sink is called with no lock that an op takes, so it may run
// ops, read memory statistics or replace the sink. Ops it runs on its own thread are not
// logged (logging them would call the sink again, for ever). call_mu only serialises calls,
// keeping "one line at a time"; the sink itself is shared, so replacing it while it runs
// keeps the running one alive until it returns.
internal::Mutex& sink_mutex() {
  static internal::Mutex* mu = new internal::Mutex();
  return *mu;
}

internal::Mutex& call_mutex() {
  static internal::Mutex* mu = new internal::Mutex();
  return *mu;
}

std::shared_ptr<const Sink>& sink() {
  static auto* fn = new std::shared_ptr<const Sink>();
  return *fn;
}

thread_local bool in_sink = false;

void write_to_stderr(std::string line) {
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Calls `fn` with `line`; a throwing sink's line goes to stderr with what it threw.
void call_sink(const Sink& fn, const std::string& line) {
  internal::MutexLock lock(&call_mutex());
  in_sink = true;
  try {
    fn(line);
  } catch (const std::exception& e) {
    write_to_stderr(line + " [the log sink threw: " + e.what() + "]");
  } catch (...) {
    write_to_stderr(line + " [the log sink threw]");
  }
  in_sink = false;
}

}  // namespace

namespace debugging {

void set_log_device_placement(bool enable) { internal::Context::get().set_log_placement(enable); }

bool get_log_device_placement() { return internal::Context::get().log_placement(); }

void set_log_sink(std::function<void(std::string_view)> fn) {
  auto shared = fn ? std::make_shared<const Sink>(std::move(fn)) : nullptr;
  internal::MutexLock lock(&sink_mutex());
  sink().swap(shared);
}  // the old sink, if no thread is calling it, is destroyed here, outside the lock

}  // namespace debugging

namespace internal {

void log_placement(OpId op, const std::string& device) {
  if (in_sink) return;  // an op run by the sink (Note [Re-entrant sinks])
  std::string line = "Executing op ";
  line.append(op_name(op)).append(" in device ").append(device);
  log_line(std::move(line));
}

void log_line(std::string line) {
  std::shared_ptr<const Sink> fn;
  {
    internal::MutexLock lock(&sink_mutex());
    fn = sink();
  }
  if (fn) return call_sink(*fn, line);
  internal::MutexLock lock(&call_mutex());  // whole lines, not interleaved with a sink's
  write_to_stderr(std::move(line));
}

}  // namespace internal
}  // namespace mt
