#pragma once
// What the soak tests read of memory while they run: the process's resident set (VmRSS, its
// peak VmHWM, and its anonymous and file-backed parts: heap and stacks, or code and
// libraries paged in), glibc's malloc statistics, and the pools' bytes and resident pages,
// one sample every 1/20 of the run (30 s at most), so that a reader can tell warm-up from a
// leak.
//
//   MemorySeries series(devices, /*host_devices=*/{cpu0}, seconds);
//   series.sample(elapsed, ops, /*running=*/true);  // "[soak] t=... ops=... rss_kib=..."
//   RssGrowth g = series.growth();
//
// Note [Soak RSS after warm-up]
// Two points cannot tell a leak from warm-up: glibc's per-thread arenas fill up to the
// largest working set the random chains have drawn so far, the thread caches and pools grow
// to their working set, and CUDA maps its modules lazily. So the series is judged from the
// sample at kWarmUpFraction of the run to the last one taken while the soak threads run
// (both with 16 live threads: their stacks and caches), less the growth of the host pools'
// resident pages (mincore over their regions: a pool's region is paged in as its chunks are
// first used, and the pools account for it themselves); what is left is growth beyond the
// pools. "From the start" compares the samples before the threads start and after they have
// exited. Pinned regions (CPU:0 in the GPU soak) count as far as mincore sees them in RAM;
// host_reserved in each line shows whether they grew after the warm-up at all.

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/minitensor.h"
#include "runtime/trace/memory_snapshot.h"

namespace mt::testing {

inline constexpr double kWarmUpFraction = 0.2;

// Note [Soak RSS margin]
// A soak fails when RSS grew by more than this after the warm-up, beyond the pools. On two
// logical CPUs it grew 176 KiB from 48 s to 228 s of a 240 s run (30 million ops there):
// malloc's arenas and the pools' hash tables settling at their high-water marks (heaptrack
// found the same heap peak after 10 s and after 60 s). On a GPU, CUDA and the driver also
// map memory lazily (modules at a kernel's first launch, per-thread state). The margin is
// far above that, so that allocator caching never trips it, while a leak of 2 bytes per op
// over such a run, or any 32 MiB held, does; CI's 2 s run catches only leaks of about 100
// bytes per op or more. A bound on memory, not on time: a slower machine runs fewer ops.
inline constexpr int64_t kRssMarginKib = int64_t{32} << 10;

// The process's resident set, its peak so far and its parts, in KiB (0 when unknown; Linux
// only).
struct ProcessMemory {
  int64_t rss_kib = 0;
  int64_t hwm_kib = 0;
  int64_t anon_kib = 0;  // heap, stacks and other anonymous mappings
  int64_t file_kib = 0;  // the program's code and its libraries, as far as paged in
};

// Reads VmRSS, VmHWM, RssAnon and RssFile from /proc/self/status.
inline ProcessMemory process_memory() {
  ProcessMemory m;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long kib = 0;
    if (std::sscanf(line, "VmRSS: %lld", &kib) == 1) m.rss_kib = kib;
    if (std::sscanf(line, "VmHWM: %lld", &kib) == 1) m.hwm_kib = kib;
    if (std::sscanf(line, "RssAnon: %lld", &kib) == 1) m.anon_kib = kib;
    if (std::sscanf(line, "RssFile: %lld", &kib) == 1) m.file_kib = kib;
  }
  std::fclose(f);
  return m;
}

// Returns how many bytes of [address, address + size) are in RAM (whole pages; mincore).
inline int64_t resident_bytes(uint64_t address, int64_t size) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = address / page * page;
  const uint64_t end = (address + static_cast<uint64_t>(size) + page - 1) / page * page;
  std::vector<unsigned char> in_ram((end - begin) / page);
  if (mincore(reinterpret_cast<void*>(begin), end - begin, in_ram.data()) != 0) return 0;
  int64_t pages = 0;
  for (unsigned char c : in_ram) pages += c & 1;
  return pages * static_cast<int64_t>(page);
}

// Returns glibc's malloc statistics as one line: bytes its arenas took from the system
// (arena), in mmapped blocks (hblkhd), in use (uordblks) and free inside arenas (fordblks).
inline std::string malloc_line(const std::string& when) {
  const struct mallinfo2 mi = mallinfo2();
  return absl::StrCat("[soak] malloc at ", when, ": arena=", mi.arena, " hblkhd=", mi.hblkhd,
                      " uordblks=", mi.uordblks, " fordblks=", mi.fordblks,
                      " (bytes; in use = uordblks + hblkhd, cached by malloc = fordblks)");
}

struct SoakSample {
  double seconds = 0;
  int64_t ops = 0;
  ProcessMemory process;
  int64_t reserved = 0;       // every pool of the soak's devices
  int64_t in_use = 0;         // likewise
  int64_t host_reserved = 0;  // the pools of host devices
  int64_t host_resident = 0;  // of that, in RAM
  bool running = true;        // taken while the soak threads ran
};

// Growth of the resident set in KiB, from the run's first sample and from the sample at
// kWarmUpFraction to the last (Note [Soak RSS after warm-up]).
struct RssGrowth {
  int64_t from_start_kib = 0;
  int64_t after_warm_up_kib = 0;
  int64_t host_pools_after_warm_up_kib = 0;  // of that, the host pools' resident pages
  int64_t beyond_pools_after_warm_up_kib = 0;
  double warm_up_seconds = 0;  // the warm-up sample's time
  double end_seconds = 0;      // the last running sample's time
};

// Samples of one soak run. Not thread-safe: one thread samples.
class MemorySeries {
 public:
  // `devices` are the soak's devices; those also in `host_devices` keep their pools in
  // host memory. `seconds` is the run's length, which places the warm-up sample.
  MemorySeries(std::vector<std::string> devices, std::vector<std::string> host_devices,
               double seconds)
      : devices_(std::move(devices)), host_devices_(std::move(host_devices)), seconds_(seconds) {}

  // Returns the time between samples: 1/20 of the run, at most 30 s.
  double interval() const { return std::min(seconds_ / 20, 30.0); }

  // Takes one sample at `seconds` into the run after `ops` ops, while the soak threads run
  // or not, and records it.
  void sample(double seconds, int64_t ops, bool running) {
    SoakSample s{seconds, ops, process_memory(), 0, 0, 0, 0, running};
    for (const std::string& d : devices_) {
      const MemoryInfo info = config::get_memory_info(d);
      s.reserved += info.reserved;
      s.in_use += info.current;
      if (std::count(host_devices_.begin(), host_devices_.end(), d) == 0) continue;
      s.host_reserved += info.reserved;
      for (const MemoryRegion& r : config::memory_snapshot(d).regions) {
        s.host_resident += resident_bytes(r.address, r.size);
      }
    }
    record(s);
  }

  // Records and prints `s`; prints malloc's statistics with the first sample, the first
  // running one at or after the warm-up and the first once the threads have exited.
  void record(const SoakSample& s) {
    std::printf("%s\n", line(s).c_str());
    if (samples_.empty()) std::printf("%s\n", malloc_line("start").c_str());
    if (warm_up_index_ < 0 && s.running && s.seconds >= kWarmUpFraction * seconds_) {
      warm_up_index_ = static_cast<int>(samples_.size());
      std::printf("%s\n", malloc_line("warm-up").c_str());
    } else if (!s.running && !samples_.empty() && samples_.back().running) {
      std::printf("%s\n", malloc_line("end, threads exited").c_str());
    }
    std::fflush(stdout);
    samples_.push_back(s);
  }

  const std::vector<SoakSample>& samples() const { return samples_; }

  // Returns `s` as the line sample() prints.
  static std::string line(const SoakSample& s) {
    return absl::StrCat("[soak] t=", absl::StrFormat("%.1f", s.seconds), " ops=", s.ops,
                        " rss_kib=", s.process.rss_kib, " hwm_kib=", s.process.hwm_kib,
                        " anon_kib=", s.process.anon_kib, " file_kib=", s.process.file_kib,
                        " reserved=", s.reserved, " in_use=", s.in_use,
                        " host_reserved=", s.host_reserved, " host_resident=", s.host_resident,
                        " threads=", s.running ? "running" : "none");
  }

  // Returns the growth from the first sample to the last, and from the warm-up sample to the
  // last taken while the threads ran (none when the run was too short for both).
  RssGrowth growth() const {
    RssGrowth g;
    if (samples_.empty()) return g;
    g.from_start_kib = samples_.back().process.rss_kib - samples_.front().process.rss_kib;
    int last_running = static_cast<int>(samples_.size()) - 1;
    while (last_running > 0 && !samples_[last_running].running) --last_running;
    if (warm_up_index_ < 0 || last_running <= warm_up_index_) return g;
    const SoakSample& warm = samples_[warm_up_index_];
    const SoakSample& last = samples_[last_running];
    g.after_warm_up_kib = last.process.rss_kib - warm.process.rss_kib;
    g.host_pools_after_warm_up_kib = (last.host_resident - warm.host_resident) / 1024;
    g.beyond_pools_after_warm_up_kib = g.after_warm_up_kib - g.host_pools_after_warm_up_kib;
    g.warm_up_seconds = warm.seconds;
    g.end_seconds = last.seconds;
    return g;
  }

 private:
  std::vector<std::string> devices_;
  std::vector<std::string> host_devices_;
  double seconds_;
  std::vector<SoakSample> samples_;
  int warm_up_index_ = -1;
};

// Returns the growth as one line for the test's output.
inline std::string growth_line(const RssGrowth& g) {
  return absl::StrCat(
      "[soak] RSS growth: ", g.from_start_kib,
      " KiB from the start (threads not yet started -> exited); ", g.after_warm_up_kib,
      " KiB after the warm-up (t=", g.warm_up_seconds, " -> ", g.end_seconds,
      " s, threads running), of which ", g.host_pools_after_warm_up_kib,
      " KiB the host pools' pages: ", g.beyond_pools_after_warm_up_kib, " KiB beyond the pools");
}

}  // namespace mt::testing
