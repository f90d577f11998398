#pragma once
// What the soak tests share (soak_test.cc on logical CPUs, cuda/gpu_soak_test.cc on two
// logical GPUs): 16 threads running random op chains (op_chain.h) until a deadline, the
// duration from MT_SOAK_SECONDS, and a memory sample (soak_memory.h) at a fixed interval.
//
//   MemorySeries series({cpu(0), gpu0, gpu1}, {cpu(0)}, soak_seconds());
//   SoakCounts c = run_soak_threads({cpu(0), gpu0, gpu1}, {gpu0, gpu1}, soak_seconds(), 7,
//                                   &series);

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/op_chain.h"
#include "tests/runtime/soak_memory.h"

namespace mt::testing {

inline constexpr int kSoakThreads = 16;

// Returns MT_SOAK_SECONDS, or `fallback` when it is unset or empty.
inline double soak_seconds(double fallback = 2.0) {
  const char* env = std::getenv("MT_SOAK_SECONDS");
  return env != nullptr && *env != '\0' ? std::atof(env) : fallback;
}

struct SoakCounts {
  int64_t chains = 0;
  int64_t ops = 0;  // on the reference and on every replay device
  int64_t mismatches = 0;
  std::vector<std::string> reports;  // the first few mismatches
};

// Runs chains over `devices` (devices[0] the reference) on kSoakThreads threads until
// `seconds` have passed, replaying each on every device of `replay`. With a `series`,
// samples memory before the threads start, every series->interval() and once all have
// exited.
inline SoakCounts run_soak_threads(const std::vector<std::string>& devices,
                                   const std::vector<std::string>& replay, double seconds,
                                   uint64_t first_seed, MemorySeries* series = nullptr) {
  using Clock = std::chrono::steady_clock;
  const auto to_duration = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const auto start = Clock::now();
  const auto deadline = start + to_duration(seconds);
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::mutex mu;
  SoakCounts total;
  std::atomic<int64_t> ops_done{0};  // read by the sampler while the threads run
  if (series != nullptr) series->sample(0, 0, /*running=*/false);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSoakThreads; ++t) {
    threads.emplace_back([&, t] {
      Tally tally;
      int64_t counted = 0;
      for (uint64_t seed = first_seed + t * 1000003; std::chrono::steady_clock::now() < deadline;
           ++seed) {
        OpChain chain(seed, devices);
        chain.generate(10, &tally);
        for (const std::string& d : replay) chain.replay(d, &tally);
        ++tally.programs;
        ops_done.fetch_add(tally.ops - counted, std::memory_order_relaxed);
        counted = tally.ops;
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
  if (series != nullptr && series->interval() > 0) {
    for (int k = 1; start + to_duration(k * series->interval()) < deadline; ++k) {
      std::this_thread::sleep_until(start + to_duration(k * series->interval()));
      series->sample(elapsed(), ops_done.load(std::memory_order_relaxed), /*running=*/true);
    }
  }
  for (std::thread& t : threads) t.join();
  if (series != nullptr) series->sample(elapsed(), total.ops, /*running=*/false);
  return total;
}

}  // namespace mt::testing
