#include "runtime/cost/cost_history_file.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mt {
namespace {

// absl's own string_view (docs/design.md, "Layers") from the standard one.
absl::string_view view(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr absl::string_view kHeader = "minitensor-placement-history 1";

int find_device(const CostModel& model, absl::string_view name) {
  for (int d = 0; d < model.num_devices(); ++d) {
    if (model.device(d).name == name) return d;
  }
  return -1;
}

int find_op(absl::string_view name) {
  for (int op = 0; op < kNumOps; ++op) {
    if (name == op_name(static_cast<OpId>(op))) return op;
  }
  return -1;
}

int find_dtype(absl::string_view name) {
  for (int t = 0; t < kNumDTypes; ++t) {
    if (name == dtype_name(static_cast<DType>(t))) return t;
  }
  return -1;
}

}  // namespace

std::string serialize_cost_history(const CostModel& model, absl::Span<const CostRecord> records,
                                   std::string_view machine) {
  std::string out = absl::StrCat(kHeader, "\nmachine ", view(machine), "\n");
  for (const CostRecord& r : records) {
    absl::StrAppend(&out, model.device(r.device).name, " ", op_name(r.op), " ", dtype_name(r.dtype),
                    " ", r.bucket, " ", r.count, " ",
                    absl::StrFormat("%.10g %.10g", r.mean_ns, r.mean_bytes), "\n");
  }
  return out;
}

absl::StatusOr<std::vector<CostRecord>> parse_cost_history(const CostModel& model,
                                                           std::string_view text,
                                                           std::string_view machine) {
  std::vector<absl::string_view> lines = absl::StrSplit(view(text), '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != kHeader) {
    return absl::InvalidArgumentError("not a minitensor placement history (version 1)");
  }
  absl::string_view line1 = lines.size() > 1 ? lines[1] : "";
  if (!absl::ConsumePrefix(&line1, "machine ") || line1 != view(machine)) {
    return absl::InvalidArgumentError(
        absl::StrCat("written on another machine ('", line1, "', this is '", view(machine), "')"));
  }
  std::vector<CostRecord> out;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ' ');
    CostRecord r{};
    int bucket = 0;
    if (f.size() != 7 || !absl::SimpleAtoi(f[3], &bucket) || !absl::SimpleAtoi(f[4], &r.count) ||
        !absl::SimpleAtod(f[5], &r.mean_ns) || !absl::SimpleAtod(f[6], &r.mean_bytes) ||
        bucket < 0 || bucket > 64 || r.count < 1 || !(r.mean_ns >= 0) || !(r.mean_bytes >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("line ", i + 1, " does not parse"));
    }
    int device = find_device(model, f[0]);
    int op = find_op(f[1]);
    int dtype = find_dtype(f[2]);
    if (device < 0 || op < 0 || dtype < 0) continue;  // of a device or op this run lacks
    r.device = device;
    r.op = static_cast<OpId>(op);
    r.dtype = static_cast<DType>(dtype);
    r.bucket = bucket;
    out.push_back(r);
  }
  return out;
}

}  // namespace mt
