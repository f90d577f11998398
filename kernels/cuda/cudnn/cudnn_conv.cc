#include "kernels/cuda/cudnn/cudnn_conv.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "core/cuda/cuda_handles.h"
#include "core/mutex.h"
#include "core/status.h"
#include "kernels/cuda/cudnn/cudnn_library.h"
#include "kernels/cuda/cudnn/filter_layout.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_options.h"

namespace mt::cuda {

// Note [When cuDNN runs a convolution]
// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter try cuDNN first and run their own
// direct kernels when it cannot take the call, so every shape runs on a machine without
// cuDNN and the results agree either way (tests/runtime/cuda/gpu_conv_test.cc runs each
// shape both ways). cuDNN takes a call when:
// - it loads (9.0 or later) and MT_CUDNN is not 0;
// - cuDNN's symmetric padding gives the geometry's output size. TensorFlow's SAME puts an
//   odd extra row after the input, and explicit padding may differ before and after; with
//   the padding before on both sides cuDNN reads the same windows exactly when it counts
//   the same outputs (a window of ours never reaches past the padding before + the input +
//   the padding before), so that equality is the test;
// - every size is positive and every tensor has fewer than 2^31 elements (cuDNN's
//   descriptors hold ints);
// - its heuristics offer a deterministic algorithm whose workspace fits in
//   kCudnnWorkspaceBytes: a state's own workspace grows to that, a graph capture's is the
//   capture's cuBLAS workspace (Note [Graph capture]). The same limit eager and captured
//   and deterministic algorithms only (as the direct kernels, which use no atomics) make
//   a replay equal the eager run bit for bit, and one run equal the next.
// float32 runs in IEEE float (CUDNN_FMA_MATH) unless TensorFloat-32 is enabled, as
// MatMul; the 2-byte floats on tensor cores, accumulating in float32; float64 in float64.
// The filter is HWIO and cuDNN's KRSC or KCRS, so the forward and input-gradient passes
// first write the filter in cuDNN's layout into the workspace, and the filter-gradient
// pass writes cuDNN's layout there and then ours into the output (filter_layout.h).

// Note [Non-finite values over cuDNN's padding]
// cuDNN multiplies the zeros of the padding like any other value, so an infinite or NaN
// weight on a tap that falls in the padding (or, for the filter's gradient, an infinite
// output gradient there) gives NaN, where the CPU kernels and the direct GPU kernels skip
// the tap as TensorFlow's CPU kernels do (Note [Padding never multiplies] in
// kernels/cpu/conv_kernels.cc) and give the sum of the other taps. The CPU checks its
// filter's values on the host before choosing; on a GPU that check would wait for the
// device at every convolution, so the difference stays, as on TensorFlow's and PyTorch's
// GPUs: both results are non-finite wherever a non-finite value is multiplied, and only the
// outputs whose windows reach the padding differ (NaN for a finite sum or an infinity).
// MT_CUDNN=0 gives the CPU's values on GPUs too.

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMinOwnWorkspace = 8 * kMiB;
constexpr size_t kAlign = 256;
constexpr int kAlgorithmsAsked = 8;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{[] {
    const char* value = std::getenv("MT_CUDNN");
    return value == nullptr || std::string(value) != "0";
  }()};
  return flag;
}

std::atomic<int> last_algorithm[3] = {-1, -1, -1};

struct PlanKey {
  ConvPass pass;
  DType dtype;
  bool tf32;
  bool channels_first;
  int64_t sizes[15];

  bool operator==(const PlanKey& o) const {
    return pass == o.pass && dtype == o.dtype && tf32 == o.tf32 &&
           channels_first == o.channels_first && std::equal(sizes, sizes + 15, o.sizes);
  }
  template <typename H>
  friend H AbslHashValue(H h, const PlanKey& k) {
    h = H::combine(std::move(h), k.pass, k.dtype, k.tf32, k.channels_first);
    return H::combine_contiguous(std::move(h), k.sizes, 15);
  }
};

PlanKey key_of(ConvPass pass, DType dtype, const internal::ConvGeometry& g) {
  return PlanKey{
      pass,
      dtype,
      internal::tf32_enabled(),
      g.channels_first,
      {g.batch, g.in_h, g.in_w, g.in_c, g.filter_h, g.filter_w, g.out_h, g.out_w, g.out_c,
       g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.pad_top, g.pad_left}};
}

// A shape's descriptors and the algorithm chosen for its pass.
struct Plan {
  const CudnnLibrary* library = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algorithm = -1;
  size_t workspace_bytes = 0;

  ~Plan() {
    if (x != nullptr) library->destroy_tensor(x);
    if (y != nullptr) library->destroy_tensor(y);
    if (w != nullptr) library->destroy_filter(w);
    if (conv != nullptr) library->destroy_conv(conv);
  }
};

// cuDNN's output size for one spatial axis with `pad` on both sides.
int64_t cudnn_out(int64_t in, int64_t pad, int64_t filter, int64_t dilation, int64_t stride) {
  const int64_t span = (filter - 1) * dilation + 1;
  return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

bool expressible(const internal::ConvGeometry& g) {
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  const int64_t sizes[] = {g.batch,    g.in_h,  g.in_w,  g.in_c, g.filter_h,
                           g.filter_w, g.out_h, g.out_w, g.out_c};
  for (int64_t s : sizes) {
    if (s <= 0 || s > kMaxInt) return false;
  }
  const int64_t elements[] = {g.batch * g.in_h * g.in_w * g.in_c,
                              g.batch * g.out_h * g.out_w * g.out_c,
                              g.filter_h * g.filter_w * g.in_c * g.out_c};
  for (int64_t e : elements) {
    if (e > kMaxInt) return false;
  }
  return g.pad_top >= 0 && g.pad_left >= 0 &&
         cudnn_out(g.in_h, g.pad_top, g.filter_h, g.dilation_h, g.stride_h) == g.out_h &&
         cudnn_out(g.in_w, g.pad_left, g.filter_w, g.dilation_w, g.stride_w) == g.out_w;
}

cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return CUDNN_DATA_DOUBLE;
    case DType::kFloat16:
      return CUDNN_DATA_HALF;
    case DType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

// Whether an algorithm's math is allowed for `dtype`: float32 stays IEEE without TF32.
bool math_allowed(DType dtype, bool tf32, cudnnMathType_t math) {
  if (dtype != DType::kFloat32 || tf32) return true;
  return math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
}

cudnnMathType_t requested_math(DType dtype, bool tf32) {
  if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) return CUDNN_TENSOR_OP_MATH;
  if (dtype == DType::kFloat32) return tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

// The filter in cuDNN's layout, as the three axes reverse_axes reverses (filter_layout.h).
struct FilterAxes {
  int64_t a, b, c;
};
FilterAxes hwio_axes(const internal::ConvGeometry& g) {
  const int64_t rs = g.filter_h * g.filter_w;
  return g.channels_first ? FilterAxes{rs, g.in_c, g.out_c} : FilterAxes{rs * g.in_c, 1, g.out_c};
}

}  // namespace

class CudnnState {
 public:
  CudnnState(int device, cudaStream_t stream, void* workspace)
      : device_(device), stream_(stream), fixed_workspace_(workspace) {}
  ~CudnnState() {
    internal::MutexLock lock(&mu_);
    plans_.clear();
    if (handle_ != nullptr) {
      ScopedDevice on(device_);
      library_->destroy(handle_);
    }
  }

  void prepare() {
    const CudnnLibrary* library = loaded_cudnn_library();
    if (library == nullptr) return;
    internal::MutexLock lock(&mu_);
    static_cast<void>(make_handle(library));
  }

  absl::StatusOr<bool> run(ConvPass pass, const GpuState& state, const internal::ConvGeometry& g,
                           DType dtype, const void* a, const void* b, void* out);

 private:
  absl::Status make_handle(const CudnnLibrary* library) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (handle_ != nullptr) return absl::OkStatus();
    ScopedDevice on(device_);
    MT_RETURN_IF_ERROR(on.status());
    cudnnHandle_t handle = nullptr;
    MT_RETURN_IF_ERROR(library->check("cudnnCreate", library->create(&handle)));
    const absl::Status bound =
        library->check("cudnnSetStream", library->set_stream(handle, stream_));
    if (!bound.ok()) {
      library->destroy(handle);
      return bound;
    }
    library_ = library;
    handle_ = handle;
    return absl::OkStatus();
  }

  bool capturing() const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(stream_, &status) == cudaSuccess &&
           status != cudaStreamCaptureStatusNone;
  }

  // Returns the plan of `key`, made on first use; null when cuDNN offers no algorithm.
  absl::StatusOr<const Plan*> plan(const PlanKey& key, const internal::ConvGeometry& g,
                                   size_t filter_bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Returns `bytes` of workspace, growing the state's own; null when it cannot.
  void* workspace(size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (bytes > kCudnnWorkspaceBytes) return nullptr;
    if (fixed_workspace_ != nullptr) return fixed_workspace_;
    if (bytes <= own_bytes_) return own_.get();
    if (capturing()) return nullptr;
    size_t size = kMinOwnWorkspace;
    while (size < bytes) size *= 2;
    ScopedDevice on(device_);
    if (!on.status().ok()) return nullptr;
    // Kernels enqueued earlier may still use the old buffer.
    if (own_.get() != nullptr && cudaStreamSynchronize(stream_) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    own_ = DeviceBuffer();
    own_bytes_ = 0;
    absl::StatusOr<DeviceBuffer> grown = DeviceBuffer::create(size);
    if (!grown.ok()) return nullptr;
    own_ = std::move(*grown);
    own_bytes_ = size;
    return own_.get();
  }

  const int device_;
  const cudaStream_t stream_;
  void* const fixed_workspace_;
  internal::Mutex mu_;
  const CudnnLibrary* library_ ABSL_GUARDED_BY(mu_) = nullptr;
  cudnnHandle_t handle_ ABSL_GUARDED_BY(mu_) = nullptr;
  DeviceBuffer own_ ABSL_GUARDED_BY(mu_);
  size_t own_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<PlanKey, std::unique_ptr<Plan>> plans_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<const Plan*> CudnnState::plan(const PlanKey& key, const internal::ConvGeometry& g,
                                             size_t filter_bytes) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  const CudnnLibrary& l = *library_;
  auto p = std::make_unique<Plan>();
  p->library = library_;
  const cudnnDataType_t type = data_type(key.dtype);
  const cudnnTensorFormat_t format = g.channels_first ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  MT_RETURN_IF_ERROR(l.check("cudnnCreateTensorDescriptor", l.create_tensor(&p->x)));
  MT_RETURN_IF_ERROR(l.check("cudnnCreateTensorDescriptor", l.create_tensor(&p->y)));
  MT_RETURN_IF_ERROR(l.check("cudnnCreateFilterDescriptor", l.create_filter(&p->w)));
  MT_RETURN_IF_ERROR(l.check("cudnnCreateConvolutionDescriptor", l.create_conv(&p->conv)));
  MT_RETURN_IF_ERROR(
      l.check("cudnnSetTensor4dDescriptor",
              l.set_tensor_4d(p->x, format, type, i(g.batch), i(g.in_c), i(g.in_h), i(g.in_w))));
  MT_RETURN_IF_ERROR(
      l.check("cudnnSetTensor4dDescriptor",
              l.set_tensor_4d(p->y, format, type, i(g.batch), i(g.out_c), i(g.out_h), i(g.out_w))));
  MT_RETURN_IF_ERROR(l.check(
      "cudnnSetFilter4dDescriptor",
      l.set_filter_4d(p->w, type, format, i(g.out_c), i(g.in_c), i(g.filter_h), i(g.filter_w))));
  const cudnnDataType_t compute =
      key.dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  MT_RETURN_IF_ERROR(
      l.check("cudnnSetConvolution2dDescriptor",
              l.set_conv_2d(p->conv, i(g.pad_top), i(g.pad_left), i(g.stride_h), i(g.stride_w),
                            i(g.dilation_h), i(g.dilation_w), CUDNN_CROSS_CORRELATION, compute)));
  MT_RETURN_IF_ERROR(l.check("cudnnSetConvolutionMathType",
                             l.set_math_type(p->conv, requested_math(key.dtype, key.tf32))));

  // cuDNN's heuristics, best first; the first that succeeds within the workspace is taken.
  const size_t budget =
      kCudnnWorkspaceBytes - std::min(kCudnnWorkspaceBytes, aligned(filter_bytes));
  int returned = 0;
  const auto take = [&](const auto* results) {
    for (int r = 0; r < returned; ++r) {
      if (results[r].status == CUDNN_STATUS_SUCCESS && results[r].memory <= budget &&
          results[r].determinism == CUDNN_DETERMINISTIC &&
          math_allowed(key.dtype, key.tf32, results[r].mathType)) {
        p->algorithm = static_cast<int>(results[r].algo);
        p->workspace_bytes = results[r].memory;
        return l.check("cudnnSetConvolutionMathType",
                       l.set_math_type(p->conv, results[r].mathType));
      }
    }
    return absl::OkStatus();
  };
  cudnnStatus_t asked = CUDNN_STATUS_SUCCESS;
  if (key.pass == ConvPass::kForward) {
    cudnnConvolutionFwdAlgoPerf_t results[kAlgorithmsAsked];
    asked = l.forward_algorithms(handle_, p->x, p->w, p->conv, p->y, kAlgorithmsAsked, &returned,
                                 results);
    if (asked == CUDNN_STATUS_SUCCESS) MT_RETURN_IF_ERROR(take(results));
  } else if (key.pass == ConvPass::kBackwardInput) {
    cudnnConvolutionBwdDataAlgoPerf_t results[kAlgorithmsAsked];
    asked = l.backward_data_algorithms(handle_, p->w, p->y, p->conv, p->x, kAlgorithmsAsked,
                                       &returned, results);
    if (asked == CUDNN_STATUS_SUCCESS) MT_RETURN_IF_ERROR(take(results));
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t results[kAlgorithmsAsked];
    asked = l.backward_filter_algorithms(handle_, p->x, p->y, p->conv, p->w, kAlgorithmsAsked,
                                         &returned, results);
    if (asked == CUDNN_STATUS_SUCCESS) MT_RETURN_IF_ERROR(take(results));
  }
  if (p->algorithm < 0) p.reset();  // no algorithm: the direct kernels take the shape
  const Plan* made = p.get();
  plans_.emplace(key, std::move(p));
  return made;
}

absl::StatusOr<bool> CudnnState::run(ConvPass pass, const GpuState& state,
                                     const internal::ConvGeometry& g, DType dtype, const void* a,
                                     const void* b, void* out) {
  if (!cudnn_enabled() || !expressible(g)) return false;
  absl::StatusOr<const CudnnLibrary*> library = cudnn_library();
  if (!library.ok()) {
    static std::atomic<bool> reported{false};
    if (!reported.exchange(true)) {
      std::fprintf(stderr,
                   "minitensor: cuDNN not loaded (%s); convolutions on GPUs run the runtime's "
                   "own kernels\n",
                   std::string(library.status().message()).c_str());
    }
    return false;
  }
  internal::MutexLock lock(&mu_);
  if (handle_ == nullptr) {
    if (capturing()) return false;  // cudnnCreate may not run inside a capture
    MT_RETURN_IF_ERROR(make_handle(*library));
  }
  const PlanKey key = key_of(pass, dtype, g);
  const int element_bytes = static_cast<int>(dtype_size(dtype));
  const size_t filter_bytes =
      static_cast<size_t>(g.filter_h * g.filter_w * g.in_c * g.out_c) * element_bytes;
  MT_ASSIGN_OR_RETURN(const Plan* p, plan(key, g, filter_bytes));
  if (p == nullptr) return false;
  char* const space = static_cast<char*>(workspace(aligned(filter_bytes) + p->workspace_bytes));
  if (space == nullptr) return false;
  void* const filter = space;
  void* const work = space + aligned(filter_bytes);
  last_algorithm[static_cast<int>(pass)].store(p->algorithm, std::memory_order_relaxed);

  const CudnnLibrary& l = *library_;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* one = dtype == DType::kFloat64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dtype == DType::kFloat64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const FilterAxes axes = hwio_axes(g);
  static constexpr const char* kCalls[] = {
      "cudnnConvolutionForward", "cudnnConvolutionBackwardData", "cudnnConvolutionBackwardFilter"};
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  switch (pass) {
    case ConvPass::kForward:
      MT_RETURN_IF_ERROR(
          reverse_axes(OpId::kConv2D, state, element_bytes, b, filter, axes.a, axes.b, axes.c));
      status = l.forward(handle_, one, p->x, a, p->w, filter, p->conv,
                         static_cast<cudnnConvolutionFwdAlgo_t>(p->algorithm), work,
                         p->workspace_bytes, zero, p->y, out);
      break;
    case ConvPass::kBackwardInput:
      MT_RETURN_IF_ERROR(reverse_axes(OpId::kConv2DBackpropInput, state, element_bytes, a, filter,
                                      axes.a, axes.b, axes.c));
      status = l.backward_data(handle_, one, p->w, filter, p->y, b, p->conv,
                               static_cast<cudnnConvolutionBwdDataAlgo_t>(p->algorithm), work,
                               p->workspace_bytes, zero, p->x, out);
      break;
    case ConvPass::kBackwardFilter:
      status = l.backward_filter(handle_, one, p->x, a, p->y, b, p->conv,
                                 static_cast<cudnnConvolutionBwdFilterAlgo_t>(p->algorithm), work,
                                 p->workspace_bytes, zero, p->w, filter);
      break;
  }
  // An algorithm the heuristics offered may still refuse the call, having written nothing:
  // the direct kernels take the shape from now on.
  if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED) {
    plans_[key].reset();
    return false;
  }
  MT_RETURN_IF_ERROR(l.check(kCalls[static_cast<int>(pass)], status));
  if (pass == ConvPass::kBackwardFilter) {
    MT_RETURN_IF_ERROR(reverse_axes(OpId::kConv2DBackpropFilter, state, element_bytes, filter, out,
                                    axes.c, axes.b, axes.a));
  }
  return true;
}

void CudnnStateDeleter::operator()(CudnnState* state) const { delete state; }

CudnnStatePtr make_cudnn_state(int physical_device, cudaStream_t stream, void* workspace) {
  return CudnnStatePtr(new CudnnState(physical_device, stream, workspace));
}

void prepare_cudnn_state(CudnnState* state) {
  if (state != nullptr) state->prepare();
}

absl::StatusOr<bool> cudnn_conv(ConvPass pass, const GpuState& state,
                                const internal::ConvGeometry& g, DType dtype, const void* a,
                                const void* b, void* out) {
  if (state.cudnn == nullptr) return false;
  return state.cudnn->run(pass, state, g, dtype, a, b, out);
}

bool cudnn_enabled() { return enabled_flag().load(std::memory_order_relaxed); }
void set_cudnn_enabled(bool enable) { enabled_flag().store(enable, std::memory_order_relaxed); }

int last_cudnn_algorithm(ConvPass pass) {
  return last_algorithm[static_cast<int>(pass)].load(std::memory_order_relaxed);
}

}  // namespace mt::cuda
