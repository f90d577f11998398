#pragma once
// mt::distribute::MirroredStrategy: synchronous data parallelism on the GPUs of one
// machine, as tf.distribute.MirroredStrategy. Variables created under scope() are mirrored
// (one copy per device, each replica's from replica 0's value); run() calls a function
// once per replica, each on its own thread under its device's scope; an optimizer's
// apply_gradients inside run() all-reduces the gradients and updates every copy.
//
//   mt::distribute::MirroredStrategy strategy;       // every GPU, else the CPU
//   std::optional<mt::Variable> w;
//   { auto scope = strategy.scope(); w.emplace(mt::random::normal({784, 10})); }
//   mt::optimizers::SGD sgd(0.1);
//   strategy.run([&](mt::distribute::ReplicaContext& ctx) {
//     mt::GradientTape tape;
//     mt::Tensor loss = mt::reduce_sum(mt::matmul(x_of[ctx.replica_id_in_sync_group()], *w));
//     sgd.apply_gradients({{tape.gradient(loss, {*w})[0], *w}});   // all-reduced
//   });
//
// The replicas' values combine through NCCL when every replica is its own physical GPU and
// NCCL loads, else by AddN on one device (Note [Choosing the cross-device ops] in
// mirrored_strategy.cc). Errors throw mt::Error: NotFound for an unknown device,
// InvalidArgument for a device named twice or values that differ across replicas,
// FailedPrecondition for cross-device ops that cannot run; an error in one replica stops
// the others at their next collective and run() throws it.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "runtime/eager/tensor.h"
#include "runtime/strategy/reduce_op.h"

namespace mt::distribute {

namespace internal {
struct StrategyState;
}  // namespace internal
}  // namespace mt::distribute

namespace mt::internal {
class WorkerCollective;
}  // namespace mt::internal

namespace mt::distribute {

// The cross_device_ops argument: kAuto chooses as TensorFlow does.
struct CrossDeviceOptions {
  enum class Kind { kAuto, kNcclAllReduce, kReductionToOneDevice };
  Kind kind = Kind::kAuto;
  int64_t bucket_bytes = int64_t{25} << 20;  // NCCL: values packed per all-reduce
  std::string reduce_to_device;              // ReductionToOneDevice: "" is the first device
};

// What a replica sees while run() calls it (tf.distribute.ReplicaContext).
class ReplicaContext {
 public:
  // Returns this replica's id among the replicas of every worker (worker_index times the
  // replicas per worker, plus local_replica_id()), and how many there are in all.
  int replica_id_in_sync_group() const;
  int num_replicas_in_sync() const;
  // Returns this replica's index among this process's replicas (devices()).
  int local_replica_id() const { return id_; }
  // Returns the full name of this replica's device.
  const std::string& device() const;
  // Returns `op` of `value` over every replica, on this replica's device. Every replica
  // must call it, in the same order, with values of one shape and dtype.
  Tensor all_reduce(ReduceOp op, const Tensor& value);
  std::vector<Tensor> all_reduce(ReduceOp op, absl::Span<const Tensor> values);

 private:
  friend struct internal::StrategyState;
  ReplicaContext(internal::StrategyState* state, int id) : state_(state), id_(id) {}
  internal::StrategyState* state_;
  int id_;
};

// Returns the calling thread's replica context inside MirroredStrategy::run, else nullptr.
ReplicaContext* get_replica_context();

class MirroredStrategy {
 public:
  // Mirrors over `devices` (names as DeviceScope takes them); empty: every logical GPU, or
  // CPU:0 when there is none. Logs TensorFlow's INFO line naming the devices.
  explicit MirroredStrategy(std::vector<std::string> devices = {},
                            CrossDeviceOptions cross_device_ops = {});
  virtual ~MirroredStrategy();
  MirroredStrategy(const MirroredStrategy&) = delete;
  MirroredStrategy& operator=(const MirroredStrategy&) = delete;

  // Returns the replicas of every worker (MultiWorkerMirroredStrategy), this process's for
  // a MirroredStrategy.
  int num_replicas_in_sync() const;
  // Returns this process's replicas' devices, full names, in replica order.
  const std::vector<std::string>& devices() const;
  // Returns "NcclAllReduce", "ReductionToOneDevice" or, between workers,
  // "CollectiveAllReduce".
  const char* cross_device_ops_name() const;

  // While a Scope lives, variables this thread creates are mirrored on every device.
  class Scope {
   public:
    ~Scope();
    Scope(Scope&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    friend class MirroredStrategy;
    explicit Scope(internal::StrategyState* state);
    internal::StrategyState* state_;
  };
  Scope scope();

  // Calls fn(ReplicaContext&) once per replica, each on its own thread under its device's
  // scope, and returns when every replica has returned: nothing, or what each of this
  // process's replicas returned, in replica order. Throws the first replica's error (the others
  // stop at their next collective); FailedPrecondition when called from inside a replica.
  template <typename Fn>
  auto run(Fn&& fn) {
    using Result = std::invoke_result_t<Fn&, ReplicaContext&>;
    if constexpr (std::is_void_v<Result>) {
      run_replicas(fn);
    } else {
      std::vector<Result> results(devices().size());
      run_replicas([&](ReplicaContext& ctx) { results[ctx.local_replica_id()] = fn(ctx); });
      return results;
    }
  }
  void run_replicas(const std::function<void(ReplicaContext&)>& fn);

  // Returns `op` of one value per replica of this process (axis: first reduced within each
  // value along that axis; MEAN then divides by the total count), over every worker, on
  // the first replica's device.
  Tensor reduce(ReduceOp op, absl::Span<const Tensor> per_replica,
                std::optional<int> axis = std::nullopt);

 protected:
  // MultiWorkerMirroredStrategy's: this worker's replicas on `devices` (names, as above),
  // whose values combine over the workers of `workers` too (runtime/strategy/
  // worker_collective.h). Logs nothing.
  MirroredStrategy(std::vector<std::string> devices,
                   std::shared_ptr<mt::internal::WorkerCollective> workers);

 private:
  // reduce()'s last stage between workers: `op` of this worker's `sum` of `count` values.
  Tensor reduce_between_workers(ReduceOp op, const Tensor& sum, double count);

  std::unique_ptr<internal::StrategyState> state_;
};

}  // namespace mt::distribute
