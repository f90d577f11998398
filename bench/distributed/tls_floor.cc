// What TLS costs a bulk transfer at the least, with no RPC layer at all: a tensor's bytes
// sent to a forked echo process over loopback TCP and back, in parts over several
// connections, each part on a thread of its own on both sides; once over plain sockets and
// once over TLS 1.3 (OpenSSL, the library gRPC links here). The echo process copies each
// part before sending it back, as the task's Identity does in remote_benchmark's round
// trip. docs/distributed.md ("What TLS costs") compares these floors with the RPC path.
//
//   tls_floor [--mib=64] [--connections=1,4,8,16] [--rounds=20]
//
// Prints one line per connection count and buffer kind: the median and best round trip
// over plain sockets and over TLS, and TLS's median over plaintext's. "reused" buffers are
// allocated and touched once, as pooled tensors are; "fresh" ones are allocated for each
// round trip (the receiver page-faults on them).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

// Reports `what` and ends the process at once: no destructors, no flush of a stdout
// inherited from the parent (the echo process is a fork), no waiting for threads.
[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tls_floor: %s\n", what);
  ERR_print_errors_fp(stderr);
  std::fflush(stderr);
  _exit(1);
}

// One connection: a socket, and its TLS session when there is one.
struct Conn {
  int fd = -1;
  SSL* ssl = nullptr;

  bool read_all(char* p, size_t n) const {
    while (n > 0) {
      const int want = static_cast<int>(std::min<size_t>(n, 1 << 30));
      const long got = ssl != nullptr ? SSL_read(ssl, p, want) : ::read(fd, p, want);
      if (got <= 0) return false;
      p += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }
  bool write_all(const char* p, size_t n) const {
    while (n > 0) {
      const int want = static_cast<int>(std::min<size_t>(n, 1 << 30));
      const long put = ssl != nullptr ? SSL_write(ssl, p, want) : ::write(fd, p, want);
      if (put <= 0) return false;
      p += put;
      n -= static_cast<size_t>(put);
    }
    return true;
  }
};

// A server context with a fresh self-signed P-256 certificate (no files).
SSL_CTX* make_server_context() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (key == nullptr || cert == nullptr) die("cannot make a key");
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  if (X509_sign(cert, key, EVP_sha256()) == 0) die("cannot sign the certificate");
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr || SSL_CTX_use_certificate(ctx, cert) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key) != 1) {
    die("cannot make the server context");
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ctx;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// `n` bytes, untouched (the first write to each page faults) unless `touch`.
std::unique_ptr<char[]> buffer(size_t n, bool touch) {
  std::unique_ptr<char[]> b(new char[n]);
  if (touch) std::memset(b.get(), 1, n);
  return b;
}

// The echo process: accepts `connections` connections on `listener`, and on each, `rounds`
// times, reads a part, copies it and writes the copy back.
void echo(int listener, bool tls, int connections, size_t part, int rounds, bool fresh) {
  SSL_CTX* ctx = tls ? make_server_context() : nullptr;
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) die("accept failed");
    no_delay(fd);
    threads.emplace_back([=] {
      Conn conn{fd, nullptr};
      if (ctx != nullptr) {
        conn.ssl = SSL_new(ctx);
        SSL_set_fd(conn.ssl, fd);
        if (SSL_accept(conn.ssl) != 1) die("TLS accept failed");
      }
      std::unique_ptr<char[]> in = buffer(part, true), out = buffer(part, true);
      for (int r = 0; r < rounds; ++r) {
        if (fresh) in.reset(), in = buffer(part, false);
        if (!conn.read_all(in.get(), part)) return;
        if (fresh) out.reset(), out = buffer(part, false);
        std::memcpy(out.get(), in.get(), part);
        if (!conn.write_all(out.get(), part)) return;
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

struct Timing {
  double median_ms = 0, best_ms = 0;
};

// Runs `rounds` round trips of `bytes` in `connections` parts; returns their times.
Timing round_trips(bool tls, int connections, size_t bytes, int rounds, bool fresh) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(listener, connections) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die("cannot listen on loopback");
  }
  const size_t part = bytes / connections;
  const pid_t child = fork();
  if (child < 0) die("fork failed");
  if (child == 0) {
    echo(listener, tls, connections, part, rounds, fresh);
    _exit(0);
  }
  close(listener);
  SSL_CTX* ctx = tls ? SSL_CTX_new(TLS_client_method()) : nullptr;
  if (tls && ctx == nullptr) die("cannot make the client context");
  std::vector<Conn> conns(connections);
  for (Conn& conn : conns) {
    conn.fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(conn.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      die("connect failed");
    }
    no_delay(conn.fd);
    if (ctx != nullptr) {
      conn.ssl = SSL_new(ctx);
      SSL_set_fd(conn.ssl, conn.fd);
      if (SSL_connect(conn.ssl) != 1) die("TLS connect failed");
    }
  }
  const size_t sent = part * connections;
  std::unique_ptr<char[]> src = buffer(sent, false), dst = buffer(sent, true);
  for (size_t i = 0; i < sent; ++i) src[i] = static_cast<char>(i * 131);
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    if (fresh) dst.reset(), dst = buffer(sent, false);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    std::atomic<bool> ok{true};
    for (int c = 0; c < connections; ++c) {
      threads.emplace_back([&, c] {
        if (!conns[c].write_all(src.get() + c * part, part) ||
            !conns[c].read_all(dst.get() + c * part, part)) {
          ok = false;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    if (!ok.load()) die("a transfer failed");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  for (Conn& conn : conns) {
    SSL_free(conn.ssl);
    close(conn.fd);
  }
  SSL_CTX_free(ctx);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the echo process failed");
  if (std::memcmp(dst.get(), src.get(), sent) != 0) die("the bytes came back changed");
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 64;
  int rounds = 20;
  std::vector<int> counts = {1, 4, 8, 16};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--mib=", 0) == 0) {
      mib = std::strtoul(arg.c_str() + 6, nullptr, 10);
    } else if (arg.rfind("--rounds=", 0) == 0) {
      rounds = std::atoi(arg.c_str() + 9);
    } else if (arg.rfind("--connections=", 0) == 0) {
      counts.clear();
      const char* p = arg.c_str() + 14;
      for (char* end = nullptr;; p = end + 1) {
        counts.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        if (end == p) counts.back() = 0;  // not a number: refused below
        if (*end != ',') break;
      }
    } else {
      std::fprintf(stderr, "usage: tls_floor [--mib=64] [--connections=1,4,8,16] [--rounds=20]\n");
      return 2;
    }
  }
  if (mib == 0 || rounds < 1 || std::any_of(counts.begin(), counts.end(), [&](int c) {
        return c < 1 || c > 64 || static_cast<size_t>(c) > (mib << 20);
      })) {
    std::fprintf(stderr, "tls_floor: --mib >= 1, --rounds >= 1, connections in [1, 64]\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a dead peer is a failed write, reported as such
  const size_t bytes = mib << 20;
  std::printf("%-8s %-6s %20s %20s %10s\n", "buffers", "conns", "plain median/best ms",
              "TLS median/best ms", "TLS/plain");
  std::fflush(stdout);  // before the first fork
  for (bool fresh : {false, true}) {
    for (int c : counts) {
      const Timing plain = round_trips(false, c, bytes, rounds, fresh);
      const Timing tls = round_trips(true, c, bytes, rounds, fresh);
      std::printf("%-8s %-6d %11.2f / %6.2f %11.2f / %6.2f %9.2fx\n", fresh ? "fresh" : "reused", c,
                  plain.median_ms, plain.best_ms, tls.median_ms, tls.best_ms,
                  tls.median_ms / plain.median_ms);
      std::fflush(stdout);
    }
  }
  return 0;
}
