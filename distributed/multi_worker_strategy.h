#pragma once
// mt::distribute::MultiWorkerMirroredStrategy: synchronous data parallelism over the
// worker processes of a cluster, on one host or several, as
// tf.distribute.MultiWorkerMirroredStrategy (docs/distribute.md, "Several workers").
// Every worker process runs the same program; each is a MirroredStrategy over its own
// devices whose collectives also combine with the other workers', over the cluster's
// servers (distributed/collective_group.h), so that every worker ends each step with the
// same variables:
//
//   // on each worker, with its own task index
//   mt::distribute::MultiWorkerMirroredStrategy strategy(
//       {{"worker", {"10.0.0.1:2222", "10.0.0.2:2222"}}}, "worker", task_index);
//   { auto scope = strategy.scope(); w.emplace(mt::random::normal({784, 10})); }
//   strategy.run([&](mt::distribute::ReplicaContext& ctx) { ... apply_gradients ... });
//
// The strategy starts the server of its task unless this process runs it already
// (mt::distributed::Server), then waits for every other worker's server (the collective
// timeout). Collectives: Note [No collective hangs] in distributed/collective_group.h;
// a lost worker fails every survivor's collective with Unavailable naming it, and every
// later one. Errors throw mt::Error.

#include <memory>
#include <string>
#include <string_view>

#include "distributed/distributed.h"
#include "runtime/strategy/mirrored_strategy.h"

namespace mt::distribute {

// tf.distribute.experimental.CommunicationImplementation.
enum class CommunicationImplementation { kAuto, kRing, kNccl };

// tf.distribute.experimental.CommunicationOptions.
struct CommunicationOptions {
  // kAuto and kRing: the ring over the cluster's servers. kNccl: Unimplemented (NCCL
  // between processes is not built yet).
  CommunicationImplementation implementation = CommunicationImplementation::kAuto;
  // Of each collective, and of waiting for the other workers at start; 0: 300 s.
  double timeout_seconds = 0;
};

// The cluster's security, as its servers and clients take it (docs/distributed.md).
struct MultiWorkerSecurity {
  distributed::ServerOptions server;  // for the server the strategy starts, when it does
  config::ConnectOptions connect;     // to reach the other workers (tls, auth_token)
};

class MultiWorkerMirroredStrategy : public MirroredStrategy {
 public:
  // Joins `cluster` as task `task_id` of job `task_type` ("chief" or "worker"). Throws
  // InvalidArgument for a bad spec, task or timeout, Unimplemented for kNccl, Unavailable
  // naming a worker that does not answer within the timeout, Unauthenticated when one
  // refuses this worker's credentials.
  MultiWorkerMirroredStrategy(const distributed::ClusterSpec& cluster, std::string_view task_type,
                              int task_id, const CommunicationOptions& communication = {},
                              const MultiWorkerSecurity& security = {});
  ~MultiWorkerMirroredStrategy() override;

  int num_workers() const;
  // Returns this worker's rank: the chief first, then the workers in task order.
  int worker_index() const;
  // Returns whether this worker is the chief (task "chief", else worker 0), which writes
  // checkpoints, as TensorFlow's.
  bool is_chief() const { return worker_index() == 0; }

 private:
  explicit MultiWorkerMirroredStrategy(std::shared_ptr<mt::internal::WorkerCollective> workers);

  std::shared_ptr<mt::internal::WorkerCollective> workers_;
};

}  // namespace mt::distribute
