#pragma once
// WireClient: an in-process client of a real WorkerService (distributed/worker_service.h)
// for the wire fuzz targets. Its calls go straight to the service's handlers with a
// ServerContext of no call (no token; client id ""), and with streams of its own for
// Enqueue and the Bulk methods, so requests are decoded and run as they are from gRPC,
// without a channel or a socket.
//
// Every answer is checked: an error has a code other than UNKNOWN and INTERNAL and a
// message; a response is valid (known dtypes, dims and bytes that agree, the message limit
// kept). release_all() deletes every tensor the client made, as a client that goes away
// does, and checks that no handle is left and that the task's pools hold no byte.
//
//   init_wire_runtime();  // in LLVMFuzzerInitialize
//   WireClient client;
//   client.run_op(bytes);
//   client.release_all();

#include <cstdint>
#include <string_view>
#include <vector>

#include "distributed/worker.pb.h"

namespace mt::fuzz {

namespace proto = mt::distributed::proto;

// The task: kWireCpus logical CPUs of kWirePoolMb each; the service refuses tensors over
// kWireMessageBytes and a client's tensors over kWireClientBytes.
inline constexpr int kWireCpus = 2;
inline constexpr int kWirePoolMb = 8;
inline constexpr int64_t kWireMessageBytes = int64_t{1} << 20;
inline constexpr int64_t kWireClientBytes = int64_t{4} << 20;

// Configures the process's logical devices and starts its runtime; call once, first.
void init_wire_runtime();

class WireClient {
 public:
  // Each calls the handler of its name and returns whether the call succeeded.
  bool get_devices(const proto::GetDevicesRequest& request);
  bool run_op(const proto::RunOpRequest& request);
  bool fetch(const proto::FetchRequest& request);
  bool bulk_fetch(const proto::FetchRequest& request);  // Bulk's Fetch, in pieces
  bool remove(const proto::DeleteRequest& request);
  bool memory_info(const proto::MemoryInfoRequest& request);
  // Bulk's Upload: `header` (an UploadRequest's bytes, which the service parses) and then
  // `pieces`, raw.
  bool upload(std::string_view header, const std::vector<std::string_view>& pieces);
  // One Enqueue stream of `messages` (EnqueueRequests' bytes), read in order until one does
  // not parse (gRPC ends a stream there); false when the stream ended with an error.
  bool enqueue(const std::vector<std::string_view>& messages);

  // The handles the client holds or may hold: those RunOp returned and those it named.
  const std::vector<uint64_t>& handles() const { return handles_; }

  // Deletes every handle in handles(), then checks each is gone and the pools are empty.
  void release_all();

 private:
  void note_handle(uint64_t handle);

  std::vector<uint64_t> handles_;
};

}  // namespace mt::fuzz
