"""The ops composed of other ops with TensorFlow's names: mt.reduce_logsumexp, mt.norm,
mt.math.l2_normalize, mt.nn.moments, mt.nn.gelu and the activations, the cross-entropies
with logits, mt.nn.embedding_lookup and mt.einsum. Values against NumPy (in float64),
gradients through a GradientTape, and TensorFlow 2.21's errors."""

import math

import numpy as np
import pytest

import minitensor as mt
from conftest import raises_at_call_or_first_read

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype(np.float32)


def _gradient(fn, value):
    v = mt.Variable(np.asarray(value, np.float32))
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(fn(v))
    return tape.gradient(y, v).numpy()


def _numeric_gradient(fn, value, step=1e-3):
    """The central difference of sum(fn(x)), computed in float64 through NumPy's fn."""
    value = np.asarray(value, np.float64)
    grad = np.zeros_like(value)
    for i in np.ndindex(value.shape):
        up, down = value.copy(), value.copy()
        up[i] += step
        down[i] -= step
        grad[i] = (fn(up).sum() - fn(down).sum()) / (2 * step)
    return grad


# reduce_logsumexp

def _logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True), ([0, 1], True)])
def test_reduce_logsumexp_matches_numpy(axis, keepdims):
    got = mt.reduce_logsumexp(X, axis=axis, keepdims=keepdims)
    ref = _logsumexp(X.astype(np.float64), None if axis is None else tuple(np.atleast_1d(axis)),
                     keepdims)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6)
    assert mt.math.reduce_logsumexp is mt.reduce_logsumexp


def test_reduce_logsumexp_neither_overflows_nor_loses_infinities():
    got = mt.reduce_logsumexp([[1000.0, 1000.0], [-np.inf, -np.inf], [1.0, np.inf]], axis=1)
    np.testing.assert_allclose(got.numpy(), [1000.0 + math.log(2.0), -np.inf, np.inf])


def test_reduce_logsumexp_gradient_is_softmax():
    softmax = np.exp(X - _logsumexp(X, 1, keepdims=True))
    np.testing.assert_allclose(_gradient(lambda v: mt.reduce_logsumexp(v, axis=1), X), softmax,
                               rtol=1e-5)


def test_reduce_logsumexp_refuses_integers():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[reduce_logsumexp\] input_tensor must be a floating-point"):
        mt.reduce_logsumexp([1, 2])


# norm

@pytest.mark.parametrize("ord, axis, ref", [
    ("euclidean", None, lambda x: np.sqrt((x ** 2).sum())),
    (2, 1, lambda x: np.sqrt((x ** 2).sum(1))),
    (1, 0, lambda x: np.abs(x).sum(0)),
    (np.inf, -1, lambda x: np.abs(x).max(-1)),
    (3, 1, lambda x: (np.abs(x) ** 3).sum(1) ** (1 / 3)),
    (0.5, None, lambda x: (np.abs(x) ** 0.5).sum() ** 2),
    ("fro", (0, 1), lambda x: np.linalg.norm(x, "fro")),
    (1, (0, 1), lambda x: np.linalg.norm(x, 1)),
    (np.inf, [0, 1], lambda x: np.linalg.norm(x, np.inf)),
    (1, (1, 0), lambda x: np.linalg.norm(x, np.inf)),
])
def test_norm_matches_numpy(ord, axis, ref):  # noqa: A002
    got = mt.norm(X, ord=ord, axis=axis)
    np.testing.assert_allclose(got.numpy(), ref(X.astype(np.float64)), rtol=2e-6)
    assert mt.linalg.norm is mt.norm


def test_norm_keeps_dims_on_request():
    assert mt.norm(X, axis=1, keepdims=True).shape == (3, 1)
    assert mt.norm(X, keepdims=True).shape == (1, 1)
    assert mt.norm(X, ord=1, axis=(0, 1), keepdims=True).shape == (1, 1)


def test_norm_gradient_is_the_unit_vector():
    np.testing.assert_allclose(_gradient(lambda v: mt.norm(v, axis=1), X),
                               X / np.linalg.norm(X, axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(_gradient(lambda v: mt.norm(v, ord=1), X), np.sign(X))


@pytest.mark.parametrize("kwargs, message", [  # TensorFlow 2.21's messages
    ({"ord": 0}, "'ord' must be a supported vector norm, got 0"),
    ({"ord": -1}, "'ord' must be a supported vector norm, got -1"),
    ({"ord": "fro"}, "'ord' must be a supported vector norm, got fro"),
    ({"ord": "fro", "axis": 1}, "'ord' must be a supported vector norm, got fro"),
    ({"ord": 3, "axis": (0, 1)}, r"'ord' must be a supported matrix norm in \['euclidean', "
                                 r"'fro', 1, 2, inf\], got 3"),
    ({"axis": [0, 1, 1]}, r"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                          r"got \[0, 1, 1\]"),
    ({"axis": [0, 0]}, r"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                       r"got \(0, 0\)"),
    ({"axis": 1.5}, "'axis' must be None, an integer, or a tuple of 2 unique integers, got 1.5"),
])
def test_norm_refuses_an_unsupported_ord_or_axis(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mt.norm(X, **kwargs)


def test_norm_refuses_the_spectral_matrix_norm():
    with pytest.raises(mt.errors.UnimplementedError, match=r"\[norm\] ord=2 over two axes"):
        mt.norm(X, ord=2, axis=(0, 1))


# l2_normalize and moments

def test_l2_normalize_divides_by_the_norm_and_keeps_zeros():
    got = mt.math.l2_normalize([[3.0, -4.0], [0.0, 0.0]], axis=1)
    np.testing.assert_allclose(got.numpy(), [[0.6, -0.8], [0.0, 0.0]])
    np.testing.assert_allclose(mt.nn.l2_normalize(X).numpy(), X / np.linalg.norm(X), rtol=1e-6)
    np.testing.assert_allclose(mt.math.l2_normalize(X, dim=0).numpy(),
                               X / np.linalg.norm(X, axis=0), rtol=1e-6)


def test_l2_normalize_gradient():
    def ref(x):
        return x / np.sqrt((x ** 2).sum(1, keepdims=True))
    weights = RNG.normal(size=X.shape)
    np.testing.assert_allclose(
        _gradient(lambda v: mt.math.l2_normalize(v, axis=1) * weights.astype(np.float32), X),
        _numeric_gradient(lambda x: ref(x) * weights, X), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("axes, keepdims",
                         [([0], False), ([0, 1], False), ([1], True), (1, False)])
def test_moments_match_numpy(axes, keepdims):
    mean, variance = mt.nn.moments(X, axes=axes, keepdims=keepdims)
    axis = tuple(np.atleast_1d(axes))
    np.testing.assert_allclose(mean.numpy(), X.mean(axis, keepdims=keepdims), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(variance.numpy(), X.var(axis, keepdims=keepdims), rtol=1e-5)


def test_moments_of_half_floats_are_computed_in_float32():
    mean, variance = mt.nn.moments(mt.constant([1.0, 2.0, 3.0], mt.float16), axes=[0])
    assert mean.dtype == mt.float16 and variance.dtype == mt.float16
    assert float(mean) == 2.0 and float(variance) == np.float16(2 / 3)  # TensorFlow's values


def test_moments_variance_gradient():
    grad = _gradient(lambda v: mt.nn.moments(v, axes=[1])[1], X)
    np.testing.assert_allclose(grad, 2 * (X - X.mean(1, keepdims=True)) / X.shape[1], rtol=1e-5,
                               atol=1e-6)


# activations

def _gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def test_gelu_is_exact_by_default_and_tanh_on_request():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(mt.nn.gelu(x).numpy(), _gelu(x.astype(np.float64)), rtol=1e-6,
                               atol=1e-7)
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(mt.nn.gelu(x, approximate=True).numpy(), tanh, rtol=1e-6,
                               atol=1e-7)
    # TensorFlow 2.21: tf.nn.gelu([-1, 0.5, 2]) and with approximate=True
    np.testing.assert_allclose(mt.nn.gelu([-1.0, 0.5, 2.0]).numpy(),
                               [-0.15865526, 0.34573123, 1.9544997], rtol=1e-6)
    np.testing.assert_allclose(mt.nn.gelu([-1.0, 0.5, 2.0], approximate=True).numpy(),
                               [-0.158808, 0.345714, 1.9545977], rtol=1e-5)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_gradient(approximate):
    def ref(x):
        if approximate:
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return _gelu(x)
    np.testing.assert_allclose(_gradient(lambda v: mt.nn.gelu(v, approximate=approximate), X),
                               _numeric_gradient(ref, X), rtol=1e-3, atol=1e-4)


def test_gelu_refuses_integers_with_tensorflows_message():
    with pytest.raises(ValueError, match=r"`features.dtype` must be a floating point tensor."):
        mt.nn.gelu([1, 2])


def test_nn_activations_match_numpy():
    x = np.array([-100.0, -1.0, 0.0, 2.0, 7.0, 100.0], np.float32)
    np.testing.assert_allclose(mt.nn.leaky_relu(x).numpy(), np.where(x > 0, x, 0.2 * x))
    np.testing.assert_allclose(mt.nn.relu6(x).numpy(), np.clip(x, 0, 6))
    np.testing.assert_allclose(mt.nn.elu(x).numpy(),
                               np.where(x > 0, x, np.expm1(np.minimum(x, 0))), rtol=1e-6)
    np.testing.assert_allclose(mt.nn.softplus(x).numpy(), np.logaddexp(0, x.astype(np.float64)),
                               rtol=1e-6, atol=1e-44)  # exp(-100) is a float32 subnormal
    np.testing.assert_allclose(mt.nn.silu(x).numpy(), x / (1 + np.exp(-x.astype(np.float64))),
                               rtol=1e-6, atol=1e-40)
    assert mt.nn.swish is mt.nn.silu and mt.math.softplus is mt.nn.softplus


def test_activation_composites_refuse_integers():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[Softplus\] features must be a floating-point tensor, got "
                             "dtype int32"):
        mt.nn.softplus([1, 2])


# cross-entropies with logits

def test_softmax_cross_entropy_with_logits_matches_numpy():
    labels = RNG.dirichlet(np.ones(4), size=3).astype(np.float32)
    got = mt.nn.softmax_cross_entropy_with_logits(labels=labels, logits=X)
    np.testing.assert_allclose(got.numpy(), -(labels * (X - _logsumexp(X, 1, True))).sum(1),
                               rtol=1e-5)
    grad = _gradient(lambda v: mt.nn.softmax_cross_entropy_with_logits(labels, v), X)
    softmax = np.exp(X - _logsumexp(X, 1, True))
    np.testing.assert_allclose(grad, softmax - labels, rtol=1e-5, atol=1e-6)
    # TensorFlow 2.21 along axis 0
    got = mt.nn.softmax_cross_entropy_with_logits([[0.0, 1.0], [1.0, 0.0]],
                                                  [[2.0, -1.0], [0.0, 3.0]], axis=0)
    np.testing.assert_allclose(got.numpy(), [2.126928, 4.01815], rtol=1e-6)


def test_softmax_cross_entropy_with_logits_refuses_other_shapes():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"logits and labels must be broadcastable: logits_size=\[2,4\] "
                             r"labels_size=\[2,3\]"):
        mt.nn.softmax_cross_entropy_with_logits(np.ones((2, 3)), np.ones((2, 4), np.float32))


def test_sigmoid_cross_entropy_with_logits_is_stable():
    logits = np.array([-100.0, -2.0, 0.0, 1.0, 100.0], np.float32)
    labels = np.array([0.0, 1.0, 0.5, 0.0, 1.0], np.float32)
    x = logits.astype(np.float64)
    ref = np.logaddexp(0, x) - x * labels
    got = mt.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6, atol=1e-7)
    grad = _gradient(lambda v: mt.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=v),
                     logits)
    np.testing.assert_allclose(grad, 1 / (1 + np.exp(-x)) - labels, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"labels": [1.0, 0.0]}, ValueError, "Both `labels` and `logits` must be provided"),
    ({"labels": np.ones(2), "logits": np.ones(3, np.float32)}, ValueError,
     r"`logits` and `labels` must have the same shape, received \(\(3,\) vs \(2,\)\)."),
])
def test_sigmoid_cross_entropy_with_logits_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        mt.nn.sigmoid_cross_entropy_with_logits(**kwargs)


# embedding_lookup

def test_embedding_lookup_gathers_rows_and_clips_their_norm():
    params = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 6.0]], np.float32)
    got = mt.nn.embedding_lookup(params, [[0, 2]])
    assert got.shape == (1, 2, 2)
    np.testing.assert_array_equal(got.numpy(), params[[[0, 2]]])
    clipped = mt.nn.embedding_lookup(params, [0, 1, 2], max_norm=2.0)  # TensorFlow's values
    np.testing.assert_allclose(clipped.numpy(), [[1.2, 1.6], [1.0, 0.0], [0.0, 2.0]], rtol=1e-6)
    assert mt.nn.embedding_lookup([params], [1]).numpy().tolist() == [[1.0, 0.0]]


def test_embedding_lookup_gradient_adds_up_repeated_ids():
    grad = _gradient(lambda v: mt.nn.embedding_lookup(v, [0, 2, 0]), np.zeros((3, 2)))
    np.testing.assert_array_equal(grad, [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]])


def test_embedding_lookup_errors():
    raises_at_call_or_first_read(
        mt.errors.InvalidArgumentError, r"indices\[0\] = 3 is not in \[0, 3\)",
        lambda: mt.nn.embedding_lookup(np.ones((3, 2), np.float32), [3]))
    with pytest.raises(mt.errors.UnimplementedError, match="split into several tensors"):
        mt.nn.embedding_lookup([np.ones((3, 2)), np.ones((3, 2))], [0])


# dropout

def test_stateless_dropout_gives_tensorflows_mask():
    x = mt.ones([2, 4])
    # TensorFlow 2.21: tf.nn.experimental.stateless_dropout(tf.ones([2, 4]), 0.5, seed=[1, 2])
    np.testing.assert_array_equal(mt.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2]),
                                  [[2, 0, 2, 0], [0, 2, 0, 0]])
    np.testing.assert_array_equal(
        mt.nn.experimental.stateless_dropout(x, 0.5, seed=[1, 2], noise_shape=[1, 4]),
        [[2, 0, 2, 0], [2, 0, 2, 0]])


def test_dropout_keeps_about_one_minus_rate_scaled():
    mt.random.set_seed(3)
    out = mt.nn.dropout(np.ones((100, 100), np.float32), 0.3).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    shared = mt.nn.dropout(np.ones((50, 4), np.float32), 0.5, noise_shape=[50, 1]).numpy()
    assert (shared == shared[:, :1]).all()
    np.testing.assert_array_equal(mt.nn.dropout(X, 0.0).numpy(), X)


def test_dropout_takes_a_scalar_tensor_rate_by_ops_as_tensorflow():
    # TensorFlow 2.21: stateless_dropout(tf.ones([2, 4]), tf.constant(0.5) / tf.Variable(0.25),
    # seed=[1, 2]); a rank-1 rate is its ValueError.
    x = mt.ones([2, 4])
    np.testing.assert_array_equal(
        mt.nn.experimental.stateless_dropout(x, mt.constant(0.5), seed=[1, 2]),
        [[2, 0, 2, 0], [0, 2, 0, 0]])
    r = mt.Variable(0.25)
    np.testing.assert_allclose(mt.nn.experimental.stateless_dropout(x, r, seed=[1, 2]),
                               np.array([[1, 0, 1, 0], [1, 1, 0, 0]]) / 0.75, rtol=1e-6)
    with pytest.raises(ValueError, match=r"^Shape \(2,\) must have rank 0$"):
        mt.nn.dropout(x, mt.constant([0.5, 0.5]))
    mt.random.set_seed(3)
    kept = mt.nn.dropout(mt.ones([100, 100]), mt.constant(0.3)).numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.02


@pytest.mark.parametrize("fn", [mt.nn.dropout,
                                lambda x, rate: mt.nn.experimental.stateless_dropout(
                                    x, rate, seed=[1, 2])])
def test_dropout_errors_are_tensorflows(fn):
    for rate in (1.0, -0.1):
        with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in "
                                             rf"the range \[0, 1\). Received: rate={rate}"):
            fn(X, rate)
    with pytest.raises(ValueError, match=r"`x.dtype` must be a floating point tensor as `x` "
                                         r"will be scaled. Received: x_dtype=mt.int32"):
        fn(mt.constant([1, 2]), 0.5)


# einsum

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ik->jk", [(2, 3), (2, 4)]),
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ij,j->i", [(2, 3), (3,)]),
    ("ij,j", [(2, 3), (3,)]),
    ("ij,kl->", [(2, 3), (3, 4)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)]),
    ("...ij,jk", [(5, 2, 3), (3, 4)]),
    ("b...d,bd->b...", [(2, 3, 4, 5), (2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i j , jk -> ik", [(2, 3), (3, 4)]),
    ("iJ,Jk->ik", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_matches_numpy(equation, shapes):
    operands = [RNG.normal(size=s).astype(np.float32) for s in shapes]
    got = mt.einsum(equation, *operands)
    ref = np.einsum(equation.replace(" ", ""), *[o.astype(np.float64) for o in operands])
    assert got.shape == ref.shape
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-5)
    assert mt.linalg.einsum is mt.einsum


@pytest.mark.parametrize("equation, shapes", [("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
                                              ("ij,ij->i", [(2, 3), (2, 3)]),
                                              ("...ij,...jk->...ik", [(2, 2, 3), (1, 3, 4)])])
def test_einsum_gradients_match_numpy(equation, shapes):
    a, b = [RNG.normal(size=s).astype(np.float32) for s in shapes]
    va, vb = mt.Variable(a), mt.Variable(b)
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.einsum(equation, va, vb))
    grad_a, grad_b = tape.gradient(y, [va, vb])
    np.testing.assert_allclose(grad_a.numpy(), _numeric_gradient(
        lambda x: np.einsum(equation, x, b), a), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(grad_b.numpy(), _numeric_gradient(
        lambda x: np.einsum(equation, a, x), b), rtol=1e-3, atol=1e-3)


A, B = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)


@pytest.mark.parametrize("equation, operands, error, message", [  # TensorFlow 2.21's messages
    ("ij,jk->ikx", [A, B], ValueError,
     "Output subscripts contain the label x not present in the input subscripts."),
    ("ij,jk->ii", [A, B], ValueError,
     "Output subscripts contain a label appearing more than once: ij,jk->ii"),
    ("ij,jk->ik", [A], ValueError, 'Got 1 inputs for equation "ij,jk->ik", expecting 2'),
    ("i1,1k->ik", [A, B], ValueError, "Subscripts have incorrect format: i1,1k->ik"),
    ("ij,jk->i-k", [A, B], ValueError, "Subscripts have incorrect format: ij,jk->i-k"),
    ("ijk,jk->ik", [A, B], mt.errors.InvalidArgumentError,
     r"\[Einsum\] Expected input 0 to have rank 3 but got: 2"),
    ("ij,jk->ik", [A, np.ones((4, 4), np.float32)], mt.errors.InvalidArgumentError,
     r"\[Einsum\] Expected dimension 3 at axis 0 of the input shaped \[4, 4\] but got "
     "dimension 4"),
    ("ii->i", [np.ones((3, 3))], mt.errors.UnimplementedError,
     r"\[Einsum\] input 0 repeats a label \(a diagonal\)"),
])
def test_einsum_errors(equation, operands, error, message):
    with pytest.raises(error, match=message):
        mt.einsum(equation, *operands)


def test_composites_record_in_a_function():
    @mt.function
    def f(x):
        return mt.einsum("ij,jk->ik", x, mt.transpose(x)) + mt.reduce_logsumexp(x) + \
            mt.norm(x, axis=1, keepdims=True)
    first = f(mt.constant(X)).numpy()
    np.testing.assert_allclose(f(mt.constant(X)).numpy(), first)
    ref = X @ X.T + _logsumexp(X) + np.linalg.norm(X, axis=1, keepdims=True)
    np.testing.assert_allclose(first, ref, rtol=1e-5)
