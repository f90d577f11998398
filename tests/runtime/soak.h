#pragma once
// What the soak tests share (soak_test.cc on logical CPUs, cuda/gpu_soak_test.cc on two
// logical GPUs): 16 threads running random op chains (op_chain.h) until a deadline, the
// duration from MT_SOAK_SECONDS, and the process's resident memory.
//
//   SoakCounts c = run_soak_threads({cpu(0), gpu0, gpu1}, {gpu0, gpu1}, soak_seconds(), 7);

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

inline constexpr int kSoakThreads = 16;

// Returns MT_SOAK_SECONDS, or `fallback` when it is unset or empty.
inline double soak_seconds(double fallback = 2.0) {
  const char* env = std::getenv("MT_SOAK_SECONDS");
  return env != nullptr && *env != '\0' ? std::atof(env) : fallback;
}

// Returns the process's resident set in bytes (VmRSS; Linux), or 0 when unknown.
inline int64_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? int64_t{resident} * sysconf(_SC_PAGESIZE) : 0;
}

struct SoakCounts {
  int64_t chains = 0;
  int64_t ops = 0;  // on the reference and on every replay device
  int64_t mismatches = 0;
  std::vector<std::string> reports;  // the first few mismatches
};

// Runs chains over `devices` (devices[0] the reference) on kSoakThreads threads until
// `seconds` have passed, replaying each on every device of `replay`.
inline SoakCounts run_soak_threads(const std::vector<std::string>& devices,
                                   const std::vector<std::string>& replay, double seconds,
                                   uint64_t first_seed) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  std::mutex mu;
  SoakCounts total;
  std::vector<std::thread> threads;
  for (int t = 0; t < kSoakThreads; ++t) {
    threads.emplace_back([&, t] {
      Tally tally;
      for (uint64_t seed = first_seed + t * 1000003; std::chrono::steady_clock::now() < deadline;
           ++seed) {
        OpChain chain(seed, devices);
        chain.generate(10, &tally);
        for (const std::string& d : replay) chain.replay(d, &tally);
        ++tally.programs;
      }
      std::lock_guard<std::mutex> lock(mu);
      total.chains += tally.programs;
      total.ops += tally.ops;
      total.mismatches += tally.mismatches;
      for (std::string& r : tally.reports) {
        if (total.reports.size() < 5) total.reports.push_back(std::move(r));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return total;
}

}  // namespace mt::testing
