#pragma once
// BusModel: what moving bytes between two devices costs, as the cost policy estimates it
// (runtime/cost/cost_model.h): latency + bytes / bandwidth per kind of link. The runtime
// measures the links once per machine (runtime/cost/bus_calibration.cc) and caches the figures
// in a small text file; this header holds the arithmetic and that file's format.
//
//   BusModel bus;
//   bus.set(Link::kHostToDevice, LinkCost{.latency_ns = 9000, .bytes_per_ns = 12});
//   double ns = bus.transfer_ns(Link::kHostToDevice, 1 << 20);
//
// The file, one link a line after a header naming the machine:
//   minitensor-bus 2
//   machine <key>
//   H2D <latency_ns> <bytes_per_ns>
// A file of another version or machine, or one that does not parse, is refused with
// InvalidArgument (the caller measures again).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/device_type.h"

namespace mt {

enum class Link : uint8_t {
  kHostToHost,      // between two logical CPUs: memcpy
  kHostToDevice,    // CPU to GPU
  kDeviceToHost,    // GPU to CPU
  kDeviceToDevice,  // GPU to GPU (two logical GPUs of one card, or two cards)
  kNetwork,         // to or from a device of another task: an RPC (measured per process,
                    // never cached in the file: it depends on the cluster, not the machine)
};
inline constexpr int kNumLinks = 5;

// Returns the link bytes take from a device of type `from` to one of type `to`.
Link link_between(DeviceType from, DeviceType to);

// Returns "H2H", "H2D", "D2H", "D2D" or "NET".
const char* link_name(Link link);

struct LinkCost {
  double latency_ns = 0;
  double bytes_per_ns = 0;  // GB/s; 0: not measured
};

class BusModel {
 public:
  // Sets the cost of `link`.
  void set(Link link, LinkCost cost) { links_[static_cast<int>(link)] = cost; }
  const LinkCost& get(Link link) const { return links_[static_cast<int>(link)]; }

  // Returns whether `link` has been measured.
  bool has(Link link) const { return get(link).bytes_per_ns > 0; }

  // Returns the estimated nanoseconds to move `bytes` over `link` (has(link) must hold).
  double transfer_ns(Link link, double bytes) const {
    const LinkCost& c = get(link);
    return c.latency_ns + bytes / c.bytes_per_ns;
  }

  // Returns the file's text for machine `machine`.
  std::string serialize(std::string_view machine) const;

  // Parses a file's text written for `machine`. InvalidArgument: another version or machine,
  // or text that does not parse.
  static absl::StatusOr<BusModel> parse(std::string_view text, std::string_view machine);

 private:
  std::array<LinkCost, kNumLinks> links_{};
};

// Solves latency and bandwidth from two timed copies (small and large; the larger must be
// larger). Times at or below zero, or a larger copy no slower, give the figures of a link
// with no latency at the large copy's rate.
LinkCost solve_link(double small_bytes, double small_ns, double large_bytes, double large_ns);

}  // namespace mt
