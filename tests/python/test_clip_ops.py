"""mt.clip_by_value, mt.clip_by_norm, mt.clip_by_global_norm, mt.linalg.global_norm and the
Keras optimizers' clipnorm, clipvalue and global_clipnorm: TensorFlow 2.21's and Keras 3's
values and errors, eagerly and inside mt.function."""

import math
import re

import numpy as np
import pytest

import minitensor as mt


def test_clip_by_value_limits_each_element():
    np.testing.assert_array_equal(mt.clip_by_value([1.0, 5.0, -3.0], -2.0, 2.0).numpy(),
                                  [1.0, 2.0, -2.0])
    out = mt.clip_by_value(mt.constant([1, 5]), 2, 3)
    assert out.dtype == mt.int32 and out.numpy().tolist() == [2, 3]
    np.testing.assert_array_equal(mt.clip_by_value([1.0, 5.0], [0.0, 6.0], 2.0).numpy(),
                                  [1.0, 6.0])


def test_clip_by_value_refuses_a_lossy_bound():
    with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
        mt.clip_by_value(mt.constant([1, 2]), 0, 1.5)


def test_clip_by_norm_scales_to_the_norm_over_axes():
    np.testing.assert_allclose(mt.clip_by_norm([3.0, 4.0], 1.0).numpy(), [0.6, 0.8])
    np.testing.assert_allclose(mt.clip_by_norm([[3.0, 4.0], [0.0, 0.0]], 1.0, axes=[1]).numpy(),
                               [[0.6, 0.8], [0.0, 0.0]])
    np.testing.assert_array_equal(mt.clip_by_norm([0.3, 0.4], 1.0).numpy(),
                                  np.float32([0.3, 0.4]))  # within the norm: unchanged


def test_clip_by_global_norm_returns_the_clipped_list_and_the_norm():
    clipped, norm = mt.clip_by_global_norm([mt.constant([3.0, 4.0]), None, mt.constant([12.0])],
                                           6.5)
    assert float(norm) == 13.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), [1.5, 2.0])
    np.testing.assert_allclose(clipped[2].numpy(), [6.0])
    assert float(mt.linalg.global_norm([mt.constant([3.0, 4.0]), None, [12.0]])) == 13.0


def test_a_non_finite_global_norm_makes_every_value_nan():
    clipped, norm = mt.clip_by_global_norm([mt.constant([np.inf, 1.0])], 1.0)
    assert math.isinf(float(norm)) and np.isnan(clipped[0].numpy()).all()


@pytest.mark.parametrize("fn", [lambda t: mt.clip_by_global_norm(t, 1.0), mt.linalg.global_norm])
@pytest.mark.parametrize("value, kind", [(mt.constant([1.0]), "Tensor"), ("ab", "str")])
def test_a_global_norm_needs_a_sequence(fn, value, kind):
    with pytest.raises(TypeError, match=r"`t_list` should be a sequence of tensors. Received "
                                        rf"<class '[\w.]*{kind}'>."):
        fn(value)


KERAS = {  # Keras 3.15: SGD(learning_rate=1.0, **kw) on [3, 4] -> [1, 2] and [-12] -> [3]
    "clipnorm": ([0.4, 1.2], [4.0]), "clipvalue": ([0.5, 1.5], [3.5]),
    "global_clipnorm": ([0.53846151, 1.38461542], [4.84615421])}


@pytest.mark.parametrize("kw, value", [("clipnorm", 1.0), ("clipvalue", 0.5),
                                       ("global_clipnorm", 2.0)])
@pytest.mark.parametrize("as_function", [False, True])
def test_an_optimizer_clips_as_keras(kw, value, as_function):
    v1, v2 = mt.Variable([1.0, 2.0]), mt.Variable([3.0])
    opt = mt.keras.optimizers.SGD(learning_rate=1.0, **{kw: value})
    assert getattr(opt, kw) == value

    def step(g1, g2):
        opt.apply_gradients([(g1, v1), (g2, v2), (None, mt.Variable([0.0]))])

    (mt.function(step) if as_function else step)(mt.constant([3.0, 4.0]), mt.constant([-12.0]))
    np.testing.assert_allclose(v1.numpy(), KERAS[kw][0], rtol=1e-6)
    np.testing.assert_allclose(v2.numpy(), KERAS[kw][1], rtol=1e-6)


def test_clipping_follows_each_replays_gradients():
    v = mt.Variable([0.0, 0.0])
    opt = mt.keras.optimizers.SGD(learning_rate=1.0, global_clipnorm=1.0)
    f = mt.function(lambda g: opt.apply_gradients([(g, v)]))
    f(mt.constant([0.0, -0.5]))   # within the norm
    f(mt.constant([-30.0, -40.0]))  # clipped to norm 1
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(v.numpy(), [0.6, 1.3], rtol=1e-6)


def test_only_one_clipping_may_be_set():
    with pytest.raises(ValueError, match=re.escape(
            "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
            "clipnorm=1.0, clipvalue=None, global_clipnorm=2.0")):
        mt.keras.optimizers.Adam(clipnorm=1.0, global_clipnorm=2.0)
