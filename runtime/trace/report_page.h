#pragma once
// The HTML report's page (internal): a template with its style and script inline. The
// writer puts the data, one JSON object {"trace": <Chrome trace>, "snapshots": [...]},
// between kReportHead and kReportTail; the script renders it with plain DOM and SVG.

namespace mt::internal {

extern const char kReportHead[];  // up to the opening of the data element
extern const char kReportTail[];  // from the closing of the data element to the end

}  // namespace mt::internal
