#pragma once
// Client authentication and identity on a task (internal; docs/distributed.md, "Security").
//
// A client proves itself by mutual TLS (the handshake checks its certificate; no call
// gets through without one), by a shared token sent with every call as
//   authorization: Bearer <token>
// or by both. It names itself with a random session id, sent as `mt-client-id`, which the
// task uses to keep each client's tensors apart and to count the bytes it holds:
//
//   Authenticator auth("s3cret");
//   if (grpc::Status s = auth.check(*context, "RunOp"); !s.ok()) return s;
//   std::string client = client_of(*context);
//
// Thread safety: every function may be called from any thread.

#include <grpcpp/grpcpp.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mutex.h"

namespace mt::distributed::internal {

inline constexpr char kAuthMetadata[] = "authorization";
inline constexpr char kClientIdMetadata[] = "mt-client-id";

// Metadata a client adds to each of its calls.
using CallMetadata = std::vector<std::pair<std::string, std::string>>;

// Returns the metadata of a client with `auth_token` (empty: none) and a new session id.
CallMetadata client_metadata(const std::string& auth_token);

// Checks the token of every call against the task's.
class Authenticator {
 public:
  // An empty `token` lets every call through (the transport may still have checked it),
  // for good: no lock is taken then.
  explicit Authenticator(std::string token) : required_(!token.empty()), token_(std::move(token)) {}

  // Replaces the token; calls checked after this use the new one. Ignored when the
  // Authenticator was made without one (Server::update_credentials refuses that).
  void set_token(std::string token);

  // Returns OK when `context` carries the token. Otherwise logs one line naming the peer
  // on stderr and returns Unauthenticated naming `method` and what was wrong.
  grpc::Status check(const grpc::ServerContext& context, const char* method) const;

 private:
  const bool required_;
  mutable mt::internal::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
};

// Returns the session id of the caller, or its peer address when it sent none.
std::string client_of(const grpc::ServerContext& context);

// Returns whether `a` equals `b`, in a time that depends only on their lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// Returns whether the host of "host:port" is a loopback address (127.0.0.0/8, [::1],
// localhost).
bool is_loopback(std::string_view address);

}  // namespace mt::distributed::internal
