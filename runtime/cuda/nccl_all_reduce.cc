// NCCL all-reduce across the GPUs of a MirroredStrategy (cross_device_ops.h).
//
// Note [Gradient buckets]
// A step's gradients are many tensors, some tiny (biases). One ncclAllReduce per tensor
// would pay NCCL's per-call latency for each, so consecutive values of one dtype are
// packed into a bucket of at most bucket_bytes (25 MiB by default, PyTorch DDP's
// bucket_cap_mb; TensorFlow packs into num_packs buffers): each value is copied into the
// bucket on its device's stream, the bucket is reduced in place, and the reduced values
// are copied out into tensors of their own. A value as large as a bucket is reduced alone,
// straight into its output, with no copies. All of it is enqueued on each GPU's own stream
// inside one NCCL group, so the host never waits for the device.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cuda/cuda_handles.h"
#include "core/status.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/nccl_library.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/strategy/cross_device_ops.h"
#include "runtime/trace/trace_recorder.h"

namespace mt::internal {
namespace {

using cuda::cuda_check;
using cuda::NcclCommHandle;
using cuda::NcclLibrary;

absl::StatusOr<int> nccl_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return cuda::kNcclFloat32;
    case DType::kFloat64:
      return cuda::kNcclFloat64;
    case DType::kFloat16:
      return cuda::kNcclFloat16;
    case DType::kBFloat16:
      return cuda::kNcclBfloat16;
    case DType::kInt32:
      return cuda::kNcclInt32;
    case DType::kInt64:
      return cuda::kNcclInt64;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("[NcclAllReduce] dtype ", dtype_name(dtype), " cannot be all-reduced"));
  }
}

// Consecutive values [begin, end) of one dtype reduced together.
struct Bucket {
  size_t begin = 0, end = 0;
  int64_t elements = 0;
};

std::vector<Bucket> make_buckets(const std::vector<Tensor>& values, int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t n = values[k].shape().num_elements();
    const int64_t bytes = n * static_cast<int64_t>(dtype_size(values[k].dtype()));
    Bucket* last = buckets.empty() ? nullptr : &buckets.back();
    const bool fits =
        last != nullptr && values[last->begin].dtype() == values[k].dtype() &&
        (last->elements + n) * static_cast<int64_t>(dtype_size(values[k].dtype())) <= bucket_bytes;
    if (fits && bytes < bucket_bytes) {
      last->end = k + 1;
      last->elements += n;
    } else {
      buckets.push_back({k, k + 1, n});
    }
  }
  return buckets;
}

class NcclAllReduce final : public CrossDeviceOps {
 public:
  NcclAllReduce(const NcclLibrary* nccl, std::vector<CudaDevice*> devices,
                std::vector<NcclCommHandle> comms, int64_t bucket_bytes)
      : nccl_(nccl),
        devices_(std::move(devices)),
        comms_(std::move(comms)),
        bucket_bytes_(bucket_bytes) {}
  ~NcclAllReduce() override {
    for (NcclCommHandle comm : comms_) nccl_->comm_destroy(comm);
  }

  const char* name() const override { return "NcclAllReduce"; }

  absl::StatusOr<PerReplicaValues> batch_all_reduce(distribute::ReduceOp op,
                                                    const PerReplicaValues& in) override {
    const size_t replicas = devices_.size();
    PerReplicaValues out(replicas);
    for (const Bucket& bucket : make_buckets(in[0], bucket_bytes_)) {
      MT_RETURN_IF_ERROR(reduce_bucket(op, in, bucket, out));
    }
    return out;
  }

 private:
  // Reduces values [bucket.begin, bucket.end) of every replica, appending them to `out`.
  absl::Status reduce_bucket(distribute::ReduceOp op, const PerReplicaValues& in,
                             const Bucket& bucket, PerReplicaValues& out) {
    const DType dtype = in[0][bucket.begin].dtype();
    MT_ASSIGN_OR_RETURN(int nccl_type, nccl_dtype(dtype));
    const int nccl_op = op == distribute::ReduceOp::kSum ? cuda::kNcclSum : cuda::kNcclAvg;
    const bool packed = bucket.end - bucket.begin > 1;
    const size_t element = dtype_size(dtype);
    std::vector<Tensor> buffers(devices_.size());
    for (size_t r = 0; r < devices_.size(); ++r) {
      CudaDevice& device = *devices_[r];
      cuda::ScopedDevice current(device.physical_id());
      MT_RETURN_IF_ERROR(current.status());
      const Tensor& first = in[r][bucket.begin];
      MT_ASSIGN_OR_RETURN(Shape flat, Shape::make({bucket.elements}));
      MT_ASSIGN_OR_RETURN(TensorImpl * buffer,
                          allocate_tensor(device, dtype, packed ? flat : first.shape()));
      buffers[r] = Tensor(buffer);
      if (!packed) continue;
      char* at = static_cast<char*>(buffer->data);
      for (size_t k = bucket.begin; k < bucket.end; ++k) {
        const TensorImpl* value = in[r][k].impl();
        if (value->bytes() == 0) continue;
        MT_RETURN_IF_ERROR(cuda_check("cudaMemcpyAsync",
                                      cudaMemcpyAsync(at, value->data, value->bytes(),
                                                      cudaMemcpyDeviceToDevice, device.stream())));
        at += value->bytes();
      }
    }
    if (bucket.elements > 0) {
      std::vector<void*> marks(devices_.size(), nullptr);  // the trace's, when one records
      if (tracing()) {
        for (size_t r = 0; r < devices_.size(); ++r) marks[r] = devices_[r]->record_mark();
      }
      MT_RETURN_IF_ERROR(nccl_->check("ncclGroupStart", nccl_->group_start()));
      absl::Status status;
      for (size_t r = 0; r < devices_.size() && status.ok(); ++r) {
        const void* send = packed ? buffers[r].impl()->data : in[r][bucket.begin].impl()->data;
        status = nccl_->check(
            "ncclAllReduce",
            nccl_->all_reduce(send, buffers[r].impl()->data, static_cast<size_t>(bucket.elements),
                              nccl_type, nccl_op, comms_[r], devices_[r]->stream()));
      }
      MT_RETURN_IF_ERROR(nccl_->check("ncclGroupEnd", nccl_->group_end()));
      MT_RETURN_IF_ERROR(status);
      for (size_t r = 0; r < devices_.size() && marks[r] != nullptr; ++r) {
        trace_collective(
            *devices_[r], bucket.elements * static_cast<int64_t>(element),
            absl::StrCat(distribute::reduce_op_name(op), " of ", bucket.end - bucket.begin,
                         " values (", dtype_name(dtype), ") over ", devices_.size(), " GPUs"),
            marks[r], devices_[r]->record_mark());
      }
    }
    for (size_t r = 0; r < devices_.size(); ++r) {
      if (!packed) {
        out[r].push_back(std::move(buffers[r]));
        continue;
      }
      MT_RETURN_IF_ERROR(unpack(r, buffers[r], in[r], bucket, element, out[r]));
    }
    return absl::OkStatus();
  }

  // Copies the reduced values out of replica r's bucket into tensors of their own.
  absl::Status unpack(size_t r, const Tensor& buffer, const std::vector<Tensor>& like,
                      const Bucket& bucket, size_t element, std::vector<Tensor>& out) {
    CudaDevice& device = *devices_[r];
    cuda::ScopedDevice current(device.physical_id());
    MT_RETURN_IF_ERROR(current.status());
    const char* at = static_cast<const char*>(buffer.impl()->data);
    for (size_t k = bucket.begin; k < bucket.end; ++k) {
      MT_ASSIGN_OR_RETURN(TensorImpl * value,
                          allocate_tensor(device, like[k].dtype(), like[k].shape()));
      out.push_back(Tensor(value));
      const size_t bytes = static_cast<size_t>(like[k].shape().num_elements()) * element;
      if (bytes == 0) continue;
      MT_RETURN_IF_ERROR(cuda_check(
          "cudaMemcpyAsync",
          cudaMemcpyAsync(value->data, at, bytes, cudaMemcpyDeviceToDevice, device.stream())));
      at += bytes;
    }
    return absl::OkStatus();
  }

  const NcclLibrary* nccl_;
  std::vector<CudaDevice*> devices_;
  std::vector<NcclCommHandle> comms_;
  int64_t bucket_bytes_;
};

// Note [NCCL's memory before the pools]
// NCCL allocates device memory at ncclCommInitAll and again at the first collective it
// enqueues. A GPU's default pool reserves the card's free memory less 1 GiB at its first
// allocation (Note [Default GPU pool size] in gpu_backend.cc); on two H200s (NCCL 2.28.9)
// the strategy's first all-reduce then failed with "unhandled cuda error" (NCCL: out of
// memory), while pools in growth mode left room. So the strategy runs one tiny all-reduce
// as soon as the communicators exist, on buffers of its own, and waits for it: NCCL then
// holds what it needs before the pools' first allocations (a strategy made before any
// tensor, as the guide makes it), and a pool that finds less free memory than its limit
// takes what is left.
absl::Status warm_up(const NcclLibrary& nccl, const std::vector<CudaDevice*>& gpus,
                     const std::vector<NcclCommHandle>& comms) {
  constexpr size_t kCount = 64;
  std::vector<cuda::DeviceBuffer> buffers;
  for (CudaDevice* gpu : gpus) {
    cuda::ScopedDevice scoped(gpu->physical_id());
    MT_RETURN_IF_ERROR(scoped.status());
    MT_ASSIGN_OR_RETURN(cuda::DeviceBuffer buffer,
                        cuda::DeviceBuffer::create(kCount * sizeof(float)));
    MT_RETURN_IF_ERROR(
        cuda_check("cudaMemsetAsync",
                   cudaMemsetAsync(buffer.get(), 0, kCount * sizeof(float), gpu->stream())));
    buffers.push_back(std::move(buffer));
  }
  nccl.group_start();
  absl::Status status = absl::OkStatus();
  for (size_t i = 0; i < gpus.size(); ++i) {
    absl::Status s =
        nccl.check("ncclAllReduce",
                   nccl.all_reduce(buffers[i].get(), buffers[i].get(), kCount, cuda::kNcclFloat32,
                                   cuda::kNcclSum, comms[i], gpus[i]->stream()));
    if (status.ok()) status = s;
  }
  absl::Status ended = nccl.check("ncclGroupEnd", nccl.group_end());
  if (status.ok()) status = ended;
  for (CudaDevice* gpu : gpus) {
    cuda::ScopedDevice scoped(gpu->physical_id());
    absl::Status synced = cuda_check("cudaStreamSynchronize", cudaStreamSynchronize(gpu->stream()));
    if (status.ok()) status = synced;
  }
  return status;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CrossDeviceOps>> make_nccl_all_reduce(
    const std::vector<Device*>& devices, int64_t bucket_bytes) {
  MT_ASSIGN_OR_RETURN(const NcclLibrary* nccl, cuda::nccl_library());
  std::vector<CudaDevice*> gpus;
  std::vector<int> ordinals;
  for (Device* device : devices) {
    auto* gpu = dynamic_cast<CudaDevice*>(device);
    if (gpu == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("NCCL all-reduce needs local GPUs; ", device->name(), " is not one"));
    }
    gpus.push_back(gpu);
    ordinals.push_back(gpu->physical_id());
  }
  std::vector<NcclCommHandle> comms(gpus.size());
  absl::Status status = nccl->check(
      "ncclCommInitAll",
      nccl->comm_init_all(comms.data(), static_cast<int>(comms.size()), ordinals.data()));
  if (!status.ok()) return absl::FailedPreconditionError(status.message());
  status = warm_up(*nccl, gpus, comms);
  if (!status.ok()) {
    for (NcclCommHandle comm : comms) nccl->comm_destroy(comm);
    return absl::FailedPreconditionError(
        absl::StrCat("NCCL's first all-reduce failed: ", status.message()));
  }
  return std::unique_ptr<CrossDeviceOps>(
      new NcclAllReduce(nccl, std::move(gpus), std::move(comms), bucket_bytes));
}

}  // namespace mt::internal
