// mt::train::Checkpoint (checkpoint.h): what is tracked becomes named tensors, and back.
#include "runtime/train/checkpoint.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "runtime/eager/error.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/function/function_recorder.h"
#include "runtime/ops/constant.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/checkpoint_state.h"

namespace mt::train {
namespace {

template <class... Fns>
struct Overload : Fns... {
  using Fns::operator()...;
};
template <class... Fns>
Overload(Fns...) -> Overload<Fns...>;

std::string slot_name(const std::string& optimizer, const std::string& var, size_t index) {
  return absl::StrCat(optimizer, "/slots/", var, "/", index);
}

using Tensors = absl::flat_hash_map<std::string, Tensor>;

// Returns the checkpoint's tensor `name` after checking it fits `dtype` and `shape`.
absl::StatusOr<Tensor> find(const Tensors& tensors, const std::string& prefix,
                            const std::string& name, DType dtype, const Shape& shape) {
  auto found = tensors.find(name);
  if (found == tensors.end()) {
    return absl::NotFoundError(
        absl::StrCat("[checkpoint] ", prefix, " has no tensor '", name, "'"));
  }
  const Tensor& t = found->second;
  if (t.dtype() != dtype || t.shape() != shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "[checkpoint] ", prefix, ": tensor '", name, "' is ", dtype_name(t.dtype()), " ",
        t.shape().to_string(), ", the program's ", dtype_name(dtype), " ", shape.to_string()));
  }
  return t;
}

}  // namespace

Checkpoint::Checkpoint() : fs_(&internal::posix_file_system()) {}
Checkpoint::Checkpoint(internal::FileSystem& fs) : fs_(&fs) {}
Checkpoint::~Checkpoint() {
  if (writer_.joinable()) writer_.join();
}

void Checkpoint::add(Entry entry) {
  for (const Entry& e : entries_) {
    if (e.name == entry.name) {
      internal::throw_error(absl::InvalidArgumentError(
          absl::StrCat("[checkpoint] the name '", entry.name, "' is tracked twice")));
    }
  }
  entries_.push_back(std::move(entry));
}

void Checkpoint::track(const std::string& name, Variable variable) {
  if (!variable.defined()) {
    internal::throw_error(
        absl::InvalidArgumentError(absl::StrCat("[checkpoint] variable '", name, "' is empty")));
  }
  add({name, std::move(variable)});
}
void Checkpoint::track(const std::string& name, optimizers::Optimizer& optimizer) {
  add({name, &optimizer});
}
void Checkpoint::track(const std::string& name, int64_t& value) { add({name, &value}); }
void Checkpoint::track(const std::string& name, double& value) { add({name, &value}); }

std::vector<internal::NamedTensor> Checkpoint::tensors() const {
  std::vector<internal::NamedTensor> out;
  for (const Entry& e : entries_) {
    std::visit(Overload{
                   [&](const Variable& v) {
                     out.push_back({e.name, v.read_value()});
                   },
                   [&](optimizers::Optimizer* opt) {
                     out.push_back({e.name + "/iterations", constant(opt->iterations())});
                     for (const Entry& var : entries_) {
                       const auto* v = std::get_if<Variable>(&var.object);
                       if (v == nullptr) continue;
                       std::vector<Variable> slots = opt->slot_variables(*v);
                       for (size_t i = 0; i < slots.size(); ++i) {
                         out.push_back({slot_name(e.name, var.name, i), slots[i].read_value()});
                       }
                     }
                   },
                   [&](int64_t* value) {
                     out.push_back({e.name, constant(*value)});
                   },
                   [&](double* value) {
                     out.push_back({e.name, constant(*value)});
                   },
               },
               e.object);
  }
  return out;
}

void Checkpoint::write(const std::string& prefix) {
  sync();
  internal::throw_if_error(internal::write_checkpoint(*fs_, prefix, tensors()));
}

void Checkpoint::write_async(const std::string& prefix, std::function<absl::Status()> then) {
  sync();
  writer_ = std::thread([this, prefix, then = std::move(then), tensors = tensors()] {
    absl::Status s = internal::write_checkpoint(*fs_, prefix, tensors);
    if (s.ok() && then) s = then();
    writer_status_ = s;
  });
}

void Checkpoint::sync() {
  if (!writer_.joinable()) return;
  writer_.join();
  absl::Status s = std::exchange(writer_status_, absl::OkStatus());
  internal::throw_if_error(s);
}

void Checkpoint::restore(const std::string& prefix) {
  sync();
  // Each tensor is made where the variable that takes it lives (Note [Restoring onto
  // devices] in checkpoint_reader.cc); slots fall back to their variable's entry.
  internal::RestorePlacement placement;
  for (const Entry& e : entries_) {
    if (const auto* v = std::get_if<Variable>(&e.object)) {
      placement.add(e.name, *v);
    } else if (std::holds_alternative<optimizers::Optimizer*>(e.object)) {
      for (const Entry& var : entries_) {
        if (const auto* v = std::get_if<Variable>(&var.object)) {
          placement.add(absl::StrCat(e.name, "/slots/", var.name), *v);
        }
      }
    }
  }
  Tensors tensors = internal::value_or_throw(internal::read_checkpoint(*fs_, prefix, &placement));
  // Every check first; the assignments, which cannot fail, after (nothing half-assigned).
  std::vector<std::function<void()>> assignments;
  auto take = [&](const std::string& name, DType dtype, const Shape& shape) {
    return internal::value_or_throw(find(tensors, prefix, name, dtype, shape));
  };
  for (const Entry& e : entries_) {
    if (const auto* v = std::get_if<Variable>(&e.object)) {
      Tensor t = take(e.name, v->dtype(), v->shape());
      assignments.push_back([v = *v, t] { internal::assign_restored(v, t); });
    } else if (auto* const* opt = std::get_if<optimizers::Optimizer*>(&e.object)) {
      int64_t step = take(e.name + "/iterations", DType::kInt64, Shape()).to_vector<int64_t>()[0];
      assignments.push_back([opt = *opt, step] { opt->set_iterations(step); });
      for (const Entry& var : entries_) {
        const auto* v = std::get_if<Variable>(&var.object);
        for (size_t i = 0; v != nullptr && tensors.contains(slot_name(e.name, var.name, i)); ++i) {
          Tensor t = take(slot_name(e.name, var.name, i), v->dtype(), v->shape());
          assignments.push_back([opt = *opt, v = *v, i, t] {
            internal::assign_restored(opt->make_slot(v, static_cast<int>(i)), t);
          });
        }
      }
    } else if (auto* const* i = std::get_if<int64_t*>(&e.object)) {
      int64_t value = take(e.name, DType::kInt64, Shape()).to_vector<int64_t>()[0];
      assignments.push_back([i = *i, value] { *i = value; });
    } else if (auto* const* d = std::get_if<double*>(&e.object)) {
      double value = take(e.name, DType::kFloat64, Shape()).to_vector<double>()[0];
      assignments.push_back([d = *d, value] { *d = value; });
    }
  }
  for (auto& assign : assignments) assign();
}

}  // namespace mt::train

namespace mt::internal {

void assign_restored(Variable variable, const Tensor& value) {
  const std::shared_ptr<VariableState>& state = variable.handle_state();
  const bool plain = state != nullptr && state->mirrors.empty() && state->value.defined() &&
                     active_recorder() == nullptr;
  if (plain && value.impl()->device == state->value.impl()->device &&
      value.dtype() == state->value.dtype() && value.shape() == state->value.shape()) {
    state->value = value;  // a held copy of `value` makes the next assignment copy first
    return;
  }
  variable.assign(value);
}

}  // namespace mt::internal

namespace mt::train {

std::optional<std::string> latest_checkpoint(const std::string& directory) {
  internal::FileSystem& fs = internal::posix_file_system();
  std::optional<internal::CheckpointState> state = internal::read_checkpoint_state(fs, directory);
  if (!state.has_value() || state->latest.empty()) return std::nullopt;
  std::string prefix = directory + "/" + state->latest;
  if (!fs.exists(prefix + internal::kManifestSuffix)) return std::nullopt;
  return prefix;
}

}  // namespace mt::train
