#include "runtime/cost/bus_model.h"

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mt {
namespace {

// absl's own string_view (docs/design.md, "Layers") from the standard one.
absl::string_view view(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Version 2: H2D is timed as an op's input copy goes (DMA from the pinned CPU pool), where
// version 1 staged it through a second pinned buffer first (about 3x slower on an H100).
constexpr absl::string_view kHeader = "minitensor-bus 2";

}  // namespace

Link link_between(DeviceType from, DeviceType to) {
  const bool from_gpu = from == DeviceType::kGPU;
  const bool to_gpu = to == DeviceType::kGPU;
  if (from_gpu && to_gpu) return Link::kDeviceToDevice;
  if (from_gpu) return Link::kDeviceToHost;
  if (to_gpu) return Link::kHostToDevice;
  return Link::kHostToHost;
}

const char* link_name(Link link) {
  switch (link) {
    case Link::kHostToHost:
      return "H2H";
    case Link::kHostToDevice:
      return "H2D";
    case Link::kDeviceToHost:
      return "D2H";
    case Link::kDeviceToDevice:
      return "D2D";
    case Link::kNetwork:
      return "NET";
  }
  return "?";
}

std::string BusModel::serialize(std::string_view machine) const {
  std::string out = absl::StrCat(kHeader, "\nmachine ", view(machine), "\n");
  for (int i = 0; i < kNumLinks; ++i) {
    const LinkCost& c = links_[i];
    if (c.bytes_per_ns <= 0 || static_cast<Link>(i) == Link::kNetwork) continue;
    absl::StrAppend(&out, link_name(static_cast<Link>(i)), " ",
                    absl::StrFormat("%.10g %.10g", c.latency_ns, c.bytes_per_ns), "\n");
  }
  return out;
}

absl::StatusOr<BusModel> BusModel::parse(std::string_view text, std::string_view machine) {
  std::vector<absl::string_view> lines = absl::StrSplit(view(text), '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != kHeader) {
    return absl::InvalidArgumentError("not a minitensor bus calibration (version 2)");
  }
  absl::string_view line1 = lines.size() > 1 ? lines[1] : "";
  if (!absl::ConsumePrefix(&line1, "machine ") || line1 != view(machine)) {
    return absl::InvalidArgumentError(
        absl::StrCat("written for another machine ('", line1, "', this is '", view(machine), "')"));
  }
  BusModel bus;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ' ');
    int link = -1;
    for (int l = 0; l < kNumLinks; ++l) {
      if (!f.empty() && f[0] == link_name(static_cast<Link>(l))) link = l;
    }
    LinkCost c;
    if (f.size() != 3 || link < 0 || !absl::SimpleAtod(f[1], &c.latency_ns) ||
        !absl::SimpleAtod(f[2], &c.bytes_per_ns) || !(c.latency_ns >= 0) || !(c.bytes_per_ns > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", i + 1, " does not parse"));
    }
    bus.set(static_cast<Link>(link), c);
  }
  return bus;
}

LinkCost solve_link(double small_bytes, double small_ns, double large_bytes, double large_ns) {
  large_ns = std::max(large_ns, 1.0);
  if (large_ns <= small_ns || small_ns <= 0 || large_bytes <= small_bytes) {
    return LinkCost{0, large_bytes / large_ns};
  }
  double bytes_per_ns = (large_bytes - small_bytes) / (large_ns - small_ns);
  double latency = std::max(0.0, small_ns - small_bytes / bytes_per_ns);
  return LinkCost{latency, bytes_per_ns};
}

}  // namespace mt
