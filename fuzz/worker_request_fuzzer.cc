// Fuzzes the worker service's unary and Bulk requests (distributed/worker.proto) against a
// real WorkerService in process (worker_fuzz_client.h): each frame of the input
// (wire_frames.h) is parsed as the request its tag selects, tag % 8:
//   0 GetDevices  1 RunOp  2 Fetch  3 Bulk Fetch  4 Delete  5 GetMemoryInfo
//   6 Upload: the frame is the header, the next (tag / 8) % 4 frames its pieces
//   7 the client goes away: every tensor it made is deleted and the pools checked
// so tensor payloads, attribute sets, op ids and devices reach the decoding and the
// kernels as they do from gRPC. A frame that does not parse is dropped, as gRPC drops it.
// A handle 1 to 16 in a request names the client's handles in order (the task chooses
// them at random); others pass as they are. Every answer is checked, and at the end of
// the input the client's tensors are deleted and the pools must hold no byte.
#include <string_view>
#include <vector>

#include "fuzz/wire_frames.h"
#include "fuzz/worker_fuzz_client.h"

namespace mt::fuzz {
namespace {

constexpr uint64_t kFewHandles = 16;

class RequestSession {
 public:
  explicit RequestSession(FrameReader& frames) : frames_(frames) {}

  void run() {
    for (Frame frame; frames_.next(&frame);) call(frame);
    client_.release_all();
  }

 private:
  // Returns the client's handle that small `handle` names, else `handle`.
  uint64_t translate(uint64_t handle) const {
    const std::vector<uint64_t>& held = client_.handles();
    if (handle == 0 || handle > kFewHandles || held.empty()) return handle;
    return held[(handle - 1) % held.size()];
  }

  template <typename Request>
  static bool parse(std::string_view bytes, Request* request) {
    return request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  }

  void call(const Frame& frame) {
    switch (frame.tag % 8) {
      case 0:
        if (proto::GetDevicesRequest r; parse(frame.bytes, &r)) client_.get_devices(r);
        break;
      case 1:
        if (proto::RunOpRequest r; parse(frame.bytes, &r)) {
          for (proto::Input& in : *r.mutable_inputs()) {
            if (in.kind_case() == proto::Input::kHandle) in.set_handle(translate(in.handle()));
          }
          client_.run_op(r);
        }
        break;
      case 2:
      case 3:
        if (proto::FetchRequest r; parse(frame.bytes, &r)) {
          r.set_handle(translate(r.handle()));
          frame.tag % 8 == 2 ? client_.fetch(r) : client_.bulk_fetch(r);
        }
        break;
      case 4:
        if (proto::DeleteRequest r; parse(frame.bytes, &r)) {
          for (uint64_t& h : *r.mutable_handles()) h = translate(h);
          client_.remove(r);
        }
        break;
      case 5:
        if (proto::MemoryInfoRequest r; parse(frame.bytes, &r)) client_.memory_info(r);
        break;
      case 6:
        upload(frame);
        break;
      default:
        client_.release_all();
    }
  }

  void upload(const Frame& header) {
    std::vector<std::string_view> pieces;
    for (int i = 0, n = (header.tag / 8) % 4; i < n; ++i) {
      Frame piece;
      if (!frames_.next(&piece)) break;
      pieces.push_back(piece.bytes);
    }
    client_.upload(header.bytes, pieces);
  }

  FrameReader& frames_;
  WireClient client_;
};

}  // namespace
}  // namespace mt::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mt::fuzz::init_wire_runtime();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mt::fuzz::FrameReader frames(data, size);
  mt::fuzz::RequestSession(frames).run();
  return 0;
}
