#include "distributed/auth.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mt::distributed::internal {
namespace {

constexpr std::string_view kBearer = "Bearer ";  // std::string_view: not absl's (design.md)

// Returns the first value of metadata `key`, or nullopt.
std::optional<std::string_view> metadata(const grpc::ServerContext& context, const char* key) {
  auto it = context.client_metadata().find(key);
  if (it == context.client_metadata().end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

}  // namespace

CallMetadata client_metadata(const std::string& auth_token) {
  std::random_device random;
  std::string id = absl::StrFormat("%08x%08x%08x%08x", random(), random(), random(), random());
  CallMetadata out = {{kClientIdMetadata, id}};
  if (!auth_token.empty()) out.emplace_back(kAuthMetadata, std::string(kBearer) + auth_token);
  return out;
}

void Authenticator::set_token(std::string token) {
  if (!required_ || token.empty()) return;
  mt::internal::MutexLock lock(&mu_);
  token_ = std::move(token);
}

grpc::Status Authenticator::check(const grpc::ServerContext& context, const char* method) const {
  if (!required_) return grpc::Status::OK;
  std::string token;
  {
    mt::internal::MutexLock lock(&mu_);
    token = token_;
  }
  std::optional<std::string_view> sent = metadata(context, kAuthMetadata);
  const char* why = nullptr;
  if (!sent.has_value() || sent->substr(0, kBearer.size()) != kBearer) {
    why = "no auth token was sent";
  } else if (!constant_time_equal(sent->substr(kBearer.size()), token)) {
    why = "the auth token sent is not the task's";
  } else {
    return grpc::Status::OK;
  }
  // One line per refused call, so that an operator sees who knocks.
  std::fprintf(stderr, "[Server] refused %s from %s: %s\n", method, context.peer().c_str(), why);
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      absl::StrCat("[", method, "] ", why, " (ConnectOptions::auth_token)"));
}

std::string client_of(const grpc::ServerContext& context) {
  std::optional<std::string_view> id = metadata(context, kClientIdMetadata);
  return id.has_value() ? std::string(*id) : context.peer();
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer one is read whatever the contents; only the lengths leak.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? a[i] : 0;
    unsigned char y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

bool is_loopback(std::string_view address) {
  size_t colon = address.rfind(':');
  std::string_view host = address.substr(0, colon == std::string_view::npos ? 0 : colon);
  if (host == "localhost" || host == "[::1]") return true;
  in_addr ip{};
  return inet_pton(AF_INET, std::string(host).c_str(), &ip) == 1 && (ntohl(ip.s_addr) >> 24) == 127;
}

}  // namespace mt::distributed::internal
