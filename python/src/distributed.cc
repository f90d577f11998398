// mt.distribute.Server and mt.config.experimental_connect_to_cluster over distributed/
// (built with gRPC; no_distributed.cc stands in when it is not). The Python package turns
// ClusterSpec and resolvers into the plain dict of address lists these take. Connecting,
// starting, joining and stopping release the GIL: they wait on the network. The
// MultiWorkerMirroredStrategy is a _MirroredStrategy (strategy.cc) with its cluster.
#include "distributed/distributed.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "distributed/multi_worker_strategy.h"
#include "python/src/bindings.h"

namespace mt::python {
namespace {

using distributed::ClusterSpec;
using distributed::Server;

void connect(const ClusterSpec& cluster, const std::string& job_name, int task_index,
             int64_t rpc_timeout_ms, int64_t connect_timeout_ms, int64_t max_message_bytes,
             std::string root_cert_pem, std::string client_cert_pem, std::string client_key_pem,
             std::string auth_token, std::optional<int> bulk_connections) {
  config::ConnectOptions o;
  o.rpc_timeout_ms = rpc_timeout_ms;
  o.connect_timeout_ms = connect_timeout_ms;
  o.max_message_bytes = max_message_bytes;
  o.tls.root_cert_pem = std::move(root_cert_pem);
  o.tls.client_cert_pem = std::move(client_cert_pem);
  o.tls.client_key_pem = std::move(client_key_pem);
  o.auth_token = std::move(auth_token);
  if (bulk_connections) o.bulk_connections = *bulk_connections;  // None: the C++ default
  config::experimental_connect_to_cluster(cluster, job_name, task_index, o);
}

distributed::ServerOptions server_options(int64_t max_message_bytes, std::string server_cert_pem,
                                          std::string server_key_pem, std::string client_ca_pem,
                                          std::string auth_token, int64_t max_client_bytes,
                                          bool insecure) {
  distributed::ServerOptions o;
  o.max_message_bytes = max_message_bytes;
  o.tls.server_cert_pem = std::move(server_cert_pem);
  o.tls.server_key_pem = std::move(server_key_pem);
  o.tls.client_ca_pem = std::move(client_ca_pem);
  o.auth_token = std::move(auth_token);
  o.max_client_bytes = max_client_bytes;
  o.insecure = insecure;
  return o;
}

// Makes a MultiWorkerMirroredStrategy; waits for the other workers without the GIL.
void make_multi_worker(distribute::MultiWorkerMirroredStrategy* self, const ClusterSpec& cluster,
                       const std::string& task_type, int task_id, const std::string& implementation,
                       double timeout_seconds, const distributed::ServerOptions& server,
                       const config::ConnectOptions& connect) {
  using distribute::CommunicationImplementation;
  distribute::CommunicationOptions communication;
  communication.implementation = implementation == "RING"   ? CommunicationImplementation::kRing
                                 : implementation == "NCCL" ? CommunicationImplementation::kNccl
                                                            : CommunicationImplementation::kAuto;
  communication.timeout_seconds = timeout_seconds;
  distribute::MultiWorkerSecurity security{server, connect};
  nb::gil_scoped_release release;
  new (self)
      distribute::MultiWorkerMirroredStrategy(cluster, task_type, task_id, communication, security);
}

}  // namespace

void bind_distributed(nb::module_& m) {
  m.attr("distributed_enabled") = true;
  m.def("connect_to_cluster", &connect, nb::arg("cluster"), nb::arg("job_name"),
        nb::arg("task_index"), nb::arg("rpc_timeout_ms"), nb::arg("connect_timeout_ms"),
        nb::arg("max_message_bytes"), nb::arg("root_cert_pem"), nb::arg("client_cert_pem"),
        nb::arg("client_key_pem"), nb::arg("auth_token"), nb::arg("bulk_connections").none(),
        nb::call_guard<nb::gil_scoped_release>());
  nb::class_<Server>(m, "Server")
      .def(
          "__init__",
          [](Server* self, const ClusterSpec& cluster, const std::string& job_name, int task_index,
             int64_t max_message_bytes, std::string server_cert_pem, std::string server_key_pem,
             std::string client_ca_pem, std::string auth_token, int64_t max_client_bytes,
             bool insecure) {
            new (self) Server(cluster, job_name, task_index,
                              server_options(max_message_bytes, std::move(server_cert_pem),
                                             std::move(server_key_pem), std::move(client_ca_pem),
                                             std::move(auth_token), max_client_bytes, insecure));
          },
          nb::arg("cluster"), nb::arg("job_name"), nb::arg("task_index"),
          nb::arg("max_message_bytes"), nb::arg("server_cert_pem"), nb::arg("server_key_pem"),
          nb::arg("client_ca_pem"), nb::arg("auth_token"), nb::arg("max_client_bytes"),
          nb::arg("insecure"), nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("target", &Server::target)
      .def("join", &Server::join, nb::call_guard<nb::gil_scoped_release>())
      .def("stop", &Server::stop, nb::call_guard<nb::gil_scoped_release>())
      .def(
          "update_credentials",
          [](Server& self, std::string server_cert_pem, std::string server_key_pem,
             std::string client_ca_pem, std::string auth_token) {
            self.update_credentials(
                server_options(0, std::move(server_cert_pem), std::move(server_key_pem),
                               std::move(client_ca_pem), std::move(auth_token), 0, false));
          },
          nb::arg("server_cert_pem"), nb::arg("server_key_pem"), nb::arg("client_ca_pem"),
          nb::arg("auth_token"), nb::call_guard<nb::gil_scoped_release>());
  m.def("pick_unused_loopback_port", &distributed::pick_unused_loopback_port);
  nb::class_<distribute::MultiWorkerMirroredStrategy, distribute::MirroredStrategy>(
      m, "_MultiWorkerMirroredStrategy")
      .def(
          "__init__",
          [](distribute::MultiWorkerMirroredStrategy* self, const ClusterSpec& cluster,
             const std::string& task_type, int task_id, const std::string& implementation,
             double timeout_seconds, std::string server_cert_pem, std::string server_key_pem,
             std::string client_ca_pem, std::string root_cert_pem, std::string client_cert_pem,
             std::string client_key_pem, std::string auth_token, bool insecure) {
            config::ConnectOptions connect;
            connect.tls.root_cert_pem = std::move(root_cert_pem);
            connect.tls.client_cert_pem = std::move(client_cert_pem);
            connect.tls.client_key_pem = std::move(client_key_pem);
            connect.auth_token = auth_token;
            make_multi_worker(self, cluster, task_type, task_id, implementation, timeout_seconds,
                              server_options(int64_t{256} << 20, std::move(server_cert_pem),
                                             std::move(server_key_pem), std::move(client_ca_pem),
                                             std::move(auth_token), 0, insecure),
                              connect);
          },
          nb::arg("cluster"), nb::arg("task_type"), nb::arg("task_id"), nb::arg("implementation"),
          nb::arg("timeout_seconds"), nb::arg("server_cert_pem"), nb::arg("server_key_pem"),
          nb::arg("client_ca_pem"), nb::arg("root_cert_pem"), nb::arg("client_cert_pem"),
          nb::arg("client_key_pem"), nb::arg("auth_token"), nb::arg("insecure"))
      .def_prop_ro("num_workers", &distribute::MultiWorkerMirroredStrategy::num_workers)
      .def_prop_ro("worker_index", &distribute::MultiWorkerMirroredStrategy::worker_index);
}

}  // namespace mt::python
