// Fuzzes the worker service's op stream (Enqueue, distributed/worker.proto; its client is
// distributed/op_stream.h) against a real WorkerService in process
// (worker_fuzz_client.h): each frame of the input (wire_frames.h) is one EnqueueRequest's
// bytes, sent in order on one stream; a frame whose tag is odd is the last of its stream,
// and one whose tag has bit 1 set then also deletes every tensor the client made. The
// stream is read as gRPC reads it (it ends at a message that does not parse), so ops with
// their payloads and attributes, client-chosen handles, deletes and fetches meet the
// service in any order. Every answer is checked: one per message, in order, with its seq;
// values that decode. At the end of the input the client's tensors are deleted and the
// pools must hold no byte.
#include <string_view>
#include <vector>

#include "fuzz/wire_frames.h"
#include "fuzz/worker_fuzz_client.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mt::fuzz::init_wire_runtime();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mt::fuzz::FrameReader frames(data, size);
  mt::fuzz::WireClient client;
  std::vector<std::string_view> stream;
  for (mt::fuzz::Frame frame; frames.next(&frame);) {
    stream.push_back(frame.bytes);
    if ((frame.tag & 1) == 0 && !frames.done()) continue;
    client.enqueue(stream);
    stream.clear();
    if (frame.tag & 2) client.release_all();
  }
  client.release_all();
  return 0;
}
