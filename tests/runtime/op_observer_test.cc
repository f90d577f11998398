// Op observers (runtime/eager/op_observer.h): what the execute body tells them, for whom,
// in which order, and that removal ends it.
#include "runtime/eager/op_observer.h"

#include <string>
#include <thread>
#include <vector>

#include "runtime/eager/device.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using internal::OpEvent;
using internal::OpObserver;

// Writes each event down as a word: "placed:AddV2", "copy", "copied", "kernel", "done:ok".
class Journal : public OpObserver {
 public:
  void on_placed(const OpEvent& op) override {
    events.push_back(std::string("placed:") + op_name(op.op));
  }
  void before_copy(const Tensor&, internal::Device&, int) override { events.push_back("copy"); }
  void after_copy(const Tensor&, internal::Device&, const absl::StatusOr<Tensor>& c) override {
    events.push_back(c.ok() ? "copied" : "copy failed");
  }
  void before_kernel(const OpEvent&) override { events.push_back("kernel"); }
  void on_done(const OpEvent& op, const absl::Status& status) override {
    events.push_back(status.ok() ? "done:ok" : "done:" + std::string(status.message()));
    outputs += static_cast<int>(op.outputs.size());
    if (op.source) ++sources;
  }

  std::vector<std::string> events;
  int outputs = 0;
  int sources = 0;
};

class OpObserverTest : public testing::RuntimeTest {};

TEST_F(OpObserverTest, AThreadObserverSeesEachStepInOrder) {
  split_cpu(2);
  Tensor a = constant({1.f, 2.f});
  Journal journal;
  internal::thread_observers().add(&journal);
  Tensor b;
  {
    DeviceScope scope("/CPU:1");
    b = a + a;  // a is copied to CPU:1 first, once for each input
  }
  internal::thread_observers().remove(&journal);
  EXPECT_EQ(journal.events, (std::vector<std::string>{"placed:AddV2", "copy", "copied", "copy",
                                                      "copied", "kernel", "done:ok"}));
  EXPECT_EQ(journal.outputs, 1);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST_F(OpObserverTest, SourceOpsAreMarkedAndRemovalEndsTheEvents) {
  Journal journal;
  internal::thread_observers().add(&journal);
  Tensor a = constant({1.f});
  internal::thread_observers().remove(&journal);
  Tensor b = a * a;
  EXPECT_EQ(journal.events, (std::vector<std::string>{"placed:_EagerConst", "kernel", "done:ok"}));
  EXPECT_EQ(journal.sources, 1);
  EXPECT_FALSE(internal::observed());
}

TEST_F(OpObserverTest, ARegistrationCountsAndTheObserverIsCalledOnce) {
  Journal journal;
  internal::thread_observers().add(&journal);
  internal::thread_observers().add(&journal);
  Tensor a = constant({1.f});
  internal::thread_observers().remove(&journal);
  Tensor b = a + a;
  internal::thread_observers().remove(&journal);
  Tensor c = b + b;
  EXPECT_EQ(journal.events, (std::vector<std::string>{"placed:_EagerConst", "kernel", "done:ok",
                                                      "placed:AddV2", "kernel", "done:ok"}));
  EXPECT_FALSE(internal::observed());
}

TEST_F(OpObserverTest, AThreadObserverSeesOnlyItsThread) {
  Journal journal;
  internal::thread_observers().add(&journal);
  std::thread other([] { Tensor x = constant({1.f}) + constant({2.f}); });
  other.join();
  internal::thread_observers().remove(&journal);
  EXPECT_TRUE(journal.events.empty());
}

TEST_F(OpObserverTest, AProcessObserverSeesEveryThread) {
  Journal journal;
  ASSERT_TRUE(internal::add_process_observer(&journal).ok());
  std::thread other([] { Tensor x = constant({1.f}); });
  other.join();
  internal::remove_process_observer(&journal);
  EXPECT_EQ(journal.events, (std::vector<std::string>{"placed:_EagerConst", "kernel", "done:ok"}));
  EXPECT_FALSE(internal::observed());
}

TEST_F(OpObserverTest, AnOpThatFailsValidationIsNotObserved) {
  Journal journal;
  Tensor a = constant({1.f, 2.f});
  internal::thread_observers().add(&journal);
  EXPECT_THROW(reshape(a, {3}), Error);  // shape checks come before placement
  internal::thread_observers().remove(&journal);
  EXPECT_TRUE(journal.events.empty());
}

TEST_F(OpObserverTest, AFailedKernelIsDoneWithItsErrorAndNoOutputs) {
  split_cpu(1, /*limit_mb=*/1);
  Journal journal;
  internal::thread_observers().add(&journal);
  EXPECT_THROW(zeros({1024, 1024}), Error);  // 4 MiB in a 1 MiB pool
  internal::thread_observers().remove(&journal);
  ASSERT_EQ(journal.events.size(), 3u);
  EXPECT_EQ(journal.events[0], "placed:Fill");
  EXPECT_EQ(journal.events[1], "kernel");
  EXPECT_EQ(journal.events[2].rfind("done:OOM when allocating tensor with shape[1024,1024]", 0), 0u)
      << journal.events[2];
  EXPECT_EQ(journal.outputs, 0);
}

TEST_F(OpObserverTest, TooManyProcessObserversIsAnError) {
  std::vector<Journal> journals(5);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(internal::add_process_observer(&journals[i]).ok());
  absl::Status s = internal::add_process_observer(&journals[4]);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "[observers] at most 4 process observers at a time");
  for (int i = 0; i < 4; ++i) internal::remove_process_observer(&journals[i]);
  EXPECT_FALSE(internal::observed());
}

}  // namespace
}  // namespace mt
