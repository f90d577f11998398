// Thousands of random allocations and frees checked against a simple reference model: the
// set of live blocks. Blocks never overlap, are 256-byte aligned, keep what was written to
// them, and the pool's accounting equals the model's at every step.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "allocator/best_fit_arena.h"
#include "allocator/bfc_allocator.h"

namespace mt {
namespace {

constexpr int64_t MiB = 1024 * 1024;

// Returns a size spread log-uniformly over [1, 3 MiB], so small and large blocks mix.
size_t random_size(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> log_size(0.0, 21.6);
  return static_cast<size_t>(std::exp2(log_size(rng)));
}

// The reference model: live blocks by address, with the size the pool says each counts for.
class Model {
 public:
  struct Block {
    int64_t size;
    uint64_t stamp;
  };

  // Adds [p, p + size) and checks it overlaps no live block.
  void add(void* p, int64_t size, uint64_t stamp) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    ASSERT_EQ(a % 256, 0u);
    auto next = live_.lower_bound(a);
    if (next != live_.end()) {
      ASSERT_LE(a + size, next->first) << "overlaps the next block";
    }
    if (next != live_.begin()) {
      auto prev = std::prev(next);
      ASSERT_LE(prev->first + prev->second.size, a) << "overlaps the previous block";
    }
    live_[a] = {size, stamp};
    in_use_ += size;
    peak_ = std::max(peak_, in_use_);
  }
  // Removes a random live block; returns it.
  std::pair<void*, Block> take(std::mt19937_64& rng) {
    auto it =
        std::next(live_.begin(), std::uniform_int_distribution<size_t>(0, live_.size() - 1)(rng));
    auto taken = std::make_pair(reinterpret_cast<void*>(it->first), it->second);
    in_use_ -= it->second.size;
    live_.erase(it);
    return taken;
  }
  bool empty() const { return live_.empty(); }
  int64_t in_use() const { return in_use_; }
  int64_t peak() const { return peak_; }
  void reset_peak() { peak_ = in_use_; }

 private:
  std::map<uintptr_t, Block> live_;
  int64_t in_use_ = 0;
  int64_t peak_ = 0;
};

// Writes `stamp` at both ends of a block; checks them before it is freed.
void stamp_block(void* p, int64_t size, uint64_t stamp) {
  std::memcpy(p, &stamp, sizeof stamp);
  std::memcpy(static_cast<char*>(p) + size - sizeof stamp, &stamp, sizeof stamp);
}
bool has_stamp(void* p, int64_t size, uint64_t stamp) {
  uint64_t head, tail;
  std::memcpy(&head, p, sizeof head);
  std::memcpy(&tail, static_cast<char*>(p) + size - sizeof tail, sizeof tail);
  return head == stamp && tail == stamp;
}

// The slack Note [Split rule] allows above a request rounded to 256 bytes.
int64_t max_slack(int64_t rounded) {
  return std::max<int64_t>(256, std::min<int64_t>(rounded / 8, MiB));
}

// Runs `ops` random calls against `pool` and the model; counts failed allocations.
void run_against_model(BFCAllocator& pool, uint64_t seed, int ops, int* failures) {
  std::mt19937_64 rng(seed);
  Model model;
  int64_t allocs = 0;
  for (int op = 0; op < ops; ++op) {
    const int action = std::uniform_int_distribution<int>(0, 99)(rng);
    if (action < 55 || model.empty()) {
      const size_t bytes = random_size(rng);
      const MemoryStats before = pool.stats();
      void* p = pool.allocate(bytes);
      if (p == nullptr) {  // the limit: nothing may have changed
        EXPECT_EQ(pool.stats().bytes_in_use, before.bytes_in_use);
        EXPECT_EQ(pool.stats().num_allocs, before.num_allocs);
        ++*failures;
        continue;
      }
      const int64_t rounded = (static_cast<int64_t>(bytes) + 255) / 256 * 256;
      const int64_t size = pool.allocated_size(p);
      ASSERT_GE(size, rounded);
      ASSERT_LT(size - rounded, max_slack(rounded));
      ASSERT_NO_FATAL_FAILURE(model.add(p, size, static_cast<uint64_t>(op)));
      stamp_block(p, size, static_cast<uint64_t>(op));
      ++allocs;
    } else if (action < 98) {
      auto [p, block] = model.take(rng);
      ASSERT_TRUE(has_stamp(p, block.size, block.stamp)) << "block overwritten";
      pool.deallocate(p);
    } else if (action == 98) {
      pool.release_unused();
    } else {
      pool.reset_peak();
      model.reset_peak();
    }
    // Not after every call: stats() raises the peak itself, and peaks reached between
    // reads must be counted too.
    if (rng() % 4 != 0) continue;
    const MemoryStats s = pool.stats();
    ASSERT_EQ(s.bytes_in_use, model.in_use());
    ASSERT_EQ(s.peak_bytes_in_use, model.peak());
    ASSERT_EQ(s.num_allocs, allocs);
    ASSERT_LE(s.bytes_reserved, s.bytes_limit);
  }
  while (!model.empty()) {
    auto [p, block] = model.take(rng);
    ASSERT_TRUE(has_stamp(p, block.size, block.stamp));
    pool.deallocate(p);
  }
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
  pool.release_unused();
  EXPECT_EQ(pool.stats().bytes_reserved, 0);
}

TEST(BFCRandomTest, MatchesTheModelWithTheFastPath) {
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = 256 * MiB}, make_host_sub_allocator());
  int failures = 0;
  run_against_model(pool, 1, 20000, &failures);
}

TEST(BFCRandomTest, MatchesTheModelWithoutTheFastPath) {
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = 256 * MiB, .max_cached_block_bytes = 0},
                    make_host_sub_allocator());
  int failures = 0;
  run_against_model(pool, 2, 20000, &failures);
}

TEST(BFCRandomTest, MatchesTheModelNearTheLimit) {
  // A small pool without growth: many requests fail, and each failure must change nothing.
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = 24 * MiB, .allow_growth = false},
                    make_host_sub_allocator());
  int failures = 0;
  run_against_model(pool, 3, 20000, &failures);
  EXPECT_GT(failures, 100);
}

TEST(BestFitArenaRandomTest, KeepsEveryInvariantAfterEveryCall) {
  std::unique_ptr<SubAllocator> host = make_host_sub_allocator();
  internal::BestFitArena arena(host.get(), {.limit_bytes = 64 * MiB, .allow_growth = true});
  std::mt19937_64 rng(4);
  std::vector<internal::BestFitArena::Block> live;
  for (int op = 0; op < 5000; ++op) {
    if (std::uniform_int_distribution<int>(0, 99)(rng) < 55 || live.empty()) {
      const int64_t bytes = (static_cast<int64_t>(random_size(rng)) + 255) / 256 * 256;
      const auto block = arena.allocate(bytes, /*exact=*/op % 2 == 0);
      if (block.ptr != nullptr) live.push_back(block);
    } else {
      const size_t i = std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng);
      ASSERT_EQ(arena.free(live[i].ptr), live[i].size);
      live[i] = live.back();
      live.pop_back();
    }
    if (op % 500 == 0) arena.release_free_regions();
    arena.check_invariants();
    int64_t in_use = 0;
    for (const auto& b : live) in_use += b.size;
    ASSERT_EQ(arena.reserved_bytes() - arena.free_bytes(), in_use);
  }
}

}  // namespace
}  // namespace mt
