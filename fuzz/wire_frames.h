#pragma once
// The input format of the wire fuzz targets (worker_request_fuzzer, enqueue_stream_fuzzer):
// a sequence of frames, each
//   [tag: 1 byte][length: 2 bytes, little-endian][length bytes: a serialized request]
// where the target's comment says what the tag selects. A last frame shorter than its
// length takes the bytes that are left. write_wire_seeds.cc writes seeds in this format.
//
//   FrameReader frames(data, size);
//   for (Frame f; frames.next(&f);) handle(f.tag, f.bytes);

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mt::fuzz {

struct Frame {
  uint8_t tag;
  std::string_view bytes;
};

// Reads the frames of one input, front to back; does not own the bytes.
class FrameReader {
 public:
  FrameReader(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  // Sets `*frame` to the next frame and returns true; false when no byte is left.
  bool next(Frame* frame) {
    if (rest_.empty()) return false;
    frame->tag = static_cast<uint8_t>(rest_[0]);
    size_t length = 0;
    if (rest_.size() >= 3) {
      length = static_cast<uint8_t>(rest_[1]) | static_cast<size_t>(static_cast<uint8_t>(rest_[2]))
                                                    << 8;
    }
    rest_.remove_prefix(std::min<size_t>(3, rest_.size()));
    frame->bytes = rest_.substr(0, std::min(length, rest_.size()));
    rest_.remove_prefix(frame->bytes.size());
    return true;
  }

  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// Appends a frame of `bytes` (at most 65535 of them) with `tag` to `out`.
inline void append_frame(std::string* out, uint8_t tag, const std::string& bytes) {
  out->push_back(static_cast<char>(tag));
  out->push_back(static_cast<char>(bytes.size() & 0xff));
  out->push_back(static_cast<char>(bytes.size() >> 8));
  out->append(bytes);
}

}  // namespace mt::fuzz
