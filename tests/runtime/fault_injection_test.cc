// Faults injected into the host sub-allocator (core/fault_injection.h): each surfaces as a
// clear mt::Error or is absorbed by the pool's retry, accounting stays exact, other tensors
// stay intact and the next op works. The CUDA sites are exercised on a GPU machine by
// tests/runtime/cuda/gpu_fault_injection_test.cc.
#include "core/fault_injection.h"

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/runtime/op_chain.h"
#include "tests/runtime/runtime_fixture.h"
#include "tests/runtime/watchdog.h"

namespace mt {
namespace {

using internal::clear_faults;
using internal::faults_injected;
using internal::FaultSite;
using internal::inject_fault;
using testing::expect_error;
using ::testing::StartsWith;

class FaultInjectionTest : public testing::RuntimeTest {
 protected:
  void SetUp() override {
    clear_faults();
    RuntimeTest::SetUp();
  }
  void TearDown() override {
    clear_faults();
    RuntimeTest::TearDown();
  }
};

TEST_F(FaultInjectionTest, ARefusedRegionIsAskedForAgainSmallerAndTheOpWorks) {
  inject_fault(FaultSite::kHostAlloc, 1);  // the pool's first region
  Tensor x = constant({1.f, 2.f});
  EXPECT_EQ(faults_injected(FaultSite::kHostAlloc), 1);
  EXPECT_EQ(neg(x).to_vector<float>(), (std::vector<float>{-1, -2}));
  MemoryInfo info = config::get_memory_info("CPU:0");
  EXPECT_EQ(info.current, 256);
  EXPECT_GT(info.reserved, 0);
  EXPECT_LT(info.reserved, int64_t{2} << 20);  // 10% less than the 2 MiB first asked for
}

TEST_F(FaultInjectionTest, ADriverThatKeepsRefusingIsAnOomErrorThatChangesNoAccounting) {
  Tensor keep = constant({1.f, 2.f, 3.f});
  const MemoryInfo before = config::get_memory_info("CPU:0");
  inject_fault(FaultSite::kHostAlloc, 1, /*count=*/1 << 20);
  Error e = expect_error([] { fill({int64_t{1} << 22}, 1.0); });  // 16 MiB: a new region
  EXPECT_EQ(e.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(e.what(), StartsWith("OOM when allocating tensor with shape[4194304] and type "
                                   "float on /job:localhost/replica:0/task:0/device:CPU:0 by "
                                   "allocator CPU_0_bfc\n"));
  EXPECT_GT(faults_injected(FaultSite::kHostAlloc), 0);
  const MemoryInfo after = config::get_memory_info("CPU:0");
  EXPECT_EQ(after.current, before.current);
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(keep.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(neg(keep).to_vector<float>(), (std::vector<float>{-1, -2, -3}));  // fits
  clear_faults();
  EXPECT_EQ(fill({int64_t{1} << 22}, 1.0).num_elements(), int64_t{1} << 22);
}

// Also the CPU side of the hang GpuFaultInjectionTest met on a GPU: release_unused_memory
// after every chain once made each new region twice the last (2 MiB x 2^seed), which
// pinned memory cannot serve. Unlimited pools here, so that such growth shows.
TEST_F(FaultInjectionTest, RandomFaultsDuringRandomOpChainsLeaveEveryPoolAtZero) {
  split_cpu(3);
  const std::vector<std::string> devices = {cpu(0), cpu(1), cpu(2)};
  testing::Watchdog watchdog("FaultInjectionTest.RandomFaultsDuringRandomOpChains");
  std::mt19937 rng(7);
  testing::Tally tally;
  int64_t injected = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const int nth = std::uniform_int_distribution<int>(1, 4)(rng);
    const int count = std::uniform_int_distribution<int>(1, 40)(rng);
    inject_fault(FaultSite::kHostAlloc, nth, count);
    {
      testing::OpChain chain(seed, devices);
      chain.on_step([&](const std::string& step) {
        watchdog.note(absl::StrCat("seed ", seed, ", host allocation faults from call ", nth, " x",
                                   count, ", step ", step));
      });
      chain.generate(10, &tally);
    }
    injected += faults_injected(FaultSite::kHostAlloc);
    clear_faults();
    for (const std::string& d : devices) {
      const MemoryInfo info = config::get_memory_info(d);
      EXPECT_EQ(info.current, 0) << d << " after seed " << seed;
      // Small chains: a region or two of the first sizes, whatever the chains before did.
      EXPECT_LE(info.reserved, int64_t{8} << 20) << d << " after seed " << seed;
      config::release_unused_memory(d);  // the next chain needs new regions
    }
  }
  std::cout << "[fault injection] " << injected << " host allocation faults injected over "
            << tally.ops << " ops (" << tally.errors << " errors); every pool back to zero\n";
  EXPECT_GT(injected, 0);
  EXPECT_EQ(add(constant(1.f), constant(2.f)).to_vector<float>()[0], 3.f);
}

}  // namespace
}  // namespace mt
