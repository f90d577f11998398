// mt::Variable: the ops it runs and where (VarHandleOp, AssignVariableOp, ReadVariableOp and
// the assignments, pinned to the variable's device), in-place writes and copy-on-write
// (Note [Variables write in place] in runtime/train/variable.h), errors, and its memory.
#include "runtime/eager/tensor_impl.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

class VariableTest : public RuntimeTest {};

int64_t cpu_bytes() { return config::get_memory_info("CPU:0").current; }

const void* data_of(const Tensor& t) { return t.impl()->data; }

std::vector<float> values(const Variable& v) { return v.read_value().to_vector<float>(); }

TEST_F(VariableTest, CreationRunsVarHandleOpThenAssignVariableOp) {
  const Tensor initial = constant({1.f, 2.f});
  debugging::set_log_device_placement(true);
  Variable v(initial, /*trainable=*/true, "v");
  EXPECT_EQ(log(), (std::vector<std::string>{"Executing op VarHandleOp in device " + cpu(0),
                                             "Executing op AssignVariableOp in device " + cpu(0)}));
  EXPECT_EQ(v.device(), cpu(0));
  EXPECT_EQ(v.dtype(), DType::kFloat32);
  EXPECT_EQ(v.shape().to_string(), "(2,)");
  EXPECT_EQ(v.name(), "v");
  EXPECT_TRUE(v.trainable());
  EXPECT_TRUE(v.defined());
  EXPECT_FALSE(Variable(initial, /*trainable=*/false).trainable());
}

TEST_F(VariableTest, ReadRunsReadVariableOp) {
  Variable v(constant({1.f, 2.f}));
  debugging::set_log_device_placement(true);
  const Tensor value = v.read_value();
  EXPECT_EQ(log(), (std::vector<std::string>{"Executing op ReadVariableOp in device " + cpu(0)}));
  EXPECT_EQ(value.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(value.device(), cpu(0));
  const Tensor implicit = v;  // operator Tensor reads too
  EXPECT_EQ(log().size(), 2u);
}

TEST_F(VariableTest, AssignmentsUpdateTheValue) {
  Variable v(constant({1.f, 2.f}));
  v.assign(constant({5.f, 6.f}));
  EXPECT_EQ(values(v), (std::vector<float>{5.f, 6.f}));
  v.assign_add(constant({1.f, 1.f}));
  EXPECT_EQ(values(v), (std::vector<float>{6.f, 7.f}));
  v.assign_sub(constant({2.f, 3.f}));
  EXPECT_EQ(values(v), (std::vector<float>{4.f, 4.f}));
  debugging::set_log_device_placement(true);
  v.assign(constant({0.f, 0.f}));
  v.assign_add(constant({1.f, 1.f}));
  v.assign_sub(constant({1.f, 1.f}));
  EXPECT_EQ(log(),
            (std::vector<std::string>{"Executing op _EagerConst in device " + cpu(0),
                                      "Executing op AssignVariableOp in device " + cpu(0),
                                      "Executing op _EagerConst in device " + cpu(0),
                                      "Executing op AssignAddVariableOp in device " + cpu(0),
                                      "Executing op _EagerConst in device " + cpu(0),
                                      "Executing op AssignSubVariableOp in device " + cpu(0)}));
}

TEST_F(VariableTest, CopiesShareOneVariable) {
  Variable v(constant({1.f, 2.f}));
  Variable copy = v;
  copy.assign_add(constant({10.f, 10.f}));
  EXPECT_EQ(values(v), (std::vector<float>{11.f, 12.f}));
  EXPECT_EQ(copy.state(), v.state());
}

// Note [Variables write in place]: with no read value held, every assignment writes into
// the variable's own buffer.
TEST_F(VariableTest, AssignmentsWriteInPlaceWhenNoReadIsHeld) {
  Variable v(constant({1.f, 2.f}));
  const void* buffer = data_of(v.read_value());
  v.assign(constant({3.f, 4.f}));
  EXPECT_EQ(data_of(v.read_value()), buffer);
  v.assign_add(constant({1.f, 1.f}));
  EXPECT_EQ(data_of(v.read_value()), buffer);
  v.assign_sub(constant({2.f, 2.f}));
  EXPECT_EQ(data_of(v.read_value()), buffer);
  EXPECT_EQ(values(v), (std::vector<float>{2.f, 3.f}));
}

// A read value still held keeps what it held: the assignment moves the variable to a new
// buffer (copy-on-write), after which it writes in place again.
TEST_F(VariableTest, AssignmentsCopyOnWriteWhenAReadIsHeld) {
  Variable v(constant({1.f, 2.f}));
  const Tensor first = v.read_value();
  v.assign(constant({3.f, 4.f}));
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_NE(data_of(v.read_value()), data_of(first));
  const Tensor second = v.read_value();
  v.assign_add(constant({1.f, 1.f}));
  EXPECT_EQ(second.to_vector<float>(), (std::vector<float>{3.f, 4.f}));
  EXPECT_NE(data_of(v.read_value()), data_of(second));
  const Tensor third = v.read_value();
  v.assign_sub(constant({4.f, 4.f}));
  EXPECT_EQ(third.to_vector<float>(), (std::vector<float>{4.f, 5.f}));
  EXPECT_NE(data_of(v.read_value()), data_of(third));
  EXPECT_EQ(values(v), (std::vector<float>{0.f, 1.f}));
  const void* buffer = data_of(v.read_value());
  v.assign(constant({7.f, 8.f}));  // nothing held now
  EXPECT_EQ(data_of(v.read_value()), buffer);
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
}

// TensorFlow's MaybePinToResourceDevice: every op on the variable runs on its device.
TEST_F(VariableTest, OpsOnAVariableRunOnItsDeviceUnderAnotherScope) {
  split_cpu(2);
  Variable v(constant({1.f, 2.f}));
  ASSERT_EQ(v.device(), cpu(0));
  DeviceScope scope("/CPU:1");
  const Tensor delta = constant({1.f, 1.f});
  ASSERT_EQ(delta.device(), cpu(1));
  debugging::set_log_device_placement(true);
  v.assign_add(delta);
  EXPECT_EQ(v.read_value().device(), cpu(0));
  v.assign(delta);
  v.assign_sub(delta);
  debugging::set_log_device_placement(false);
  EXPECT_EQ(log(),
            (std::vector<std::string>{"Executing op AssignAddVariableOp in device " + cpu(0),
                                      "Executing op ReadVariableOp in device " + cpu(0),
                                      "Executing op AssignVariableOp in device " + cpu(0),
                                      "Executing op AssignSubVariableOp in device " + cpu(0)}));
  EXPECT_EQ(values(v), (std::vector<float>{0.f, 0.f}));
  const debugging::PlacementExplanation e =
      debugging::explain_placement("AssignAddVariableOp", {v.read_value(), delta});
  EXPECT_EQ(e.device, cpu(0));
  EXPECT_EQ(e.requested, "/device:CPU:1");
  EXPECT_EQ(e.reason, "resource_device");
  EXPECT_EQ(e.detail, "input 0 is a variable: pinned to its device (asked for /device:CPU:1)");
  ASSERT_EQ(e.copies.size(), 1u);
  EXPECT_EQ(e.copies[0].input, 1);
  EXPECT_EQ(e.copies[0].from, "CPU:1");
  EXPECT_EQ(e.copies[0].bytes, 8);
}

TEST_F(VariableTest, VariableCreatedUnderAScopeLivesOnItsDevice) {
  split_cpu(2);
  const Tensor initial = constant({1.f, 2.f});
  debugging::set_log_device_placement(true);
  Variable v;
  {
    DeviceScope scope("/CPU:1");
    v = Variable(initial);
  }
  EXPECT_EQ(v.device(), cpu(1));
  EXPECT_EQ(v.read_value().device(), cpu(1));
  EXPECT_EQ(log(), (std::vector<std::string>{"Executing op VarHandleOp in device " + cpu(1),
                                             "Executing op AssignVariableOp in device " + cpu(1),
                                             "Executing op ReadVariableOp in device " + cpu(1)}));
}

TEST_F(VariableTest, AssignmentOfAnotherShapeIsInvalidArgument) {
  Variable v(constant({1.f, 2.f}));
  expect(
      [&] {
        v.assign(constant({1.f, 2.f, 3.f}));
      },
      absl::StatusCode::kInvalidArgument,
      "[AssignVariableOp] Trying to assign to variable with tensor with wrong shape. Expected "
      "(2,) got (3,)");
  expect(
      [&] {
        v.assign_add(constant({{1.f, 2.f}}));
      },
      absl::StatusCode::kInvalidArgument,
      "[AssignAddVariableOp] Trying to assign to variable with tensor with wrong shape. "
      "Expected (2,) got (1, 2)");
  expect([&] { v.assign_sub(constant(1.f)); }, absl::StatusCode::kInvalidArgument,
         "[AssignSubVariableOp] Trying to assign to variable with tensor with wrong shape. "
         "Expected (2,) got ()");
  EXPECT_EQ(values(v), (std::vector<float>{1.f, 2.f}));
}

TEST_F(VariableTest, AssignmentOfAnotherDtypeIsInvalidArgument) {
  Variable v(constant({1.f, 2.f}));
  expect(
      [&] {
        v.assign(constant({1, 2}));
      },
      absl::StatusCode::kInvalidArgument, "[AssignVariableOp] dtypes differ: float32 vs int32");
  expect(
      [&] {
        v.assign_add(constant(std::vector<double>{1, 2}, {2}));
      },
      absl::StatusCode::kInvalidArgument,
      "[AssignAddVariableOp] dtypes differ: float32 vs float64");
  const Tensor held = v.read_value();  // the copy-on-write path fails the same way
  expect(
      [&] {
        v.assign(constant({1, 2}));
      },
      absl::StatusCode::kInvalidArgument, "[AssignVariableOp] dtypes differ: float32 vs int32");
  EXPECT_EQ(values(v), (std::vector<float>{1.f, 2.f}));
}

TEST_F(VariableTest, EmptyVariableAndEmptyInitialValueAreErrors) {
  Variable empty;
  EXPECT_FALSE(empty.defined());
  expect([&] { empty.read_value(); }, absl::StatusCode::kFailedPrecondition,
         "[Variable] the variable is empty");
  expect([&] { empty.assign(constant(1.f)); }, absl::StatusCode::kFailedPrecondition,
         "[Variable] the variable is empty");
  expect([] { Variable v{Tensor()}; }, absl::StatusCode::kInvalidArgument,
         "[VarHandleOp] the initial value is an empty tensor");
}

TEST_F(VariableTest, MemoryIsCountedUntilTheVariableDies) {
  const Tensor initial = constant(std::vector<float>(1024, 1.f), {1024});  // 4 KiB
  const int64_t base = cpu_bytes();
  {
    Variable v(initial);
    EXPECT_EQ(cpu_bytes(), base + 4096);
    Variable copy = v;
    v.assign_add(initial);  // in place
    EXPECT_EQ(cpu_bytes(), base + 4096);
    {
      const Tensor held = v.read_value();
      v.assign_sub(initial);  // copy-on-write: two buffers while `held` lives
      EXPECT_EQ(cpu_bytes(), base + 2 * 4096);
    }
    EXPECT_EQ(cpu_bytes(), base + 4096);
  }
  EXPECT_EQ(cpu_bytes(), base);
}

}  // namespace
}  // namespace mt::testing
