// CUDA graphs of a CudaDevice (device.h's capture_graph, launch_graph, release_graph): a
// capture over one GPU or several, and its launch in order with every device's stream.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "runtime/cuda/capture_handles.h"
#include "runtime/cuda/cuda_device.h"

namespace mt::internal {

using cuda::cuda_check;

// Note [Graph capture]
// A capture records what kernels enqueue on a stream. It uses a stream of its own, with a
// cuBLAS handle bound to it and given a fixed workspace (so that cuBLAS allocates nothing
// while capturing), so that ops other threads run on this device meanwhile go to the
// device's stream as always and stay out of the graph. The graph is launched on the
// device's stream, in order with everything else there; the kernel scratch is the
// device's own, which that order keeps safe. cuDNN's convolutions work in the cuBLAS
// workspace, which the capture stream's order shares between the two libraries.
//
// Note [Graphs over several GPUs]
// A capture over several GPUs starts on the first device's capture stream; each other
// device's capture stream joins it by waiting for an event recorded there, so its kernels
// become nodes of the same graph, on their device. A copy between two devices makes the
// destination's stream wait for the source's, copies on the destination's stream, and
// makes the source's stream wait for the copy: the copy then comes after what either
// device computed before it and before what either computes after, as the flat replay's
// order promises the arena plan. At the end every joined stream joins back into the
// first, which ends the capture. A launch on the first device's stream first waits for
// what the other devices' streams hold, and they then wait for the launch, so the graph
// keeps its place in every device's stream order. CUDA refuses some device sets (no peer
// access between two cards, say); the capture then fails and the caller replays without it.
namespace {

constexpr size_t kCaptureWorkspaceBytes = size_t{32} << 20;
static_assert(kCaptureWorkspaceBytes >= cuda::kCudnnWorkspaceBytes);

// Makes `waiter` (a stream of physical device `waiter_device`) wait for what `stream` (of
// physical device `device`) holds so far, through an event kept in `events` (a capture
// needs it until the capture ends).
absl::Status wait_for(cudaStream_t waiter, int device, cudaStream_t stream,
                      std::vector<cuda::Event>* events) {
  cuda::ScopedDevice scoped(device);
  MT_RETURN_IF_ERROR(scoped.status());
  MT_ASSIGN_OR_RETURN(cuda::Event event, cuda::Event::create(cudaEventDisableTiming));
  MT_RETURN_IF_ERROR(cuda_check("cudaEventRecord", cudaEventRecord(event.get(), stream)));
  MT_RETURN_IF_ERROR(
      cuda_check("cudaStreamWaitEvent", cudaStreamWaitEvent(waiter, event.get(), 0)));
  events->push_back(std::move(event));
  return absl::OkStatus();
}

// What capture_graph returns: the executable graph and the devices it runs on, the first
// the one it launches on.
struct CapturedGraph {
  cudaGraphExec_t exec = nullptr;
  std::vector<CudaDevice*> devices;
};

}  // namespace

absl::StatusOr<CudaDevice::CaptureHandles*> CudaDevice::capture_handles() {
  if (capture_ != nullptr) return capture_.get();
  cuda::ScopedDevice scoped(state_.physical_device);
  MT_RETURN_IF_ERROR(scoped.status());
  auto h = std::make_unique<CaptureHandles>();
  MT_ASSIGN_OR_RETURN(h->stream, cuda::Stream::create());
  MT_ASSIGN_OR_RETURN(h->cublas, cuda::CublasHandle::create(h->stream.get()));
  MT_ASSIGN_OR_RETURN(h->workspace, cuda::DeviceBuffer::create(kCaptureWorkspaceBytes));
  if (cublasSetWorkspace(h->cublas.get(), h->workspace.get(), kCaptureWorkspaceBytes) !=
      CUBLAS_STATUS_SUCCESS) {
    return absl::InternalError("cublasSetWorkspace failed");
  }
  h->cudnn = cuda::make_cudnn_state(state_.physical_device, h->stream.get(), h->workspace.get());
  h->state = state_;
  h->state.stream = h->stream.get();
  h->state.cublas = h->cublas.get();
  h->state.blas = &h->blas;
  h->state.cudnn = h->cudnn.get();
  capture_ = std::move(h);
  return capture_.get();
}

// One capture in progress (Note [Graphs over several GPUs]). Holds every device's
// capture_mu_ for its lifetime.
class CudaGraphCapture final : public GraphCapture {
 public:
  // Locks the devices' capture handles, in address order (so two captures over
  // overlapping sets cannot deadlock), and makes them.
  static absl::StatusOr<std::unique_ptr<CudaGraphCapture>> open(std::vector<CudaDevice*> devices)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    auto capture = std::unique_ptr<CudaGraphCapture>(new CudaGraphCapture(std::move(devices)));
    std::vector<CudaDevice*> order = capture->devices_;
    std::sort(order.begin(), order.end());
    for (CudaDevice* d : order) {
      d->capture_mu_.lock();
      capture->locked_.push_back(d);
    }
    for (CudaDevice* d : capture->devices_) {
      MT_ASSIGN_OR_RETURN(CudaDevice::CaptureHandles * h, d->capture_handles());
      cuda::prepare_cudnn_state(h->cudnn.get());  // cudnnCreate may not run while capturing
      capture->handles_.push_back(h);
    }
    return capture;
  }
  ~CudaGraphCapture() override ABSL_NO_THREAD_SAFETY_ANALYSIS {
    for (CudaDevice* d : locked_) d->capture_mu_.unlock();
  }

  // Records everything `body` enqueues into one graph, instantiated and uploaded.
  absl::StatusOr<cudaGraphExec_t> record(const std::function<absl::Status(GraphCapture&)>& body) {
    cuda::ScopedDevice scoped(devices_[0]->physical_id());
    MT_RETURN_IF_ERROR(scoped.status());
    cudaStream_t origin = handles_[0]->stream.get();
    MT_RETURN_IF_ERROR(
        cuda_check("cudaStreamBeginCapture",
                   cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal)));
    joined_.assign(devices_.size(), false);
    joined_[0] = true;
    absl::Status status = body(*this);
    for (size_t i = 1; status.ok() && i < devices_.size(); ++i) {
      if (joined_[i]) status = wait_for(origin, devices_[i]->physical_id(), stream(i), &events_);
    }
    cudaGraph_t graph = nullptr;
    static_cast<void>(cudaSetDevice(devices_[0]->physical_id()));
    const cudaError_t ended = cudaStreamEndCapture(origin, &graph);
    if (status.ok()) status = cuda_check("cudaStreamEndCapture", ended);
    cudaGraphExec_t exec = nullptr;
    if (status.ok()) {
      status = cuda_check("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
    // The upload a first launch would make (about a millisecond for a small model's step),
    // made now, so that the first replay costs what the others do.
    if (status.ok()) {
      status = cuda_check("cudaGraphUpload", cudaGraphUpload(exec, devices_[0]->stream()));
    }
    if (!status.ok()) {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
      cudaGetLastError();  // a failed capture leaves no sticky error behind
      return status;
    }
    return exec;
  }

  absl::StatusOr<void*> kernel_state(Device& device) override {
    MT_ASSIGN_OR_RETURN(size_t i, join(device));
    return &handles_[i]->state;
  }

  absl::Status copy(Device& to, void* dst, Device& from, const void* src, size_t bytes) override {
    MT_ASSIGN_OR_RETURN(size_t t, join(to));
    MT_ASSIGN_OR_RETURN(size_t f, join(from));
    if (t != f) {
      MT_RETURN_IF_ERROR(wait_for(stream(t), devices_[f]->physical_id(), stream(f), &events_));
    }
    {
      cuda::ScopedDevice scoped(devices_[t]->physical_id());
      MT_RETURN_IF_ERROR(scoped.status());
      MT_RETURN_IF_ERROR(cuda_check(
          "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(t))));
    }
    if (t == f) return absl::OkStatus();
    return wait_for(stream(f), devices_[t]->physical_id(), stream(t), &events_);
  }

 private:
  explicit CudaGraphCapture(std::vector<CudaDevice*> devices) : devices_(std::move(devices)) {}

  cudaStream_t stream(size_t i) const { return handles_[i]->stream.get(); }

  // Returns the index of `device`, its stream joined to the capture.
  absl::StatusOr<size_t> join(Device& device) {
    const auto it = std::find(devices_.begin(), devices_.end(), &device);
    if (it == devices_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("[function] ", device.name(), " is not a device of this graph"));
    }
    const size_t i = static_cast<size_t>(it - devices_.begin());
    if (!joined_[i]) {
      MT_RETURN_IF_ERROR(wait_for(stream(i), devices_[0]->physical_id(), stream(0), &events_));
      joined_[i] = true;
    }
    return i;
  }

  std::vector<CudaDevice*> devices_;
  std::vector<CudaDevice*> locked_;
  std::vector<CudaDevice::CaptureHandles*> handles_;
  std::vector<bool> joined_;
  std::vector<cuda::Event> events_;  // the capture's cross-stream dependencies
};

absl::StatusOr<void*> CudaDevice::capture_graph(
    absl::Span<Device* const> others, const std::function<absl::Status(GraphCapture&)>& body) {
  std::vector<CudaDevice*> devices = {this};
  for (Device* other : others) {
    if (other->type() != DeviceType::kGPU || other->remote() != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("[function] ", other->name(), " is not a GPU of this process"));
    }
    auto* gpu = static_cast<CudaDevice*>(other);
    if (std::find(devices.begin(), devices.end(), gpu) == devices.end()) devices.push_back(gpu);
  }
  MT_ASSIGN_OR_RETURN(std::unique_ptr<CudaGraphCapture> capture, CudaGraphCapture::open(devices));
  MT_ASSIGN_OR_RETURN(cudaGraphExec_t exec, capture->record(body));
  return static_cast<void*>(new CapturedGraph{exec, std::move(devices)});
}

absl::Status CudaDevice::launch_graph(void* graph) {
  if (graph == nullptr) return absl::InvalidArgumentError("[function] no graph to launch");
  auto* g = static_cast<CapturedGraph*>(graph);
  std::vector<cuda::Event> events;
  for (size_t i = 1; i < g->devices.size(); ++i) {
    CudaDevice& other = *g->devices[i];
    MT_RETURN_IF_ERROR(wait_for(stream(), other.physical_id(), other.stream(), &events));
  }
  {
    cuda::ScopedDevice scoped(state_.physical_device);
    MT_RETURN_IF_ERROR(scoped.status());
    MT_RETURN_IF_ERROR(cuda_check("cudaGraphLaunch", cudaGraphLaunch(g->exec, stream())));
  }
  for (size_t i = 1; i < g->devices.size(); ++i) {
    CudaDevice& other = *g->devices[i];
    MT_RETURN_IF_ERROR(wait_for(other.stream(), physical_id(), stream(), &events));
  }
  return absl::OkStatus();
}

void CudaDevice::release_graph(void* graph) {
  if (graph == nullptr) return;
  auto* g = static_cast<CapturedGraph*>(graph);
  cuda::ScopedDevice scoped(state_.physical_device);
  // A launch still in flight is not cut short: CUDA frees the graph once it completes.
  cudaGraphExecDestroy(g->exec);
  delete g;
}

}  // namespace mt::internal
