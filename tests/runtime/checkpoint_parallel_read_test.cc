// read_checkpoint of data large enough for several reader threads (Note [Parallel restore]):
// tensors that end mid-piece come back byte for byte, and damage deep in a later piece of a
// tensor is DataLoss naming that tensor. With a RestorePlacement, each tensor is made on its
// variable's device (Note [Restoring onto devices]).
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/eager/device.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/minitensor.h"
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint.h"
#include "runtime/train/checkpoint_file_system.h"
#include "runtime/train/checkpoint_files.h"
#include "tests/runtime/checkpoint_fixture.h"

namespace mt::testing {
namespace {

using internal::NamedTensor;
using internal::posix_file_system;

class CheckpointParallelReadTest : public CheckpointTestBase {
 protected:
  // 30 MiB + 12 bytes of float32, 20 MiB of int64 and 5 MiB + 3 bools: 55 MiB in 9 pieces.
  std::vector<NamedTensor> tensors() const {
    std::vector<float> a((30 << 20) / 4 + 3);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 100003) * 0.5f;
    std::vector<int64_t> b((20 << 20) / 8);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int64_t>(i * 2654435761u);
    const size_t n = (5 << 20) + 3;
    auto c = std::make_unique<bool[]>(n);
    for (size_t i = 0; i < n; ++i) c[i] = (i % 3) == 0;
    return {{"a", constant(a, {static_cast<int64_t>(a.size())})},
            {"b", constant(b, {static_cast<int64_t>(b.size())})},
            {"c", internal::make_constant(DType::kBool, c.get(), n, {static_cast<int64_t>(n)})}};
  }
  std::string prefix() const { return dir_ + "/big"; }
};

bool same_bytes(const Tensor& x, const Tensor& y) {
  return x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(x.impl()->data, y.impl()->data, x.impl()->bytes()) == 0;
}

TEST_F(CheckpointParallelReadTest, ReadsTensorsEndingMidPieceByteForByte) {
  std::vector<NamedTensor> saved = tensors();
  ASSERT_TRUE(internal::write_checkpoint(posix_file_system(), prefix(), saved).ok());
  auto read = internal::read_checkpoint(posix_file_system(), prefix());
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  for (const NamedTensor& t : saved) EXPECT_TRUE(same_bytes(read->at(t.name), t.value)) << t.name;
}

TEST_F(CheckpointParallelReadTest, DamageInALaterPieceNamesItsTensor) {
  ASSERT_TRUE(internal::write_checkpoint(posix_file_system(), prefix(), tensors()).ok());
  const std::string data = prefix() + internal::kDataSuffix;
  std::string bytes = read(data);
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  bytes[8 + header + (30 << 20) + 12 + (17 << 20) + 5] ^= 0x10;  // 'b', its third piece
  write(data, bytes);
  auto read_back = internal::read_checkpoint(posix_file_system(), prefix());
  ASSERT_FALSE(read_back.ok());
  EXPECT_EQ(read_back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read_back.status().message(),
              ::testing::HasSubstr(".safetensors: tensor 'b': checksum mismatch (manifest 0x"));
}

// The POSIX file system, except that reads at or past `fail_from` fail.
class FailingReads : public internal::FileSystem {
 public:
  explicit FailingReads(uint64_t fail_from) : fail_from_(fail_from) {}
  absl::StatusOr<std::unique_ptr<internal::WritableFile>> open_for_write(
      const std::string& path) override {
    return fs_.open_for_write(path);
  }
  absl::StatusOr<std::unique_ptr<internal::ReadableFile>> open_for_read(
      const std::string& path) override {
    auto file = fs_.open_for_read(path);
    if (!file.ok()) return file.status();
    return std::unique_ptr<internal::ReadableFile>(new File(*std::move(file), fail_from_));
  }
  absl::Status rename(const std::string& a, const std::string& b) override {
    return fs_.rename(a, b);
  }
  absl::Status sync_dir(const std::string& dir) override { return fs_.sync_dir(dir); }
  absl::Status remove(const std::string& path) override { return fs_.remove(path); }
  bool exists(const std::string& path) override { return fs_.exists(path); }
  absl::Status make_dirs(const std::string& dir) override { return fs_.make_dirs(dir); }
  absl::StatusOr<std::vector<std::string>> list_dir(const std::string& dir) override {
    return fs_.list_dir(dir);
  }

 private:
  class File : public internal::ReadableFile {
   public:
    File(std::unique_ptr<internal::ReadableFile> file, uint64_t fail_from)
        : file_(std::move(file)), fail_from_(fail_from) {}
    uint64_t size() const override { return file_->size(); }
    absl::Status read_at(uint64_t offset, uint64_t size, char* dst) const override {
      if (offset + size > fail_from_) return absl::DataLossError("injected: the disk failed");
      return file_->read_at(offset, size, dst);
    }

   private:
    std::unique_ptr<internal::ReadableFile> file_;
    uint64_t fail_from_;
  };
  internal::FileSystem& fs_ = posix_file_system();
  uint64_t fail_from_;
};

TEST_F(CheckpointParallelReadTest, AFailedReadOfOnePieceFailsTheRestore) {
  ASSERT_TRUE(internal::write_checkpoint(posix_file_system(), prefix(), tensors()).ok());
  FailingReads fs(40 << 20);  // a piece of 'b'
  auto read_back = internal::read_checkpoint(fs, prefix());
  ASSERT_FALSE(read_back.ok());
  EXPECT_EQ(read_back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read_back.status().message(), ::testing::HasSubstr("injected: the disk failed"));
}

TEST_F(CheckpointParallelReadTest, TensorsAreMadeOnTheirVariablesDevices) {
  split_cpu(2);
  ASSERT_TRUE(internal::write_checkpoint(posix_file_system(), prefix(), tensors()).ok());
  Variable on_cpu1;
  {
    DeviceScope scope("/CPU:1");
    on_cpu1 = Variable(constant({1.f}), true, "v");
  }
  internal::RestorePlacement placement;
  placement.add("a", on_cpu1);            // by its name
  placement.add("opt/slots/c", on_cpu1);  // bools stay on CPU:0 all the same
  auto read_back = internal::read_checkpoint(posix_file_system(), prefix(), &placement);
  ASSERT_TRUE(read_back.ok()) << read_back.status();
  EXPECT_EQ(read_back->at("a").impl()->device->name(), cpu(1));
  EXPECT_EQ(read_back->at("b").impl()->device->name(), cpu(0));  // not placed
  EXPECT_EQ(read_back->at("c").impl()->device->name(), cpu(0));
  std::vector<NamedTensor> saved = tensors();
  EXPECT_TRUE(same_bytes(read_back->at("a"), saved[0].value));
  EXPECT_EQ(placement.find("opt/slots/c/0"), placement.find("opt/slots/c"));
  EXPECT_EQ(placement.find("opt/slots"), nullptr);
}

TEST_F(CheckpointParallelReadTest, ARestoreOntoAnotherDeviceTakesNoHostCopy) {
  split_cpu(2);
  const int64_t n = (24 << 20) / 4;  // 24 MiB, three pieces
  Variable w;
  {
    DeviceScope scope("/CPU:1");
    w = Variable(random::uniform({n}, -1, 1, DType::kFloat32, /*seed=*/5), true, "w");
  }
  train::Checkpoint ckpt;
  ckpt.track("w", w);
  ckpt.write(prefix());
  const std::vector<float> expected = w.read_value().to_vector<float>();
  w.assign(fill({n}, 0, DType::kFloat32));
  config::reset_memory_stats("CPU:0");
  const int64_t before = config::get_memory_info("CPU:0").current;
  ckpt.restore(prefix());
  // The tensor was read into CPU:1's pool and became w's buffer: CPU:0 never held it.
  EXPECT_LT(config::get_memory_info("CPU:0").peak - before, n * 4 / 2);
  EXPECT_EQ(w.read_value().to_vector<float>(), expected);
  EXPECT_NE(w.device().find("CPU:1"), std::string::npos);
}

}  // namespace
}  // namespace mt::testing
