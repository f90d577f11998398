#pragma once
// Its code: trace_control.cc (start, stop), trace_json.cc and report.cc (writing).
// mt::trace: records what the runtime does, for Perfetto, chrome://tracing and the HTML
// report (docs/trace.md says how to read them).
//
//   {
//     mt::trace::Recording recording;       // start(); stop() when it goes out of scope
//     mt::Tensor c = mt::matmul(a, b);
//   }
//   mt::trace::save("trace.json");          // Chrome Trace Event JSON
//   mt::trace::write_report("report.html"); // one self-contained page
//
// A recording holds one track per logical device with an event per op (name, dtype,
// shapes, device, placement reason and bytes allocated), an event per cross-device copy
// (source, destination, bytes, GB/s), counters of each pool's bytes in use and reserved,
// OOM and configuration events, and a memory snapshot of each pool at its peak. GPU ops
// last as long as their CUDA events say (device time); CPU ops take host time.
// While nothing records, the op path pays one relaxed atomic load. Thread-safe; one
// recording at a time per process. Errors are thrown as mt::Error.

#include <string>
#include <string_view>

namespace mt::trace {

// Starts recording, dropping the previous recording. Throws FailedPrecondition when a
// recording is already running. Initialises the runtime.
void start();

// Stops recording; waits for every device so that GPU timings resolve. Throws
// FailedPrecondition when nothing is recording.
void stop();

// Returns whether a recording is running.
bool is_recording();

// Returns the last recording (the running one, up to now) as Chrome Trace Event JSON.
std::string to_json();

// Writes to_json() to `path`. Throws NotFound when the file cannot be written.
void save(std::string_view path);

// Returns the HTML report of the last recording: one page with its data and script inline,
// nothing fetched from the network.
std::string report_html();

// Writes report_html() to `path`. Throws NotFound when the file cannot be written.
void write_report(std::string_view path);

// Records while it lives: start() on construction, stop() on destruction (unless stopped).
class Recording {
 public:
  Recording() { start(); }
  ~Recording() {
    if (is_recording()) stop();
  }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
};

}  // namespace mt::trace
