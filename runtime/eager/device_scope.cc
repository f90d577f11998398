#include "runtime/eager/device_scope.h"

#include <string>

#include "runtime/eager/error.h"
#include "runtime/eager/scope_stack.h"

namespace mt {
namespace internal {

uint64_t hash_spec(const DeviceSpec& spec) {
  // FNV-1a over the fields; unset fields hash as distinct markers.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  auto mix_str = [&](const std::optional<std::string>& s) {
    if (!s) return mix(0x9e3779b97f4a7c15ull);
    for (char c : *s) mix(static_cast<unsigned char>(c));  // names are short
    mix(s->size());
  };
  auto mix_int = [&](const std::optional<int>& i) { mix(i ? static_cast<uint64_t>(*i) : ~0ull); };
  mix_str(spec.job);
  mix_int(spec.replica);
  mix_int(spec.task);
  mix_str(spec.type);
  mix_int(spec.id);
  return h;
}

}  // namespace internal

DeviceScope::DeviceScope(std::string_view device_name)
    : DeviceScope(internal::value_or_throw(parse_device_name(device_name))) {}

DeviceScope::DeviceScope(const DeviceSpec& spec) { internal::scope_stack().push(spec); }

DeviceScope::~DeviceScope() { internal::scope_stack().pop(); }

}  // namespace mt
