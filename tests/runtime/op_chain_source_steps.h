#pragma once
// Drawing the source steps of a random op chain (op_chain.h), those with no input: leaves
// (constants), fills and the random ops (MT_RANDOM_OPS).

#include <initializer_list>

#include "tests/runtime/op_chain.h"

namespace mt::testing {

// A leaf (a constant), a fill (fill, zeros, ones) or a random op.
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
  return s;
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
