#pragma once
// mt::DeviceScope: asks that the ops of this thread run on a device, for the scope's
// lifetime, like TensorFlow's `with tf.device(...)`. Scopes nest; the inner scope's fields
// override the outer's field by field ("/job:localhost" then "/GPU:1" asks for
// /job:localhost/device:GPU:1). The rules that turn the request into a device are in
// docs/design.md ("Placement").
//
//   {
//     mt::DeviceScope on_cpu("/CPU:0");
//     mt::Tensor a = mt::constant({1.f, 2.f});   // _EagerConst on CPU:0
//   }
//
// A malformed name throws mt::Error (InvalidArgument); a name that parses but names no
// device fails at the first op inside the scope (NotFound), unless soft placement is on.
// A scope belongs to the thread that created it and must be destroyed there.

#include <string_view>

#include "placement/device_name.h"
#include "runtime/config.h"

namespace mt {

class DeviceScope {
 public:
  explicit DeviceScope(std::string_view device_name);
  explicit DeviceScope(const LogicalDevice& device) : DeviceScope(device.name) {}
  explicit DeviceScope(const DeviceSpec& spec);
  ~DeviceScope();

  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
};

}  // namespace mt
