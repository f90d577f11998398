#pragma once
// DeviceType: the kinds of device a kernel can be registered for.

#include <cstdint>
#include <optional>
#include <string_view>

namespace mt {

enum class DeviceType : uint8_t { kCPU, kGPU };
inline constexpr int kNumDeviceTypes = 2;

// Returns "CPU" or "GPU".
constexpr const char* device_type_name(DeviceType type) {
  return type == DeviceType::kCPU ? "CPU" : "GPU";
}

// Returns the DeviceType named `name` ("CPU", "GPU"; exact case), or nullopt.
constexpr std::optional<DeviceType> device_type_from_name(std::string_view name) {
  if (name == "CPU") return DeviceType::kCPU;
  if (name == "GPU") return DeviceType::kGPU;
  return std::nullopt;
}

}  // namespace mt
