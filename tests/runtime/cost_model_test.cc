// The cost model's arithmetic and choices with a fake clock: estimates, copies, queues,
// calibration, the memory skip and the words explanations use.
#include "runtime/cost/cost_model.h"

#include "gtest/gtest.h"
#include "tests/runtime/fake_cost_clock.h"

namespace mt {
namespace {

constexpr int kCpu = 0;
constexpr int kGpu = 1;
const CostKey kAdd{OpId::kAddV2, DType::kFloat32, 13};  // footprints of 4-8 KiB
const CostKey kMul{OpId::kMul, DType::kFloat32, 13};

class CostModelTest : public ::testing::Test {
 protected:
  CostModelTest() {
    BusModel bus;
    bus.set(Link::kHostToDevice, LinkCost{5000, 10});  // 5 us + 10 bytes per ns
    bus.set(Link::kDeviceToHost, LinkCost{8000, 10});
    bus.set(Link::kHostToHost, LinkCost{100, 20});
    model_.set_bus(bus);
  }

  // Measures `key` on `device` until nothing is refreshed: an estimate of `ns`.
  void teach(const CostKey& key, int device, double ns, int64_t bytes = 4096) {
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) model_.record(key, device, bytes, ns);
  }

  CostChoice choose(std::vector<CostInput> inputs, std::vector<bool> fits = {true, true},
                    const CostKey& key = kAdd, int64_t footprint = 4096) {
    std::vector<int> candidates = {kGpu, kCpu};  // priority order
    bool f[2] = {fits[0], fits[1]};
    return model_.choose(key, footprint, candidates, f, inputs);
  }

  testing::FakeCostClock clock_;
  CostModel model_{{{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_};
};

TEST_F(CostModelTest, FootprintBucketsAreOctaves) {
  EXPECT_EQ(footprint_bucket(0), 0);
  EXPECT_EQ(footprint_bucket(1), 1);
  EXPECT_EQ(footprint_bucket(4095), 12);
  EXPECT_EQ(footprint_bucket(4096), 13);
  EXPECT_EQ(footprint_bucket(int64_t{1} << 40), 41);
}

TEST_F(CostModelTest, AddsCopyAndExecutionAndPicksTheEarliestFinish) {
  teach(kAdd, kCpu, 300);
  teach(kAdd, kGpu, 4100);
  CostChoice c = choose({{kCpu, 4096}, {kCpu, 4096}});
  ASSERT_TRUE(c.calibrated);
  EXPECT_EQ(c.device, kCpu);
  const CostEstimate& gpu = c.estimates[0];
  EXPECT_EQ(gpu.device, kGpu);
  EXPECT_DOUBLE_EQ(gpu.exec_ns, 4100);
  EXPECT_DOUBLE_EQ(gpu.copy_ns, 2 * (5000 + 4096 / 10.0));
  EXPECT_DOUBLE_EQ(c.estimates[1].copy_ns, 0);
  EXPECT_EQ(model_.describe(c), "CPU:0 0.3 us vs GPU:0 4.1 us + copy 10.8 us");
}

TEST_F(CostModelTest, InputsAlreadyOnTheGpuMakeItWin) {
  teach(kAdd, kCpu, 3000);
  teach(kAdd, kGpu, 2000);
  CostChoice c = choose({{kGpu, 4096}});
  EXPECT_EQ(c.device, kGpu);
  EXPECT_DOUBLE_EQ(c.estimates[1].copy_ns, 8000 + 409.6);  // the CPU would copy it back
}

TEST_F(CostModelTest, WorkQueuedOnTheGpuDelaysItAndDrainsWithTheClock) {
  teach(kAdd, kCpu, 3000);
  teach(kAdd, kGpu, 1000);
  EXPECT_EQ(choose({}).device, kGpu);
  model_.note_enqueued(kGpu, 5000);
  model_.note_enqueued(kGpu, 5000);
  model_.note_enqueued(kCpu, 5000);  // the CPU runs inline: nothing queues
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 10000);
  EXPECT_DOUBLE_EQ(model_.queued_ns(kCpu), 0);
  CostChoice c = choose({});
  EXPECT_EQ(c.device, kCpu);
  EXPECT_EQ(model_.describe(c), "CPU:0 3.0 us vs GPU:0 1.0 us + queued 10.0 us");
  clock_.advance(9000);
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 1000);
  EXPECT_EQ(choose({}).device, kGpu);
  clock_.advance(5000);
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 0);
}

// Note [A queue that follows the device]: estimates larger than the device's real time pile
// up; an op seen completed cuts the queue to what was enqueued after it.
TEST_F(CostModelTest, AnOpSeenCompletedCutsTheQueueToTheWorkAfterIt) {
  for (int i = 0; i < 4; ++i) model_.note_enqueued(kGpu, 5000);
  const int64_t fourth = model_.enqueued_total_ns(kGpu);
  EXPECT_EQ(fourth, 20000);
  for (int i = 0; i < 6; ++i) model_.note_enqueued(kGpu, 5000);
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 50000);
  clock_.advance(1000);
  model_.note_drained(kGpu, fourth);  // the fourth op's events completed: six remain at most
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 30000);
  model_.note_drained(kGpu, 0);  // an older op says less: the queue does not grow back
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 30000);
  model_.note_drained(kGpu, model_.enqueued_total_ns(kGpu));  // the last one: empty
  EXPECT_DOUBLE_EQ(model_.queued_ns(kGpu), 0);
  model_.note_enqueued(kCpu, 5000);  // the CPU runs inline: no queue and no mark
  model_.note_drained(kCpu, 0);
  EXPECT_EQ(model_.enqueued_total_ns(kCpu), 0);
  EXPECT_DOUBLE_EQ(model_.queued_ns(kCpu), 0);
}

TEST_F(CostModelTest, ACopyWaitsForTheWorkQueuedOnItsSource) {
  teach(kAdd, kCpu, 100);
  teach(kAdd, kGpu, 100);
  model_.note_enqueued(kGpu, 50000);
  CostChoice c = choose({{kGpu, 4096}});
  EXPECT_DOUBLE_EQ(c.estimates[1].wait_ns, 50000);  // the CPU's copy waits for the GPU
  EXPECT_EQ(c.device, kGpu);
}

// Note [What the host waits for]: an op reading a GPU's output makes the CPU wait for that
// GPU's queue (a synchronisation), while the GPU queues it without holding the host up; an
// op on host data alone still finds a busy GPU later than the CPU.
TEST_F(CostModelTest, TheHostWaitsForAGpusQueueOnlyWhenItCopiesFromIt) {
  teach(kAdd, kCpu, 200);
  teach(kAdd, kGpu, 7000);
  model_.note_enqueued(kGpu, 30000);
  CostChoice c = choose({{kCpu, 4}, {kGpu, 4}});
  EXPECT_EQ(c.device, kGpu);
  EXPECT_DOUBLE_EQ(c.estimates[0].wait_ns, 0);      // the GPU: queued behind the same work
  EXPECT_DOUBLE_EQ(c.estimates[1].wait_ns, 30000);  // the CPU: its copy synchronises
  EXPECT_EQ(model_.describe(c),
            "GPU:0 7.0 us + copy 5.0 us vs CPU:0 0.2 us + copy 8.0 us + queued 30.0 us");
  CostChoice host = choose({{kCpu, 4}, {kCpu, 4}});
  EXPECT_EQ(host.device, kCpu);
  EXPECT_DOUBLE_EQ(host.estimates[0].wait_ns, 30000);  // HEFT: the GPU finishes it later
  EXPECT_DOUBLE_EQ(host.estimates[1].wait_ns, 0);
  clock_.advance(30000);  // the GPU has drained: the synchronisation costs the copy alone
  EXPECT_EQ(choose({{kCpu, 4}, {kGpu, 4}}).device, kCpu);
}

// Note [Leaving the inputs' device]: data flows from the host to its GPU; a GPU taking the
// host's inputs pays no way back, the CPU taking a GPU's does.
TEST_F(CostModelTest, TheHostFeedingItsGpuPaysNoWayBack) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  teach(kAdd, kCpu, 50000);
  teach(kAdd, kGpu, 1000);
  const CostInput on_host[] = {{kCpu, 4096}};
  CostChoice c = model_.choose(kAdd, 4096, candidates, fits, on_host, 4096);
  EXPECT_EQ(c.device, kGpu);
  EXPECT_DOUBLE_EQ(c.estimates[0].back_ns, 0);
  const CostInput on_gpu[] = {{kGpu, 4096}};
  CostChoice from_gpu = model_.choose(kAdd, 4096, candidates, fits, on_gpu, 4096);
  EXPECT_DOUBLE_EQ(from_gpu.estimates[1].back_ns, 5000 + 409.6);
}

// Note [Leaving the inputs' device]: a small op on a GPU tensor that would win on the CPU by
// a little stays on the GPU, since its output would have to come back; one that wins by
// more than the way back still moves.
TEST_F(CostModelTest, LeavingTheInputsDevicePaysTheOutputsWayBack) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  const CostInput on_gpu[] = {{kGpu, 1024}};
  teach(kAdd, kCpu, 200);
  teach(kAdd, kGpu, 9000);
  CostChoice alone = model_.choose(kAdd, 1024, candidates, fits, on_gpu);  // no output size
  EXPECT_EQ(alone.device, kCpu);                                           // 8.3 us < 9 us
  CostChoice c = model_.choose(kAdd, 1024, candidates, fits, on_gpu, 1024);
  EXPECT_EQ(c.device, kGpu);
  EXPECT_DOUBLE_EQ(c.estimates[1].back_ns, 5000 + 102.4);  // host to device
  EXPECT_DOUBLE_EQ(c.estimates[0].back_ns, 0);             // already there
  EXPECT_EQ(model_.describe(c), "GPU:0 9.0 us vs CPU:0 0.2 us + copy 8.1 us + back 5.1 us");
  teach(kMul, kCpu, 200);
  teach(kMul, kGpu, 30000);
  EXPECT_EQ(model_.choose(kMul, 1024, candidates, fits, on_gpu, 1024).device, kCpu);
}

// Note [Leaving the inputs' device]: a candidate that holds every input, on it or mirrored
// there, is not leaving; one that lacks even one of them pays the way back.
TEST_F(CostModelTest, ACandidateHoldingEveryInputByItsMirrorsPaysNoWayBack) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  teach(kAdd, kCpu, 4000);
  teach(kAdd, kGpu, 6000);
  const CostInput mirrored[] = {{kGpu, 4096, kCpu}, {kGpu, 100, kCpu}};
  CostChoice c = model_.choose(kAdd, 4196, candidates, fits, mirrored, 1024);
  EXPECT_EQ(c.device, kCpu);
  EXPECT_DOUBLE_EQ(c.estimates[1].copy_ns, 0);
  EXPECT_DOUBLE_EQ(c.estimates[1].back_ns, 0);
  EXPECT_EQ(model_.describe(c), "CPU:0 4.0 us vs GPU:0 6.0 us");
  const CostInput one_not[] = {{kGpu, 4096, kCpu}, {kGpu, 100}};
  CostChoice d = model_.choose(kAdd, 4196, candidates, fits, one_not, 1024);
  EXPECT_EQ(d.device, kGpu);
  EXPECT_DOUBLE_EQ(d.estimates[1].back_ns, 5000 + 102.4);
}

TEST_F(CostModelTest, TheInputsDeviceHoldsMostOfTheirBytesAndAnOpWithoutInputsHasNone) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  teach(kAdd, kCpu, 1000);
  teach(kAdd, kGpu, 1000);
  const CostInput mixed[] = {{kCpu, 100}, {kGpu, 4096}};
  CostChoice c = model_.choose(kAdd, 4196, candidates, fits, mixed, 4096);
  EXPECT_DOUBLE_EQ(c.estimates[0].back_ns, 0);             // the GPU holds most
  EXPECT_DOUBLE_EQ(c.estimates[1].back_ns, 5000 + 409.6);  // the CPU sends it back
  CostChoice none = model_.choose(kAdd, 4096, candidates, fits, {}, 4096);
  EXPECT_DOUBLE_EQ(none.estimates[0].back_ns, 0);
  EXPECT_DOUBLE_EQ(none.estimates[1].back_ns, 0);
}

TEST_F(CostModelTest, TheFirstMeasurementIsWarmUpAndLaterOnesMoveTheMeanByAQuarter) {
  model_.record(kAdd, kCpu, 4096, 1e6);
  EXPECT_FALSE(choose({}).calibrated);
  model_.record(kAdd, kCpu, 4096, 1000);  // the smallest of the next three samples
  model_.record(kAdd, kCpu, 4096, 3000);
  model_.record(kAdd, kCpu, 4096, 1500);
  model_.record(kAdd, kCpu, 4096, 2000);  // then a quarter of the way
  teach(kAdd, kGpu, 1e9);
  CostChoice c = choose({});
  EXPECT_DOUBLE_EQ(c.estimates[1].exec_ns, 1250);
}

TEST_F(CostModelTest, OneSlowCalibrationSampleDoesNotBecomeTheEstimate) {
  model_.record(kAdd, kCpu, 4096, 3000);
  model_.record(kAdd, kCpu, 4096, 1e7);  // a pool growing inside the measurement, say
  teach(kAdd, kGpu, 1e9);
  EXPECT_DOUBLE_EQ(choose({}).estimates[1].exec_ns, 3000);
}

TEST_F(CostModelTest, ALoserWithFewSamplesIsMeasuredAgainUnlessItIsHopeless) {
  model_.record(kAdd, kGpu, 4096, 9000);
  model_.record(kAdd, kGpu, 4096, 9000);
  model_.record(kAdd, kCpu, 4096, 30000);  // warm-up
  model_.record(kAdd, kCpu, 4096, 20000);  // a slow sample: the CPU loses
  CostChoice c = choose({});
  EXPECT_EQ(c.device, kCpu);  // within 4x of the GPU: run there once more
  EXPECT_TRUE(c.refreshing);
  model_.record(kAdd, kCpu, 4096, 1000);  // the CPU's real time
  c = choose({});
  EXPECT_EQ(c.device, kGpu);  // the GPU loses now, 9x, with two samples: tried again
  EXPECT_TRUE(c.refreshing);
  model_.record(kAdd, kGpu, 4096, 9000);
  model_.record(kAdd, kGpu, 4096, 9000);
  c = choose({});
  EXPECT_EQ(c.device, kCpu);
  EXPECT_FALSE(c.refreshing);  // it now wins on its own
  teach(kMul, kGpu, 1000);
  model_.record(kMul, kCpu, 4096, 1e6);
  model_.record(kMul, kCpu, 4096, 1e6);
  c = choose({}, {true, true}, kMul);
  EXPECT_EQ(c.device, kGpu);  // 1000x slower: not worth another try
  EXPECT_FALSE(c.refreshing);
}

// Note [Measured execution time]: a loser within reach is measured again every
// kRefreshAfterLosses decisions, so an estimate kept stale by losing heals.
TEST_F(CostModelTest, ALoserWithinReachIsMeasuredAgainNowAndThen) {
  teach(kAdd, kGpu, 33000);  // slow samples
  teach(kAdd, kCpu, 16000);
  for (int i = 1; i < CostModel::kRefreshAfterLosses; ++i) {
    CostChoice c = choose({});
    ASSERT_EQ(c.device, kCpu);
    ASSERT_FALSE(c.refreshing);
  }
  std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  EXPECT_FALSE(model_.choose(kAdd, 4096, candidates, fits, {}, 0, /*counts=*/false).refreshing);
  CostChoice refresh = choose({});
  EXPECT_EQ(refresh.device, kGpu);  // the 16th loss: measured again, in a burst
  EXPECT_TRUE(refresh.refreshing);
  for (int i = 1; i < CostModel::kRefreshBurst; ++i) ASSERT_TRUE(choose({}).refreshing);
  EXPECT_FALSE(choose({}).refreshing);  // and the count starts over
  for (int i = 0; i < CostModel::kRefreshBurst; ++i) model_.record(kAdd, kGpu, 4096, 7000);
  EXPECT_EQ(choose({}).device, kGpu);  // its real time
  teach(kMul, kGpu, 1000);
  teach(kMul, kCpu, 1e6);
  for (int i = 0; i < 2 * CostModel::kRefreshAfterLosses; ++i) {
    ASSERT_FALSE(choose({}, {true, true}, kMul).refreshing);  // 1000x slower: never
  }
}

// Note [Refresh bursts]: a stale loser runs kRefreshBurst times in a row, and its estimate
// becomes the median of the runs after the first: a cold first run neither counts nor moves
// the estimate, where one sample a quarter of the way (the clamp's 4x) would have.
TEST_F(CostModelTest, AStaleLoserIsMeasuredInABurstWhoseFirstRunIsWarmUp) {
  teach(kAdd, kGpu, 10000);
  teach(kAdd, kCpu, 36000);  // cold samples: the CPU's real time is 9 us
  for (int i = 1; i < CostModel::kRefreshAfterLosses; ++i) ASSERT_EQ(choose({}).device, kGpu);
  for (int i = 0; i < CostModel::kRefreshBurst; ++i) {
    CostChoice c = choose({});
    ASSERT_EQ(c.device, kCpu);
    ASSERT_TRUE(c.refreshing);
  }
  const double burst[] = {60000, 9000, 11000, 8000};  // cold, then the data at hand
  for (double ns : burst) model_.record(kAdd, kCpu, 4096, ns);
  EXPECT_DOUBLE_EQ(choose({}).estimates[1].exec_ns, 9000);
  EXPECT_EQ(choose({}).device, kCpu);
  EXPECT_EQ(model_.history()[0].count, CostModel::kRefreshSamples + CostModel::kRefreshBurst);
}

// Note [Refresh bursts]: a burst goes on whatever the estimates do meanwhile (a winner that
// gets slower), and an explanation neither starts nor advances one.
TEST_F(CostModelTest, ABurstRunsToItsEndAndExplanationsLeaveItAlone) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  teach(kAdd, kGpu, 1000);
  teach(kAdd, kCpu, 3000);
  for (int i = 0; i < CostModel::kRefreshAfterLosses - 1; ++i) choose({});
  for (int i = 0; i < 3; ++i) {  // explanations: the 16th loss is not counted
    EXPECT_FALSE(model_.choose(kAdd, 4096, candidates, fits, {}, 0, /*counts=*/false).refreshing);
  }
  EXPECT_TRUE(choose({}).refreshing);  // the burst starts
  teach(kAdd, kGpu, 200);              // the winner gets faster: the CPU beyond kRefreshRatio
  const CostChoice now = model_.choose(kAdd, 4096, candidates, fits, {}, 0, /*counts=*/false);
  ASSERT_GT(now.estimates[1].exec_ns, CostModel::kRefreshRatio * now.estimates[0].exec_ns);
  for (int i = 1; i < CostModel::kRefreshBurst; ++i) {
    EXPECT_TRUE(model_.choose(kAdd, 4096, candidates, fits, {}, 0, /*counts=*/false).refreshing);
    CostChoice c = choose({});
    EXPECT_EQ(c.device, kCpu);
    EXPECT_TRUE(c.refreshing);
  }
  EXPECT_FALSE(choose({}).refreshing);
}

// Note [Refresh bursts]: a device with few samples is tried again up to kCalibrationRatio
// of the winner, not only kRefreshRatio: the batch-1 product's first samples on the CPU read
// weights just copied there.
TEST_F(CostModelTest, ADeviceWithFewSamplesIsTriedUpToTheCalibrationRatio) {
  teach(kAdd, kGpu, 10000);
  model_.record(kAdd, kCpu, 4096, 90000);  // warm-up
  model_.record(kAdd, kCpu, 4096, 60000);  // 6x: beyond kRefreshRatio
  CostChoice c = choose({});
  EXPECT_EQ(c.device, kCpu);
  EXPECT_TRUE(c.refreshing);
  model_.record(kAdd, kCpu, 4096, 8000);  // the weights at hand
  EXPECT_EQ(choose({}).device, kCpu);
  EXPECT_FALSE(choose({}).refreshing);
}

// The batch-1 MLP's first product and the Relu that reads it, as an H100 measured them
// (Note [Looking along the data]): a tie on their own, the Relu far cheaper on the CPU.
class LookAlongTest : public CostModelTest {
 protected:
  LookAlongTest() {
    teach(product, kGpu, 12600);
    teach(product, kCpu, 13600);
    teach(relu, kGpu, 7000);
    teach(relu, kCpu, 200);
  }

  const CostKey product{OpId::kMatMul, DType::kFloat32, 20};
  const CostKey relu{OpId::kRelu, DType::kFloat32, 11};
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
};

// Note [Looking along the data]: the batch-1 MLP's first product, a tie on its own, goes
// where the ops reading its output are cheap; each reader runs where the output is or moves
// it, whichever is cheaper; a chain stops at an op some candidate has not measured, at a
// loop, and after kLookAhead ops; an op without an output looks at none.
TEST_F(LookAlongTest, TheOpsReadingTheOutputCountWhereTheyWouldRun) {
  const CostKey second{OpId::kMatMul, DType::kFloat32, 19};
  auto pick = [&](const CostKey& key) {
    return model_.choose(key, 1 << 19, candidates, fits, {}, 1024, /*counts=*/false);
  };
  EXPECT_EQ(pick(product).device, kGpu);  // alone, the GPU by a microsecond
  model_.note_consumer(CostModel::pack(product), CostModel::pack(relu), 1024);
  CostChoice c = pick(product);
  EXPECT_EQ(c.device, kCpu);
  EXPECT_DOUBLE_EQ(c.estimates[0].next_ns, 7000);
  EXPECT_DOUBLE_EQ(c.estimates[1].next_ns, 200);
  EXPECT_EQ(model_.describe(c), "CPU:0 13.6 us + next 0.2 us vs GPU:0 12.6 us + next 7.0 us");
  model_.note_consumer(CostModel::pack(relu), CostModel::pack(second), 40);
  EXPECT_DOUBLE_EQ(pick(product).estimates[1].next_ns, 200);  // the second not measured
  model_.record(second, kCpu, 1 << 18, 4500);
  model_.record(second, kCpu, 1 << 18, 4500);
  EXPECT_DOUBLE_EQ(pick(product).estimates[1].next_ns, 200);  // not on the GPU either
  teach(second, kGpu, 12600);
  EXPECT_DOUBLE_EQ(pick(product).estimates[1].next_ns, 200 + 4500);
  model_.note_consumer(CostModel::pack(second), CostModel::pack(relu), 1024);  // a loop
  // From the GPU the cheapest way is to move the output to the host: 8.1 + 0.2 + 4.5 us,
  // not 7 + 12.6 us on the GPU.
  EXPECT_DOUBLE_EQ(pick(product).estimates[0].next_ns, 8000 + 102.4 + 200 + 4500);
  EXPECT_DOUBLE_EQ(pick(relu).estimates[1].next_ns, 4500);  // itself: the loop's end
  EXPECT_DOUBLE_EQ(model_.choose(product, 1 << 19, candidates, fits, {}, 0).estimates[1].next_ns,
                   0);  // no output, nothing reads it
}

// Note [Looking along the data]: a reader not seen again within kReaderForgottenAfter
// decisions of its producer (a program's last read of a result) no longer counts.
TEST_F(LookAlongTest, AReaderNotSeenAgainIsForgotten) {
  model_.note_consumer(CostModel::pack(product), CostModel::pack(relu), 1024);
  for (int i = 0; i <= CostModel::kReaderForgottenAfter; ++i) {
    ASSERT_DOUBLE_EQ(
        model_.choose(product, 1 << 19, candidates, fits, {}, 1024).estimates[1].next_ns, 200);
  }
  CostChoice c = model_.choose(product, 1 << 19, candidates, fits, {}, 1024);
  EXPECT_DOUBLE_EQ(c.estimates[1].next_ns, 0);
  EXPECT_EQ(c.device, kGpu);
  model_.note_consumer(CostModel::pack(product), CostModel::pack(relu), 1024);  // seen again
  EXPECT_DOUBLE_EQ(model_.choose(product, 1 << 19, candidates, fits, {}, 1024).estimates[1].next_ns,
                   200);
}

// Note [Read rates]: a reader counts by its reads per output of the op before it. Read once
// per 100 outputs (a result read on the host at a block's end) it no longer pulls every
// output to where it would run; read with every output it counts in full.
TEST_F(LookAlongTest, AReaderCountsByHowOftenItReads) {
  const uint32_t p = CostModel::pack(product), r = CostModel::pack(relu);
  auto pick = [&] {
    return model_.choose(product, 1 << 19, candidates, fits, {}, 1024, /*counts=*/false);
  };
  model_.note_uses(p, 100);
  model_.note_consumer(p, r, 1024, 1);  // one read in 100 outputs
  CostChoice c = pick();
  EXPECT_DOUBLE_EQ(c.estimates[0].next_ns, 70);  // 7 us on the GPU, a hundredth of the time
  EXPECT_DOUBLE_EQ(c.estimates[1].next_ns, 2);
  EXPECT_EQ(c.device, kGpu);
  for (int i = 0; i < 20; ++i) {  // then every output read: 64 uses between decisions
    model_.note_uses(p, 64);
    model_.note_consumer(p, r, 1024, 64);
  }
  c = pick();
  EXPECT_NEAR(c.estimates[0].next_ns, 7000, 7000 * 1e-3);  // halfway at each note
  EXPECT_EQ(c.device, kCpu);
}

// Note [Read rates]: two readers taking turns as the latest (a division every step, a read
// on the host once per 100) keep their own rates.
TEST_F(LookAlongTest, ReadersTakingTurnsKeepTheirOwnRates) {
  const CostKey host_read{OpId::kReshape, DType::kFloat32, 11};
  const uint32_t p = CostModel::pack(product), r = CostModel::pack(relu);
  const uint32_t h = CostModel::pack(host_read);
  auto next_on_cpu = [&] {
    return model_.choose(product, 1 << 19, candidates, fits, {}, 1024, /*counts=*/false)
        .estimates[1]
        .next_ns;
  };
  teach(host_read, kGpu, 9000);
  teach(host_read, kCpu, 9000);
  for (int block = 0; block < 12; ++block) {  // 100 outputs a block
    model_.note_uses(p, 64);
    model_.note_consumer(p, r, 1024, 64);
    model_.note_uses(p, 36);
    model_.note_consumer(p, r, 1024, 36);
    model_.note_consumer(p, h, 1024, 1);
  }
  EXPECT_NEAR(next_on_cpu(), 9000.0 / 100, 0.1);  // the host read, the latest: a hundredth
  model_.note_uses(p, 64);
  model_.note_consumer(p, r, 1024, 64);
  EXPECT_NEAR(next_on_cpu(), 200, 0.1);  // the Relu again: in full
}

// Note [Read rates]: a rate moves halfway to each note's, so a reader that slows down fades
// within a few of its notes rather than over the program.
TEST_F(LookAlongTest, AReadRateFollowsAReaderThatSlowsDown) {
  const uint32_t p = CostModel::pack(product), r = CostModel::pack(relu);
  for (int i = 0; i < 100; ++i) {  // every output read for 6400 outputs
    model_.note_uses(p, 64);
    model_.note_consumer(p, r, 1024, 64);
  }
  for (int i = 0; i < 100; ++i) {  // then one read per 640 outputs, for 6400 more
    model_.note_uses(p, 64);
    if (i % 10 == 9) model_.note_consumer(p, r, 1024, 1);
  }
  const CostChoice c =
      model_.choose(product, 1 << 19, candidates, fits, {}, 1024, /*counts=*/false);
  EXPECT_LT(c.estimates[0].next_ns, 7000 * 0.01);
  EXPECT_EQ(c.device, kGpu);
}

TEST_F(CostModelTest, ALookAheadEndsAfterKLookAheadOps) {
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  std::vector<CostKey> keys;
  for (int b = 1; b <= CostModel::kLookAhead + 3; ++b) {
    keys.push_back(CostKey{OpId::kAddV2, DType::kFloat32, b});
    teach(keys.back(), kGpu, 1000);
    teach(keys.back(), kCpu, 1000);
    if (b > 1) model_.note_consumer(CostModel::pack(keys[b - 2]), CostModel::pack(keys[b - 1]), 1);
  }
  CostChoice c = model_.choose(keys[0], 2, candidates, fits, {}, 1, /*counts=*/false);
  EXPECT_DOUBLE_EQ(c.estimates[0].next_ns, 1000.0 * CostModel::kLookAhead);
}

TEST_F(CostModelTest, CalibratesEachDeviceInPriorityOrderBeforeChoosing) {
  CostChoice first = choose({});
  EXPECT_FALSE(first.calibrated);
  EXPECT_EQ(first.device, kGpu);
  EXPECT_EQ(model_.describe(first),
            "calibrating: GPU:0 not measured yet vs CPU:0 not measured yet");
  teach(kAdd, kGpu, 500);
  CostChoice second = choose({});
  EXPECT_FALSE(second.calibrated);
  EXPECT_EQ(second.device, kCpu);  // the device not measured yet
  teach(kAdd, kCpu, 400);
  EXPECT_TRUE(choose({}).calibrated);
  EXPECT_EQ(choose({}).device, kCpu);
}

TEST_F(CostModelTest, StopsTryingADeviceThatNeverReportsAndUsesTheKnownBest) {
  teach(kAdd, kGpu, 500);
  for (int i = 0; i < CostModel::kMaxTries; ++i) EXPECT_EQ(choose({}).device, kCpu);
  CostChoice c = choose({});
  EXPECT_FALSE(c.calibrated);
  EXPECT_EQ(c.device, kGpu);
}

TEST_F(CostModelTest, AnExplanationTakesNoCalibrationTry) {
  teach(kAdd, kGpu, 500);
  const std::vector<int> candidates = {kGpu, kCpu};
  const bool fits[2] = {true, true};
  for (int i = 0; i < 2 * CostModel::kMaxTries; ++i) {
    EXPECT_EQ(model_.choose(kAdd, 4096, candidates, fits, {}, 0, /*counts=*/false).device, kCpu);
  }
  for (int i = 0; i < CostModel::kMaxTries; ++i) EXPECT_EQ(choose({}).device, kCpu);
  EXPECT_EQ(choose({}).device, kGpu);  // the CPU's tries were the counted ones
}

TEST_F(CostModelTest, NeverTriesALargeOpOnAnUnmeasuredDevice) {
  const CostKey big{OpId::kMatMul, DType::kFloat32, 30};
  teach(big, kGpu, 5e6, int64_t{1} << 29);
  CostChoice c = choose({}, {true, true}, big, int64_t{1} << 29);
  EXPECT_FALSE(c.calibrated);
  EXPECT_EQ(c.device, kGpu);
}

// Note [Where data is born]: the second run of the batch-1024 MLP on an H100 made its
// weights on the CPU, calibrating the random draw there, and ran every step on the CPU.
TEST_F(CostModelTest, LargeNewDataIsMadeOnTheFirstDeviceThatFits) {
  const int64_t weights = 784 * 256 * 4;
  const CostKey random{OpId::kStatelessRandomUniformV2, DType::kFloat32, footprint_bucket(weights)};
  std::vector<int> candidates = {kGpu, kCpu};
  bool both[2] = {true, true};
  auto make = [&](const bool* fits) {
    return model_.choose(random, weights, candidates, absl::MakeConstSpan(fits, 2), {}, weights);
  };
  // Measured on the GPU alone (a loaded history): the CPU is not tried.
  teach(random, kGpu, 20000, weights);
  for (int i = 0; i < 2 * CostModel::kMaxTries; ++i) {
    CostChoice c = make(both);
    EXPECT_EQ(c.device, kGpu);
    EXPECT_TRUE(c.calibrated);
    EXPECT_TRUE(c.first_keeps);
  }
  // Nor does a cheaper estimate elsewhere move it.
  teach(random, kCpu, 1000, weights);
  EXPECT_EQ(make(both).device, kGpu);
  EXPECT_EQ(model_.describe(make(both)),
            "new data made on the first device: GPU:0 20.0 us vs CPU:0 1.0 us");
  // Where the GPU cannot take it, the CPU makes it.
  bool cpu_only[2] = {false, true};
  EXPECT_EQ(make(cpu_only).device, kCpu);
}

TEST_F(CostModelTest, SmallNewDataAndConstantsArePlacedByCost) {
  std::vector<int> candidates = {kGpu, kCpu};
  bool both[2] = {true, true};
  // A scalar drawn: small enough that a later copy costs its latency alone.
  const CostKey scalar{OpId::kStatelessRandomUniformV2, DType::kFloat32, 3};
  teach(scalar, kGpu, 6000, 4);
  EXPECT_EQ(model_.choose(scalar, 4, candidates, both, {}, 4).device, kCpu);  // tried there
  teach(scalar, kCpu, 500, 4);
  CostChoice c = model_.choose(scalar, 4, candidates, both, {}, 4);
  EXPECT_EQ(c.device, kCpu);
  EXPECT_FALSE(c.first_keeps);
  // A constant's bytes come from the host: placed by cost at any size.
  const int64_t pixels = 256 * 784 * 4;
  const CostKey constant{OpId::kEagerConst, DType::kInt32, footprint_bucket(pixels)};
  teach(constant, kGpu, 60000, pixels);
  teach(constant, kCpu, 30000, pixels);
  EXPECT_EQ(model_.choose(constant, pixels, candidates, both, {}, pixels).device, kCpu);
}

TEST_F(CostModelTest, SkipsADeviceWhosePoolCannotTakeTheOutput) {
  teach(kAdd, kCpu, 3000);
  teach(kAdd, kGpu, 100);
  CostChoice c = choose({}, {false, true});
  EXPECT_TRUE(c.calibrated);
  EXPECT_EQ(c.device, kCpu);
  EXPECT_EQ(model_.describe(c), "CPU:0 3.0 us vs GPU:0 skipped: its pool cannot take the output");
}

TEST_F(CostModelTest, WhenNothingFitsThePriorityDeviceReportsTheOom) {
  teach(kAdd, kCpu, 3000);
  teach(kAdd, kGpu, 100);
  EXPECT_EQ(choose({}, {false, false}).device, kGpu);
}

TEST_F(CostModelTest, UnseenFootprintsUseTheSizeFitOfTheOp) {
  const CostKey small{OpId::kMatMul, DType::kFloat32, 13};
  const CostKey medium{OpId::kMatMul, DType::kFloat32, 21};
  const CostKey large{OpId::kMatMul, DType::kFloat32, 25};
  teach(small, kCpu, 4096 * 0.5, 4096);  // 0.5 ns per byte
  teach(medium, kCpu, (1 << 20) * 0.5, 1 << 20);
  teach(large, kGpu, 20000, 1 << 24);
  teach(small, kGpu, 20000, 4096);
  const CostKey unseen{OpId::kMatMul, DType::kFloat32, 25};
  CostChoice c = choose({}, {true, true}, unseen, 1 << 24);
  ASSERT_TRUE(c.calibrated);
  EXPECT_NEAR(c.estimates[1].exec_ns, (1 << 24) * 0.5, 1);
  EXPECT_EQ(c.device, kGpu);
}

TEST_F(CostModelTest, AnUnmeasuredLinkLeavesTheEstimateUnknown) {
  CostModel model({{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_);
  model.record(kAdd, kCpu, 4096, 1);
  model.record(kAdd, kCpu, 4096, 1);
  model.record(kAdd, kGpu, 4096, 1);
  model.record(kAdd, kGpu, 4096, 1);
  std::vector<int> candidates = {kGpu, kCpu};
  bool fits[2] = {true, true};
  std::vector<CostInput> inputs = {{kCpu, 64}};
  CostChoice c = model.choose(kAdd, 64, candidates, fits, inputs);
  EXPECT_FALSE(c.estimates[0].known);
  EXPECT_TRUE(c.estimates[1].known);
}

TEST_F(CostModelTest, GenerationMovesWhenAnEstimateAppearsOrTheBusChanges) {
  uint64_t g = model_.generation();
  model_.record(kAdd, kCpu, 4096, 1);
  EXPECT_EQ(model_.generation(), g);
  model_.record(kAdd, kCpu, 4096, 1);
  EXPECT_GT(model_.generation(), g);
  g = model_.generation();
  model_.record(kAdd, kCpu, 4096, 1);
  EXPECT_EQ(model_.generation(), g);
  model_.set_bus(BusModel());
  EXPECT_GT(model_.generation(), g);
}

// Note [Measured execution time]: a GPU's events span what the host did between them; one
// sample of a library starting up took a MatMul's estimate from 32 us to 23 ms, and the GPU
// was never tried again.
TEST_F(CostModelTest, OneSampleMovesAnEstimateAtMostFourfoldByAQuarter) {
  teach(kAdd, kGpu, 32000);
  model_.record(kAdd, kGpu, 4096, 93e6);  // brought to 4 x 32 us, then a quarter of the way
  teach(kAdd, kCpu, 1e9);
  EXPECT_DOUBLE_EQ(choose({}).estimates[0].exec_ns, 32000 + 0.25 * (4 * 32000 - 32000));
  for (int i = 0; i < 20; ++i) model_.record(kAdd, kGpu, 4096, 93e6);  // a machine slower for good
  EXPECT_GT(choose({}).estimates[0].exec_ns, 80e6);
}

TEST_F(CostModelTest, AKeyFromAHistoryTakesThisProcesssFirstSampleAsWarmUp) {
  teach(kAdd, kGpu, 32000);
  teach(kAdd, kCpu, 400000);
  CostModel second({{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_);
  second.set_bus(model_.bus());
  second.load_history(model_.history());
  second.record(kAdd, kGpu, 4096, 93e6);  // cuBLAS starting in the new process
  std::vector<int> candidates = {kGpu, kCpu};
  bool fits[2] = {true, true};
  CostChoice c = second.choose(kAdd, 4096, candidates, fits, {});
  EXPECT_EQ(c.device, kGpu);
  EXPECT_DOUBLE_EQ(c.estimates[0].exec_ns, 32000);
  EXPECT_EQ(second.history()[1].count, CostModel::kRefreshSamples + 1);  // counted all the same
  second.record(kAdd, kGpu, 4096, 36000);  // later samples move it as before
  EXPECT_DOUBLE_EQ(second.choose(kAdd, 4096, candidates, fits, {}).estimates[0].exec_ns, 33000);
}

// A loaded key's first sample in this process may come in a refresh burst: the burst's first
// run is the warm-up, and the burst ends with its own fourth sample.
TEST_F(CostModelTest, ALoadedKeysFirstSampleInABurstIsTheBurstsWarmUp) {
  teach(kAdd, kGpu, 10000);
  teach(kAdd, kCpu, 36000);
  CostModel second({{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_);
  second.set_bus(model_.bus());
  second.load_history(model_.history());
  std::vector<int> candidates = {kGpu, kCpu};
  bool fits[2] = {true, true};
  for (int i = 1; i < CostModel::kRefreshAfterLosses; ++i) {
    ASSERT_EQ(second.choose(kAdd, 4096, candidates, fits, {}).device, kGpu);
  }
  for (int i = 0; i < CostModel::kRefreshBurst; ++i) {
    ASSERT_TRUE(second.choose(kAdd, 4096, candidates, fits, {}).refreshing);
  }
  const double burst[] = {60000, 9000, 11000, 8000};  // cold, then the data at hand
  for (double ns : burst) second.record(kAdd, kCpu, 4096, ns);
  EXPECT_DOUBLE_EQ(second.choose(kAdd, 4096, candidates, fits, {}).estimates[1].exec_ns, 9000);
}

TEST_F(CostModelTest, HistoryRoundTripsAndReplacesTheEstimates) {
  teach(kAdd, kCpu, 300);
  teach(kAdd, kGpu, 4100);
  std::vector<CostRecord> saved = model_.history();
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved[0].device, kCpu);
  EXPECT_EQ(saved[0].count, CostModel::kRefreshSamples);
  CostModel fresh({{DeviceType::kCPU, "CPU:0"}, {DeviceType::kGPU, "GPU:0"}}, &clock_);
  fresh.set_bus(model_.bus());
  fresh.load_history(saved);
  std::vector<int> candidates = {kGpu, kCpu};
  bool fits[2] = {true, true};
  CostChoice c = fresh.choose(kAdd, 4096, candidates, fits, {});
  EXPECT_TRUE(c.calibrated);
  EXPECT_EQ(c.device, kCpu);
}

// Note [Remote candidates] in runtime/cost/cost_policy.h: a device of another task is reached
// over the network, both ways, and keeps no queue.
TEST(CostModelRemoteTest, ADeviceOfAnotherTaskIsReachedOverTheNetworkAndKeepsNoQueue) {
  testing::FakeCostClock clock;
  constexpr int kRemote = 2;
  CostModel model({{DeviceType::kCPU, "CPU:0"},
                   {DeviceType::kGPU, "GPU:0"},
                   {DeviceType::kGPU, "/job:worker/replica:0/task:0/device:GPU:0", true}},
                  &clock);
  BusModel bus;
  bus.set(Link::kHostToDevice, LinkCost{5000, 10});
  bus.set(Link::kDeviceToHost, LinkCost{8000, 10});
  bus.set(Link::kNetwork, LinkCost{100000, 1});
  model.set_bus(bus);
  for (int device : {kCpu, kGpu, kRemote}) {
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) model.record(kAdd, device, 4096, 1000);
  }
  const std::vector<int> candidates = {kGpu, kCpu, kRemote};
  const bool fits[3] = {true, true, true};
  const CostInput on_task[] = {{kRemote, 4096}};
  CostChoice c = model.choose(kAdd, 4096, candidates, fits, on_task, 4096);
  EXPECT_EQ(c.device, kRemote);                             // the data is there
  EXPECT_DOUBLE_EQ(c.estimates[0].copy_ns, 100000 + 4096);  // GPU:0 fetches it over NET
  EXPECT_DOUBLE_EQ(c.estimates[0].back_ns, 100000 + 4096);  // and sends the sum back
  EXPECT_DOUBLE_EQ(c.estimates[2].copy_ns, 0);
  const CostInput here[] = {{kGpu, 4096}};
  EXPECT_DOUBLE_EQ(model.choose(kAdd, 4096, candidates, fits, here, 4096).estimates[2].copy_ns,
                   100000 + 4096);  // GPU to GPU of another task: NET, not D2D
  model.note_enqueued(kRemote, 50000);
  EXPECT_DOUBLE_EQ(model.queued_ns(kRemote), 0);
  EXPECT_EQ(model.enqueued_total_ns(kRemote), 0);
}

TEST(CostModelRemoteTest, AnUnmeasuredNetworkLeavesTheRemoteEstimateUnknown) {
  testing::FakeCostClock clock;
  CostModel model({{DeviceType::kCPU, "CPU:0"},
                   {DeviceType::kCPU, "/job:worker/replica:0/task:0/device:CPU:0", true}},
                  &clock);
  BusModel bus;
  bus.set(Link::kHostToHost, LinkCost{100, 20});  // no NET
  model.set_bus(bus);
  const std::vector<int> candidates = {0, 1};
  const bool fits[2] = {true, true};
  for (int device : {0, 1}) {
    for (int i = 0; i < CostModel::kRefreshSamples; ++i) model.record(kAdd, device, 4096, 1000);
  }
  const CostInput on_task[] = {{1, 4096}};
  CostChoice c = model.choose(kAdd, 4096, candidates, fits, on_task, 4096);
  EXPECT_FALSE(c.estimates[0].known);  // CPU:0 would fetch over a link never measured
  EXPECT_TRUE(c.estimates[1].known);
  EXPECT_FALSE(c.calibrated);
  EXPECT_EQ(c.device, 0);  // tried, as any device without an estimate
  for (int i = 1; i < CostModel::kMaxTries; ++i) {
    model.choose(kAdd, 4096, candidates, fits, on_task, 4096);
  }
  EXPECT_EQ(model.choose(kAdd, 4096, candidates, fits, on_task, 4096).device, 1);  // then known
}

}  // namespace
}  // namespace mt
