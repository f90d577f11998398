#pragma once
// Drawing the source steps of a random op chain (op_chain.h), those with no input: leaves
// (constants), fills (Fill, and Range as a fill's fourth variant) and the random ops
// (MT_RANDOM_OPS).

#include <initializer_list>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

// A leaf (a constant), a fill (fill, zeros, ones, range) or a random op.
inline Step OpChain::draw_source() {
  const int which = uniform(0, 9);
  if (which < 6) return leaf(random_dtype(), random_shape());
  if (which >= 8) return draw_random();
  Step s;
  s.kind = StepKind::kFill;
  s.op = OpId::kFill;
  s.variant = uniform(0, 2);
  s.dtype = random_dtype();
  s.shape = random_shape();
  s.values = {static_cast<double>(uniform(-6, 6))};
  s.device = uniform(0, static_cast<int>(devices_.size()) - 1);
  if (chance(0.3)) draw_range(s);
  return s;
}

// Range from a start in [-6, 6] towards a limit up to 12 away, by a step of either sign (a
// fraction now and then, which an integer dtype rejects); bad: a zero step, or a step away
// from the limit. Its dtype is any (bool is rejected).
inline void OpChain::draw_range(Step& s) {
  static constexpr double kDeltas[] = {1, 2, 3, 0.5, 1.5};
  s.op = OpId::kRange;
  s.variant = 3;
  const double start = uniform(-6, 6), limit = start + uniform(-12, 12);
  double delta = kDeltas[uniform(0, 4)] * (limit < start ? -1 : 1);
  if (chance(kBadAttrs)) delta = chance(0.5) ? 0 : -delta;
  s.values = {start, limit, delta};
}

// A row of MT_RANDOM_OPS: a shape, uniform bounds or normal parameters, mostly valid; an
// op seed, mostly (a stateless op's seed pair is (seed, 7)).
inline Step OpChain::draw_random() {
  const std::initializer_list<OpId> ops = MT_OP_LIST(MT_RANDOM_OPS);
  Step s;
  s.kind = StepKind::kRandom;
  s.op = ops.begin()[uniform(0, static_cast<int>(ops.size()) - 1)];
  s.dtype = pick_dtype(op_dtypes(s.op));
  s.shape = random_shape();
  if (chance(kBadAttrs)) s.shape.push_back(-1);
  const OpId op = s.op;
  if (op == OpId::kRandomUniform || op == OpId::kRandomUniformInt ||
      op == OpId::kStatelessRandomUniformV2 || op == OpId::kStatelessRandomUniformIntV2) {
    const int lo = uniform(-4, 1), hi = chance(kBadAttrs) ? lo : lo + uniform(1, 5);
    s.values = {static_cast<double>(lo), static_cast<double>(hi)};
  } else {
    s.values = {uniform(-4, 4) * 0.5, uniform(1, 4) * 0.5};
  }
  if (chance(0.8)) s.seed = uniform(0, 15);  // few: each seed pair keeps a stream for good
  return s;
}

}  // namespace mt::testing
