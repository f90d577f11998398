// mt::train::Checkpoint: variables, optimizer state and scalars round-trip exactly; every
// damaged file is a clear error that changes no variable.
#include "runtime/train/checkpoint.h"

#include "runtime/eager/tensor_impl.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/train/checkpoint_files.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

using absl::StatusCode;

class CheckpointTest : public CheckpointTestBase {
 protected:
  // A model of two variables of different dtypes, an Adam with two steps taken, a scalar.
  struct Model {
    Variable w{constant({{1.f, 2.f}, {3.f, 4.f}}), true, "w"};
    Variable h{constant({1.5f, -2.f}, {2}, DType::kBFloat16), true, "h"};
    optimizers::Adam adam{0.1};
    int64_t epoch = 7;
    double loss = 0.25;
    train::Checkpoint ckpt;
    Model() {
      ckpt.track("model/w", w);
      ckpt.track("model/h", h);
      ckpt.track("optimizer", adam);
      ckpt.track("epoch", epoch);
      ckpt.track("loss", loss);
    }
    void step() { adam.apply_gradients({{constant({{1.f, 1.f}, {1.f, 1.f}}), w}}); }
  };
  std::string prefix() const { return dir_ + "/ckpt-1"; }
};

std::vector<float> floats(const Variable& v) { return v.read_value().to_vector<float>(); }

TEST_F(CheckpointTest, RestoresVariablesOptimizerStateAndScalars) {
  Model saved;
  saved.step();
  saved.step();
  saved.ckpt.write(prefix());
  Model restored;
  restored.ckpt.restore(prefix());
  EXPECT_EQ(floats(restored.w), floats(saved.w));
  EXPECT_EQ(static_cast<float>(restored.h.read_value().to_vector<bfloat16>()[1]), -2.f);
  EXPECT_EQ(restored.adam.iterations(), 2);
  EXPECT_EQ(restored.epoch, 7);
  EXPECT_EQ(restored.loss, 0.25);
  ASSERT_EQ(restored.adam.slot_variables(restored.w).size(), 2u);
  EXPECT_EQ(floats(restored.adam.slot_variables(restored.w)[1]),
            floats(saved.adam.slot_variables(saved.w)[1]));
  // The next step of both is the same step.
  saved.step();
  restored.step();
  EXPECT_EQ(floats(restored.w), floats(saved.w));
}

TEST_F(CheckpointTest, RejectsATrackedNameTwiceAndEmptyVariables) {
  Model m;
  expect_error([&] { m.ckpt.track("model/w", m.h); }, StatusCode::kInvalidArgument,
               "[checkpoint] the name 'model/w' is tracked twice");
  expect_error([&] { m.ckpt.track("v", Variable()); }, StatusCode::kInvalidArgument,
               "[checkpoint] variable 'v' is empty");
}

TEST_F(CheckpointTest, MissingCheckpointIsNotFound) {
  Model m;
  expect_error([&] { m.ckpt.restore(dir_ + "/nothing"); }, StatusCode::kNotFound,
               "[checkpoint] no checkpoint at " + dir_ + "/nothing (" + dir_ +
                   "/nothing.manifest does not exist)");
}

TEST_F(CheckpointTest, MismatchedOrMissingTensorChangesNothing) {
  Model saved;
  saved.ckpt.write(prefix());
  Model other;
  Variable bigger(constant({1.f, 2.f, 3.f}), true, "b");
  other.w.assign(constant({{9.f, 9.f}, {9.f, 9.f}}));
  train::Checkpoint c1;
  c1.track("model/w", other.w);
  c1.track("model/h", bigger);
  expect_error([&] { c1.restore(prefix()); }, StatusCode::kInvalidArgument,
               "tensor 'model/h' is bfloat16 (2,), the program's float32 (3,)");
  train::Checkpoint c2;
  c2.track("model/w", other.w);
  c2.track("model/extra", bigger);
  expect_error([&] { c2.restore(prefix()); }, StatusCode::kNotFound, "has no tensor 'model/extra'");
  EXPECT_EQ(floats(other.w), std::vector<float>(4, 9.f));  // nothing half-assigned
}

// Writes a checkpoint, damages it with `damage`, and expects restore to fail with `code`
// and `text` without changing the variable.
class DamagedCheckpointTest : public CheckpointTest {
 protected:
  template <typename Damage>
  void expect_damage(Damage damage, StatusCode code, const std::string& text) {
    Model saved;
    saved.ckpt.write(prefix());
    damage(prefix() + ".safetensors", prefix() + ".manifest");
    Model m;
    m.w.assign(constant({{5.f, 5.f}, {5.f, 5.f}}));
    expect_error([&] { m.ckpt.restore(prefix()); }, code, text);
    EXPECT_EQ(floats(m.w), std::vector<float>(4, 5.f));
  }
};

TEST_F(DamagedCheckpointTest, TruncatedDataIsDataLoss) {
  expect_damage(
      [](const std::string& data, const std::string&) {
        std::string bytes = read(data);
        write(data, bytes.substr(0, bytes.size() - 3));
      },
      StatusCode::kDataLoss, "bytes, the manifest says");
}

TEST_F(DamagedCheckpointTest, BitFlipInWNamesW) {
  expect_damage(
      [](const std::string& data, const std::string&) {
        std::string bytes = read(data);
        size_t header = static_cast<unsigned char>(bytes[0]) | static_cast<unsigned char>(bytes[1])
                                                                   << 8;
        bytes[8 + header + 5] ^= 0x01;  // model/w is the first tensor
        write(data, bytes);
      },
      StatusCode::kDataLoss, ".safetensors: tensor 'model/w': checksum mismatch (manifest 0x");
}

TEST_F(DamagedCheckpointTest, BitFlipInTheHeaderIsDataLoss) {
  expect_damage(
      [](const std::string& data, const std::string&) {
        std::string bytes = read(data);
        bytes[20] ^= 0x01;
        write(data, bytes);
      },
      StatusCode::kDataLoss, "the header's checksum does not match");
}

TEST_F(DamagedCheckpointTest, WrongHeaderLengthIsDataLoss) {
  expect_damage(
      [](const std::string& data, const std::string&) {
        std::string bytes = read(data);
        bytes[6] = 1;
        write(data, bytes);
      },
      StatusCode::kDataLoss, "(at most 100000000)");
}

TEST_F(DamagedCheckpointTest, ManifestNamingAMissingFileIsDataLoss) {
  expect_damage([](const std::string& data, const std::string&) { std::filesystem::remove(data); },
                StatusCode::kDataLoss, "ckpt-1.manifest: its data file");
}

TEST_F(DamagedCheckpointTest, BitFlipOrTruncationOfTheManifestIsDataLoss) {
  expect_damage(
      [](const std::string&, const std::string& manifest) {
        std::string bytes = read(manifest);
        bytes[30] ^= 0x04;
        write(manifest, bytes);
      },
      StatusCode::kDataLoss, "the manifest's checksum does not match");
  expect_damage(
      [](const std::string&, const std::string& manifest) {
        std::string bytes = read(manifest);
        write(manifest, bytes.substr(0, bytes.size() / 2));
      },
      StatusCode::kDataLoss, "the manifest is cut short (no checksum line)");
}

TEST_F(CheckpointTest, TensorsOpenAsPlainSafetensors) {
  Model m;
  m.ckpt.write(prefix());
  std::string bytes = read(prefix() + ".safetensors");
  EXPECT_THAT(bytes, ::testing::HasSubstr(
                         R"("model/w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]})"));
  EXPECT_THAT(bytes, ::testing::HasSubstr(R"("optimizer/iterations":{"dtype":"I64","shape":[])"));
  EXPECT_THAT(bytes, ::testing::HasSubstr(R"("model/h":{"dtype":"BF16")"));
}

// A CPU variable takes the tensor read from the file as its buffer (no second copy); a
// value read before the restore keeps what it held, and later assignments are the
// variable's alone.
TEST_F(CheckpointTest, RestoreTakesTheReadBufferAndKeepsHeldValues) {
  Model saved;
  saved.ckpt.write(prefix());
  Model restored;
  restored.w.assign(constant({{9.f, 9.f}, {9.f, 9.f}}));
  Tensor before = restored.w.read_value();
  const void* old_buffer = restored.w.state()->value.impl()->data;
  restored.ckpt.restore(prefix());
  EXPECT_NE(restored.w.state()->value.impl()->data, old_buffer);
  EXPECT_EQ(floats(restored.w), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{9.f, 9.f, 9.f, 9.f}));
  Tensor after = restored.w.read_value();
  restored.w.assign_add(constant({{1.f, 1.f}, {1.f, 1.f}}));
  EXPECT_EQ(after.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(floats(restored.w), (std::vector<float>{2.f, 3.f, 4.f, 5.f}));
}

}  // namespace
}  // namespace mt::testing
