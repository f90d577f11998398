#include "runtime/eager/error.h"

namespace mt::internal {

void throw_error(const absl::Status& status) {
  throw Error(status.code(), std::string(status.message()));
}

}  // namespace mt::internal
