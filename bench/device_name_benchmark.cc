// Device-name parsing and formatting. BM_Baseline_Strlen does trivial work on the same
// string through an opaque pointer, so the other figures read as ratios to it.

#include <cstring>
#include <string_view>

#include "benchmark/benchmark.h"
#include "placement/device_name.h"

namespace mt {
namespace {

constexpr char kFullName[] = "/job:localhost/replica:0/task:0/device:GPU:1";
constexpr char kShortName[] = "/GPU:1";

void BM_Baseline_Strlen(benchmark::State& state) {
  const char* name = kFullName;
  for (auto _ : state) {
    benchmark::DoNotOptimize(name);
    size_t length = std::strlen(name);
    benchmark::DoNotOptimize(length);
  }
}
BENCHMARK(BM_Baseline_Strlen);

void BM_ParseFullName(benchmark::State& state) {
  std::string_view name = kFullName;
  for (auto _ : state) {
    benchmark::DoNotOptimize(name);
    auto spec = parse_device_name(name);
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_ParseFullName);

void BM_ParseShortName(benchmark::State& state) {
  std::string_view name = kShortName;
  for (auto _ : state) {
    benchmark::DoNotOptimize(name);
    auto spec = parse_device_name(name);
    benchmark::DoNotOptimize(spec);
  }
}
BENCHMARK(BM_ParseShortName);

void BM_ToString(benchmark::State& state) {
  DeviceSpec spec = parse_device_name(kShortName).value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(spec);
    std::string name = to_string(spec);
    benchmark::DoNotOptimize(name);
  }
}
BENCHMARK(BM_ToString);

void BM_CanonicalName(benchmark::State& state) {
  DeviceSpec spec = parse_device_name(kShortName).value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(spec);
    std::string name = canonical_name(spec);
    benchmark::DoNotOptimize(name);
  }
}
BENCHMARK(BM_CanonicalName);

void BM_Matches(benchmark::State& state) {
  DeviceSpec spec = parse_device_name(kShortName).value();
  DeviceSpec device = parse_device_name(kFullName).value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(spec);
    benchmark::DoNotOptimize(device);
    bool result = matches(spec, device);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_Matches);

void BM_Merge(benchmark::State& state) {
  DeviceSpec outer = parse_device_name(kFullName).value();
  DeviceSpec inner = parse_device_name("/cpu:0").value();
  for (auto _ : state) {
    benchmark::DoNotOptimize(outer);
    benchmark::DoNotOptimize(inner);
    DeviceSpec merged = merge(outer, inner);
    benchmark::DoNotOptimize(merged);
  }
}
BENCHMARK(BM_Merge);

}  // namespace
}  // namespace mt

BENCHMARK_MAIN();
