// Many threads allocating and freeing at once, a third of the blocks freed by a thread other
// than the one that allocated them. Every block is stamped and checked, and the accounting
// must come back to exactly zero.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "allocator/bfc_allocator.h"
#include "allocator/counting_sub_allocator.h"

namespace mt {
namespace {

constexpr int64_t MiB = 1024 * 1024;

struct Stamped {
  void* ptr;
  size_t bytes;
  uint64_t stamp;
};

void stamp_block(const Stamped& b) {
  std::memcpy(b.ptr, &b.stamp, sizeof b.stamp);
  std::memcpy(static_cast<char*>(b.ptr) + b.bytes - sizeof b.stamp, &b.stamp, sizeof b.stamp);
}
bool has_stamp(const Stamped& b) {
  uint64_t head, tail;
  std::memcpy(&head, b.ptr, sizeof head);
  std::memcpy(&tail, static_cast<char*>(b.ptr) + b.bytes - sizeof tail, sizeof tail);
  return head == b.stamp && tail == b.stamp;
}

// Blocks handed from one thread to another.
class Exchange {
 public:
  void put(const Stamped& b) {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_.push_back(b);
  }
  bool take(Stamped* b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (blocks_.empty()) return false;
    *b = blocks_.back();
    blocks_.pop_back();
    return true;
  }

 private:
  std::mutex mu_;
  std::vector<Stamped> blocks_;
};

struct StressResult {
  std::atomic<int64_t> allocs{0};
  std::atomic<int64_t> failures{0};
  std::atomic<int64_t> corrupt{0};
};

void stress_thread(BFCAllocator& pool, Exchange& exchange, StressResult& result, int id, int ops,
                   size_t max_bytes) {
  std::mt19937_64 rng(id + 1);
  std::vector<Stamped> mine;
  auto free_block = [&](const Stamped& b) {
    if (!has_stamp(b)) result.corrupt.fetch_add(1);
    pool.deallocate(b.ptr);
  };
  for (int op = 0; op < ops; ++op) {
    const int action = std::uniform_int_distribution<int>(0, 99)(rng);
    Stamped b;
    if (action < 50 || mine.empty()) {
      b.bytes = std::uniform_int_distribution<size_t>(16, max_bytes)(rng);
      if (action % 10 == 0) b.bytes = std::uniform_int_distribution<size_t>(16, 4096)(rng);
      b.ptr = pool.allocate(b.bytes);
      if (b.ptr == nullptr) {
        result.failures.fetch_add(1);
        continue;
      }
      b.stamp = (static_cast<uint64_t>(id) << 32) | static_cast<uint64_t>(op);
      stamp_block(b);
      result.allocs.fetch_add(1);
      mine.push_back(b);
    } else if (action < 70) {
      exchange.put(mine.back());  // another thread frees it
      mine.pop_back();
    } else if (action < 85 && exchange.take(&b)) {
      free_block(b);
    } else {
      const size_t i = std::uniform_int_distribution<size_t>(0, mine.size() - 1)(rng);
      free_block(mine[i]);
      mine[i] = mine.back();
      mine.pop_back();
    }
  }
  for (const Stamped& b : mine) free_block(b);
}

void run_stress(BFCAllocator& pool, int threads, int ops, size_t max_bytes, StressResult& result) {
  Exchange exchange;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back(stress_thread, std::ref(pool), std::ref(exchange), std::ref(result), t,
                         ops, max_bytes);
  }
  for (std::thread& w : workers) w.join();
  Stamped b;
  while (exchange.take(&b)) {
    if (!has_stamp(b)) result.corrupt.fetch_add(1);
    pool.deallocate(b.ptr);
  }
}

TEST(BFCStressTest, EightThreadsWithCrossThreadFreesKeepExactAccounting) {
  CountingSubAllocator::Log log;
  BFCAllocator pool({.name = "CPU_0_bfc"},
                    CountingSubAllocator::wrap(make_host_sub_allocator(), &log));
  StressResult result;
  run_stress(pool, 8, 20000, 64 * 1024, result);
  EXPECT_EQ(result.corrupt.load(), 0);
  EXPECT_EQ(result.failures.load(), 0);
  const MemoryStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, result.allocs.load());
  EXPECT_GT(s.peak_bytes_in_use, 0);
  pool.release_unused();
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
  EXPECT_EQ(log.bytes_held(), 0);
}

TEST(BFCStressTest, ThreadsRunningOutOfMemoryTogetherRecover) {
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = 16 * MiB, .allow_growth = false},
                    make_host_sub_allocator());
  StressResult result;
  run_stress(pool, 4, 10000, 2 * MiB, result);
  EXPECT_EQ(result.corrupt.load(), 0);
  EXPECT_GT(result.failures.load(), 0);  // the limit was reached
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
  EXPECT_EQ(pool.stats().num_allocs, result.allocs.load());
  void* all = pool.allocate(16 * MiB);  // every cache can be emptied again
  EXPECT_NE(all, nullptr);
  pool.deallocate(all);
}

// stats() sums per-thread counters while other threads allocate and free; whatever it
// reads, bytes in use and peak must stay within what the pool can hold.
TEST(BFCStressTest, StatsReadDuringAStormNeverExceedTheLimit) {
  constexpr int64_t kLimit = 4 * MiB;
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = kLimit, .allow_growth = false},
                    make_host_sub_allocator());
  std::atomic<bool> done{false};
  int64_t max_in_use = 0, max_peak = 0, reads = 0;
  std::thread reader([&] {
    while (!done.load()) {
      const MemoryStats s = pool.stats();
      max_in_use = std::max(max_in_use, s.bytes_in_use);
      max_peak = std::max(max_peak, s.peak_bytes_in_use);
      ++reads;
    }
  });
  StressResult result;
  run_stress(pool, 8, 100000, 64 * 1024, result);
  done = true;
  reader.join();
  RecordProperty("stats_reads", static_cast<int>(reads));
  EXPECT_EQ(result.corrupt.load(), 0);
  EXPECT_GT(result.failures.load(), 0);  // the limit was reached
  EXPECT_LE(max_in_use, kLimit);
  EXPECT_LE(max_peak, kLimit);
  EXPECT_LE(pool.stats().peak_bytes_in_use, kLimit);
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
}

}  // namespace
}  // namespace mt
