// Writes the seed corpora of the wire fuzz targets: small valid request sequences (and a
// few that must fail) in the frame format of wire_frames.h, one file each, into
//   <dir>/worker_request/<name>  and  <dir>/enqueue_stream/<name>
// Run from the fuzz build as `write_wire_seeds fuzz/corpus` after a change to worker.proto
// or to the frame format; the files are committed.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "distributed/tensor_codec.h"
#include "distributed/worker.pb.h"
#include "fuzz/wire_frames.h"
#include "kernels/op_id.h"

namespace mt::fuzz {
namespace {

namespace proto = mt::distributed::proto;

// The request fuzzer's tags (worker_request_fuzzer.cc).
enum Tag : uint8_t { kDevices, kRunOp, kFetch, kBulkFetch, kDelete, kMemoryInfo, kUpload };

template <typename T>
proto::TensorValue value(DType dtype, std::vector<int64_t> dims, std::vector<T> elements) {
  proto::TensorValue v;
  v.set_dtype(static_cast<int>(dtype));
  for (int64_t d : dims) v.add_dims(d);
  v.set_data(
      std::string(reinterpret_cast<const char*>(elements.data()), elements.size() * sizeof(T)));
  return v;
}

proto::RunOpRequest op(OpId id, const OpAttrs& attrs = {}, int device = 0) {
  proto::RunOpRequest r;
  r.set_op(static_cast<int>(id));
  r.set_device(device);
  distributed::internal::encode_attrs(attrs, r.mutable_attrs());
  return r;
}

proto::RunOpRequest on(OpId id, std::vector<uint64_t> handles, const OpAttrs& attrs = {}) {
  proto::RunOpRequest r = op(id, attrs);
  for (uint64_t h : handles) r.add_inputs()->set_handle(h);
  return r;
}

proto::RunOpRequest constant(proto::TensorValue v, int device = 0) {
  proto::RunOpRequest r = op(OpId::kEagerConst, {}, device);
  *r.mutable_source() = std::move(v);
  return r;
}

proto::RunOpRequest fill(DType dtype, std::vector<int64_t> dims, OpAttrs attrs, int device = 0) {
  proto::RunOpRequest r = op(OpId::kFill, attrs, device);
  r.mutable_source()->set_dtype(static_cast<int>(dtype));
  for (int64_t d : dims) r.mutable_source()->add_dims(d);
  return r;
}

std::string fetch(uint64_t handle) {
  proto::FetchRequest r;
  r.set_handle(handle);
  return r.SerializeAsString();
}

std::string deletes(std::vector<uint64_t> handles) {
  proto::DeleteRequest r;
  for (uint64_t h : handles) r.add_handles(h);
  return r.SerializeAsString();
}

std::string memory_info(int device) {
  proto::MemoryInfoRequest r;
  r.set_device(device);
  return r.SerializeAsString();
}

// An Upload's first message: float32 of `dims` to be kept as `handle`.
std::string upload_header(uint64_t handle, std::vector<int64_t> dims) {
  proto::UploadRequest r;
  r.set_handle(handle);
  r.mutable_value()->set_dtype(static_cast<int>(DType::kFloat32));
  for (int64_t d : dims) r.mutable_value()->add_dims(d);
  return r.SerializeAsString();
}

// An Enqueue message: `op` (when set) under `handle`, then `freed`, then `fetched`.
std::string message(uint64_t seq, const proto::RunOpRequest* op, uint64_t handle,
                    std::vector<uint64_t> freed = {}, uint64_t fetched = 0) {
  proto::EnqueueRequest m;
  m.set_seq(seq);
  if (op != nullptr) {
    *m.mutable_op() = *op;
    m.mutable_op()->set_handle(handle);
  }
  for (uint64_t h : freed) m.add_deletes(h);
  m.set_fetch(fetched);
  return m.SerializeAsString();
}

struct Seed {
  const char* name;
  std::string (*bytes)();
};

template <size_t N>
void write(const std::filesystem::path& dir, const Seed (&seeds)[N]) {
  std::filesystem::create_directories(dir);
  for (const Seed& seed : seeds) std::ofstream(dir / seed.name, std::ios::binary) << seed.bytes();
}

// The request fuzzer's seeds, each a short session of calls.
std::string devices_and_memory() {
  std::string s;
  append_frame(&s, kDevices, proto::GetDevicesRequest().SerializeAsString());
  for (int device : {0, 1, 9}) append_frame(&s, kMemoryInfo, memory_info(device));
  return s;
}

std::string constants_add_fetch() {
  std::string s;
  append_frame(&s, kRunOp,
               constant(value<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4})).SerializeAsString());
  append_frame(&s, kRunOp,
               constant(value<float>(DType::kFloat32, {2}, {10, 20})).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kAddV2, {1, 2}).SerializeAsString());
  append_frame(&s, kFetch, fetch(3));
  append_frame(&s, kBulkFetch, fetch(3));
  append_frame(&s, kDelete, deletes({1}));
  return s;
}

std::string matmul_inline_values() {
  std::string s;
  OpAttrs transposed;
  transposed.transpose_b = true;
  proto::RunOpRequest matmul = op(OpId::kMatMul, transposed);
  *matmul.add_inputs()->mutable_value() = value<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  *matmul.add_inputs()->mutable_value() = value<float>(DType::kFloat32, {2, 3}, {6, 5, 4, 3, 2, 1});
  append_frame(&s, kRunOp, matmul.SerializeAsString());
  append_frame(&s, kFetch, fetch(1));
  return s;
}

std::string fill_reduce_on_cpu1() {
  std::string s;
  OpAttrs seven;
  seven.value = {7, 7, true};
  append_frame(&s, kRunOp, fill(DType::kInt32, {3, 4}, seven, 1).SerializeAsString());
  OpAttrs rows;
  rows.axes = {1};
  rows.keep_dims = true;
  append_frame(&s, kRunOp, on(OpId::kSum, {1}, rows).SerializeAsString());
  OpAttrs axis;
  axis.axis = 0;
  axis.dst_dtype = DType::kInt64;  // ArgMax's output_type
  append_frame(&s, kRunOp, on(OpId::kArgMax, {1}, axis).SerializeAsString());
  append_frame(&s, kFetch, fetch(2));
  append_frame(&s, kMemoryInfo, memory_info(1));
  return s;
}

std::string upload_neg() {
  std::string s;
  append_frame(&s, kUpload | 1 << 3, upload_header(1000, {4}));
  const float four[] = {1, -2, 3, -4};
  append_frame(&s, 0, std::string(reinterpret_cast<const char*>(four), sizeof(four)));
  append_frame(&s, kRunOp, on(OpId::kNeg, {1000}).SerializeAsString());
  append_frame(&s, kBulkFetch, fetch(1000));
  append_frame(&s, kFetch, fetch(2));
  return s;
}

std::string strided_slice_cast_transpose() {
  std::string s;
  append_frame(
      &s, kRunOp,
      constant(value<int64_t>(DType::kInt64, {4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))
          .SerializeAsString());
  OpAttrs slice;
  slice.dims = {0, 0};
  slice.dims2 = {4, 3};
  slice.dims3 = {2, -1};
  slice.begin_mask = 2;
  slice.end_mask = 2;
  append_frame(&s, kRunOp, on(OpId::kStridedSlice, {1}, slice).SerializeAsString());
  OpAttrs cast;
  cast.dst_dtype = DType::kFloat16;
  append_frame(&s, kRunOp, on(OpId::kCast, {2}, cast).SerializeAsString());
  OpAttrs perm;
  perm.dims = {1, 0};
  append_frame(&s, kRunOp, on(OpId::kTranspose, {1}, perm).SerializeAsString());
  OpAttrs shape;
  shape.dims = {2, -1};
  append_frame(&s, kRunOp, on(OpId::kReshape, {4}, shape).SerializeAsString());
  append_frame(&s, kFetch, fetch(5));
  return s;
}

std::string random_ops() {
  std::string s;
  OpAttrs random;
  random.philox.key.word[0] = 42;
  random.philox.counter.word[1] = 7;
  random.minval = {-1, -5, false};
  random.maxval = {1, 5, false};
  proto::RunOpRequest uniform = fill(DType::kFloat32, {8}, random);
  uniform.set_op(static_cast<int>(OpId::kStatelessRandomUniformV2));
  append_frame(&s, kRunOp, uniform.SerializeAsString());
  proto::RunOpRequest ints = fill(DType::kInt64, {3, 2}, random);
  ints.set_op(static_cast<int>(OpId::kRandomUniformInt));
  append_frame(&s, kRunOp, ints.SerializeAsString());
  append_frame(&s, kFetch, fetch(2));
  return s;
}

std::string variables_adam() {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    append_frame(&s, kRunOp,
                 constant(value<float>(DType::kFloat32, {3}, {1, 2, 3})).SerializeAsString());
  }
  append_frame(&s, kRunOp,
               constant(value<float>(DType::kFloat32, {}, {0.1f})).SerializeAsString());  // lr_t
  append_frame(&s, kRunOp, on(OpId::kAssignAddVariableOp, {1, 2}).SerializeAsString());
  OpAttrs adam;
  adam.beta_1 = 0.9;
  adam.beta_2 = 0.999;
  adam.epsilon = 1e-7;
  append_frame(&s, kRunOp, on(OpId::kResourceApplyAdam, {1, 2, 3, 4, 5}, adam).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kReadVariableOp, {1}).SerializeAsString());
  append_frame(&s, kFetch, fetch(1));
  return s;
}

std::string concat_gather_one_hot_select() {
  std::string s;
  append_frame(&s, kRunOp,
               constant(value<int32_t>(DType::kInt32, {3}, {2, 0, 1})).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kConcatV2, {1, 1}).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kGatherV2, {2, 1}).SerializeAsString());
  OpAttrs hot;
  hot.depth = 3;
  hot.value = {1, 1, true};
  hot.dst_dtype = DType::kFloat32;
  append_frame(&s, kRunOp, on(OpId::kOneHot, {1}, hot).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kAddN, {1, 3, 1}).SerializeAsString());
  OpAttrs three;
  three.num_split = 3;
  append_frame(&s, kRunOp, on(OpId::kSplitV, {1}, three).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kLess, {1, 3}).SerializeAsString());
  append_frame(&s, kRunOp, on(OpId::kSelectV2, {6, 1, 3}).SerializeAsString());
  return s;
}

std::string errors() {
  std::string s;
  append_frame(&s, kRunOp, op(static_cast<OpId>(200)).SerializeAsString());
  append_frame(&s, kRunOp,
               constant(value<float>(DType::kFloat32, {2}, {1}), -1).SerializeAsString());
  append_frame(&s, kRunOp, constant(value<float>(DType::kFloat32, {2}, {1})).SerializeAsString());
  append_frame(&s, kRunOp,
               constant(value<float>(static_cast<DType>(99), {1}, {1})).SerializeAsString());
  append_frame(&s, kRunOp, constant(value<float>(DType::kFloat32, {-1}, {})).SerializeAsString());
  append_frame(&s, kFetch, fetch(123456789));
  append_frame(&s, kUpload, upload_header(0, {4}));  // no handle
  append_frame(&s, kDelete, deletes({5, 99999}));
  return s;
}

constexpr Seed kRequestSeeds[] = {
    {"devices-and-memory", devices_and_memory},
    {"constants-add-fetch", constants_add_fetch},
    {"matmul-inline-values", matmul_inline_values},
    {"fill-reduce-on-cpu1", fill_reduce_on_cpu1},
    {"upload-neg", upload_neg},
    {"strided-slice-cast-transpose", strided_slice_cast_transpose},
    {"random-ops", random_ops},
    {"variables-adam", variables_adam},
    {"concat-gather-one-hot-select", concat_gather_one_hot_select},
    {"errors", errors},
};

// The stream fuzzer's seeds.
proto::RunOpRequest two_by_two() {
  return constant(value<float>(DType::kFloat32, {2, 2}, {1, 2, 3, 4}));
}

std::string constant_add_fetch_free() {
  const proto::RunOpRequest c = two_by_two();
  const proto::RunOpRequest add = on(OpId::kAddV2, {7, 7});
  std::string s;
  append_frame(&s, 0, message(1, &c, 7));
  append_frame(&s, 0, message(2, &add, 8, {}, 8));
  append_frame(&s, 1, message(3, nullptr, 0, {7}, 8));  // the stream ends here
  append_frame(&s, 3, message(1, nullptr, 0, {8}));
  return s;
}

std::string error_ends_stream() {
  const proto::RunOpRequest c = two_by_two();
  std::string s;
  append_frame(&s, 0, message(1, &c, 0));  // no handle: the stream ends with the error
  append_frame(&s, 1, message(2, &c, 5));
  append_frame(&s, 0, message(1, &c, 5));
  append_frame(&s, 1, message(2, nullptr, 0, {}, 5));
  return s;
}

std::string handle_in_use() {
  const proto::RunOpRequest c = two_by_two();
  std::string s;
  append_frame(&s, 0, message(1, &c, 9));
  append_frame(&s, 1, message(2, &c, 9));  // AlreadyExists
  return s;
}

std::string fill_mean_transpose_on_cpu1() {
  std::string s;
  OpAttrs three;
  three.value = {3, 3, false};
  const proto::RunOpRequest f = fill(DType::kInt64, {2, 3}, three, 1);
  OpAttrs first;
  first.axes = {0};
  first.keep_dims = true;
  proto::RunOpRequest mean = on(OpId::kMean, {20}, first);
  mean.set_device(1);
  OpAttrs perm;
  perm.dims = {1, 0};
  const proto::RunOpRequest transpose = on(OpId::kTranspose, {21}, perm);
  append_frame(&s, 0, message(1, &f, 20));
  append_frame(&s, 0, message(2, &mean, 21, {}, 21));
  append_frame(&s, 0, message(3, &transpose, 22, {20}, 22));
  append_frame(&s, 1, message(4, nullptr, 0, {21, 22}, 20));  // 20 is freed: NotFound
  return s;
}

std::string variable_assign_read() {
  const proto::RunOpRequest c = two_by_two();
  std::string s;
  const proto::RunOpRequest assign = on(OpId::kAssignSubVariableOp, {30, 31});
  const proto::RunOpRequest read = on(OpId::kReadVariableOp, {30});
  append_frame(&s, 0, message(1, &c, 30));
  append_frame(&s, 0, message(2, &c, 31));
  append_frame(&s, 0, message(3, &assign, 32));
  append_frame(&s, 1, message(4, &read, 33, {31}, 33));
  return s;
}

constexpr Seed kStreamSeeds[] = {
    {"constant-add-fetch-free", constant_add_fetch_free},
    {"error-ends-stream", error_ends_stream},
    {"handle-in-use", handle_in_use},
    {"fill-mean-transpose-on-cpu1", fill_mean_transpose_on_cpu1},
    {"variable-assign-read", variable_assign_read},
};

}  // namespace
}  // namespace mt::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_wire_seeds <corpus dir, e.g. fuzz/corpus>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  mt::fuzz::write(dir / "worker_request", mt::fuzz::kRequestSeeds);
  mt::fuzz::write(dir / "enqueue_stream", mt::fuzz::kStreamSeeds);
  return 0;
}
