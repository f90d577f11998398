#include "runtime/cost/bus_calibration.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/status.h"
#include "runtime/eager/context.h"
#include "runtime/eager/remote.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::internal {
namespace {

constexpr size_t kSmall = 4 << 10;
constexpr size_t kLarge = 8 << 20;
constexpr size_t kNetworkLarge = 1 << 20;

// A buffer from a device's pool, returned on destruction.
class PoolBuffer {
 public:
  PoolBuffer(Device& device, size_t bytes)
      : device_(device), data_(device.allocator().allocate(bytes)) {}
  ~PoolBuffer() { device_.allocator().deallocate(data_); }
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  void* get() const { return data_; }

 private:
  Device& device_;
  void* data_;
};

// Returns the fastest of four runs of `copy` (bytes) after one to warm up, in nanoseconds;
// -1 when a copy fails.
template <typename Copy>
double fastest_ns(Copy&& copy, size_t bytes) {
  double best = -1;
  for (int run = 0; run < 5; ++run) {
    auto begin = std::chrono::steady_clock::now();
    if (!copy(bytes)) return -1;
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - begin).count();
    if (run > 0 && (best < 0 || ns < best)) best = ns;
  }
  return best;
}

// Times `copy` at both sizes and sets `link` from them.
template <typename Copy>
void time_link(BusModel* bus, Link link, Copy&& copy) {
  double small = fastest_ns(copy, kSmall);
  double large = fastest_ns(copy, kLarge);
  if (small < 0 || large < 0) return;
  bus->set(link, solve_link(kSmall, small, kLarge, large));
}

}  // namespace

std::string bus_cache_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] != '\0') {
    return std::string(xdg) + "/minitensor/bus_calibration.txt";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.cache/minitensor/bus_calibration.txt";
  }
  return "";
}

BusModel measure_bus(const Runtime& rt) {
  std::vector<Device*> cpus, gpus;
  for (int i = 0; i < rt.num_devices(); ++i) {
    Device& d = rt.device(i);
    if (d.remote() != nullptr) continue;
    (d.type() == DeviceType::kGPU ? gpus : cpus).push_back(&d);
  }
  BusModel bus;
  if (cpus.empty()) return bus;
  Device& host = *cpus[0];
  PoolBuffer src(host, kLarge), dst(host, kLarge);
  if (src.get() == nullptr || dst.get() == nullptr) return bus;
  std::memset(src.get(), 1, kLarge);
  time_link(&bus, Link::kHostToHost,
            [&](size_t n) { return host.copy_from_host(dst.get(), src.get(), n).ok(); });
  if (gpus.empty()) return bus;
  Device& gpu = *gpus[0];
  PoolBuffer on_gpu(gpu, kLarge);
  if (on_gpu.get() == nullptr) return bus;
  // As an op's input goes to the GPU: from the CPU pool (pinned when a GPU is visible, Note
  // [Pinned host tensors]), by copy_from_device.
  time_link(&bus, Link::kHostToDevice, [&](size_t n) {
    absl::StatusOr<PendingUse> use = gpu.copy_from_device(on_gpu.get(), host, src.get(), n);
    if (!use.ok()) return false;
    bool done = gpu.wait_idle().ok();
    if (use->handle != nullptr) use->release(use->handle);
    return done;
  });
  time_link(&bus, Link::kDeviceToHost,
            [&](size_t n) { return gpu.copy_to_host(dst.get(), on_gpu.get(), n).ok(); });
  if (gpus.size() < 2) return bus;
  Device& other = *gpus[1];
  PoolBuffer on_other(other, kLarge);
  if (on_other.get() == nullptr) return bus;
  time_link(&bus, Link::kDeviceToDevice, [&](size_t n) {
    absl::StatusOr<PendingUse> use = other.copy_from_device(on_other.get(), gpu, on_gpu.get(), n);
    if (!use.ok()) return false;
    if (use->handle != nullptr) use->release(use->handle);
    return other.wait_idle().ok() && gpu.wait_idle().ok();
  });
  return bus;
}

std::optional<LinkCost> measure_network(const Runtime& rt) {
  Device* host = nullptr;
  Device* remote = nullptr;
  for (int i = 0; i < rt.num_devices(); ++i) {
    Device& d = rt.device(i);
    if (d.remote() != nullptr) {
      if (remote == nullptr) remote = &d;
    } else if (d.type() == DeviceType::kCPU && host == nullptr) {
      host = &d;
    }
  }
  if (host == nullptr || remote == nullptr) return std::nullopt;
  // A float32 tensor of `bytes` on the task, uploaded from this process.
  auto on_task = [&](size_t bytes) -> absl::StatusOr<Tensor> {
    MT_ASSIGN_OR_RETURN(Shape shape, Shape::make({static_cast<int64_t>(bytes / 4)}));
    MT_ASSIGN_OR_RETURN(TensorImpl * impl, allocate_tensor(*host, DType::kFloat32, shape));
    Tensor local(impl);
    std::memset(impl->data, 0, bytes);
    return remote->remote()->copy_in(local);
  };
  absl::StatusOr<Tensor> small = on_task(kSmall), large = on_task(kNetworkLarge);
  if (!small.ok() || !large.ok()) return std::nullopt;
  std::vector<char> host_copy(kNetworkLarge);
  auto fetch = [&](size_t bytes) {
    const Tensor& t = bytes == kSmall ? *small : *large;
    return remote->copy_to_host(host_copy.data(), t.impl()->data, bytes).ok();
  };
  const double small_ns = fastest_ns(fetch, kSmall);
  const double large_ns = fastest_ns(fetch, kNetworkLarge);
  if (small_ns < 0 || large_ns < 0) return std::nullopt;
  return solve_link(kSmall, small_ns, kNetworkLarge, large_ns);
}

BusModel load_or_measure_bus(const Runtime& rt, const std::string& machine,
                             const std::string& path) {
  if (!path.empty()) {
    std::ifstream in(path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      absl::StatusOr<BusModel> cached = BusModel::parse(text.str(), machine);
      if (cached.ok()) return *cached;
      std::fprintf(stderr, "minitensor: measuring the bus again: %s: %s\n", path.c_str(),
                   std::string(cached.status().message()).c_str());
    }
  }
  BusModel bus = measure_bus(rt);
  if (path.empty()) return bus;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::trunc);
  out << bus.serialize(machine);
  out.close();
  if (out) std::filesystem::rename(tmp, path, ec);
  return bus;
}

}  // namespace mt::internal
