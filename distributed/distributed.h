#pragma once
// Remote tasks as devices, as TensorFlow's eager runtime does (docs/distributed.md).
//
// A cluster is a set of jobs, each a list of task addresses. Every task runs a Server,
// which exports its process's logical devices; a client connects to the cluster and then
// sees each remote device under its full name, places ops on it with DeviceScope, and
// keeps the results there until it reads them:
//
//   // worker processes: mt-server --cluster worker=127.0.0.1:2222,127.0.0.1:2223 --task 1
//   mt::config::experimental_connect_to_cluster({{"worker", {"127.0.0.1:2222",
//   "127.0.0.1:2223"}}}); mt::Tensor y;
//   {
//     mt::DeviceScope scope("/job:worker/task:1");
//     y = mt::matmul(a, b);      // runs on /job:worker/replica:0/task:1/device:CPU:0
//   }
//   y.to_vector<float>();        // fetches the bytes; the remote buffer goes with y
//
// Errors: every call throws mt::Error. Every RPC has a deadline; a task that cannot be
// reached is Unavailable naming the task and its address.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mt::distributed {

// Job name -> task addresses ("host:port"), task i at index i, as tf.train.ClusterSpec.
using ClusterSpec = std::map<std::string, std::vector<std::string>>;

// TLS through gRPC's credentials; PEM text, not file names. Empty: plaintext. With
// client_ca_pem set the server requires a client certificate signed by it (mutual TLS),
// and the client then sends client_cert_pem and client_key_pem.
struct TlsOptions {
  std::string server_cert_pem;  // server: its certificate chain
  std::string server_key_pem;   // server: its private key
  std::string client_ca_pem;    // server: the authority client certificates must come from
  std::string root_cert_pem;    // client: the certificate authority to trust
  std::string client_cert_pem;  // client: its certificate chain, for mutual TLS
  std::string client_key_pem;   // client: its private key
};

// A server on an address other than loopback must authenticate its clients (mutual TLS,
// a token, or both) unless `insecure` is set (docs/distributed.md, "Security").
struct ServerOptions {
  int64_t max_message_bytes = int64_t{256} << 20;  // larger requests are refused
  TlsOptions tls;
  std::string auth_token;        // set: every call must carry it (ConnectOptions::auth_token)
  int64_t max_client_bytes = 0;  // the bytes one client may hold on the task; 0: no limit
  bool insecure = false;         // serve a non-loopback address without authentication
  // gRPC's sync server: its completion queues and the threads polling each (they also run
  // the calls). 0: gRPC's default (1 queue, 1 to 2 pollers), except that max_pollers 0 with
  // a larger min_pollers means min_pollers. At most kMaxServerCqs and kMaxServerPollers;
  // min_pollers <= max_pollers (docs/distributed.md, "What TLS costs").
  int num_cqs = 0;
  int min_pollers = 0;
  int max_pollers = 0;
};

inline constexpr int kMaxServerCqs = 64;
inline constexpr int kMaxServerPollers = 256;

class Server {
 public:
  // Starts task `task_index` of job `job_name` of `cluster`, listening only on the address
  // the spec gives it. Throws InvalidArgument for a bad spec, job, index or options (a
  // non-loopback address without authentication included), Unavailable when the address
  // cannot be bound.
  Server(const ClusterSpec& cluster, std::string_view job_name, int task_index,
         const ServerOptions& options = {});
  ~Server();  // stops serving; tensors it held are freed

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Returns "grpc://<address>", as tf.distribute.Server.target.
  std::string target() const;

  // Blocks until stop() is called from another thread.
  void join();

  // Stops accepting calls and waits, briefly, for calls in flight.
  void stop();

  // Replaces the TLS certificates and the auth token (options.tls, options.auth_token;
  // the rest is ignored) without a restart: new connections use the new certificates
  // within about a second, calls after this one are checked against the new token.
  // Throws InvalidArgument when TLS, mutual TLS or the token would be switched on or off,
  // and for bad TLS options as the constructor does. Thread-safe.
  void update_credentials(const ServerOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Returns a TCP port of 127.0.0.1 that nothing listens on right now (for tests and
// examples, as Python's portpicker). Throws Unavailable when none can be found.
int pick_unused_loopback_port();

}  // namespace mt::distributed

namespace mt::config {

// Timeouts are in (0, 2^31) ms; anything else is InvalidArgument at connect.
struct ConnectOptions {
  int64_t rpc_timeout_ms = 30'000;                 // deadline of every call to a task
  int64_t connect_timeout_ms = 30'000;             // how long connect waits for each task to answer
  int64_t max_message_bytes = int64_t{256} << 20;  // larger tensors are refused
  distributed::TlsOptions tls;                     // root_cert_pem set: connect with TLS
  std::string auth_token;                          // sent with every call when set
  // Connections to each task that a large tensor is split over, each encrypting its part
  // on a core of its own (docs/distributed.md, "What TLS costs"); in [0, 64], 0: one per
  // hardware thread, at most 8.
  int bulk_connections = 0;
};

// Connects this process to `cluster` as task `task_index` of `job_name` (a job absent from
// the spec, "localhost" by default, means this process is not one of its tasks). Every
// other task's logical devices then appear in list_logical_devices with their full names.
// Must come before the runtime initialises (the first op or tensor). Throws
// InvalidArgument for a bad spec (a job without tasks, an empty or duplicate address, a
// task index outside its job), Unavailable when a task does not answer in time,
// FailedPrecondition after initialisation.
void experimental_connect_to_cluster(const distributed::ClusterSpec& cluster,
                                     std::string_view job_name = "localhost", int task_index = 0,
                                     const ConnectOptions& options = {});

}  // namespace mt::config
