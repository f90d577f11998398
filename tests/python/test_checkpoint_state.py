"""State that checkpoints carry besides variables: mt.random.Generator (TensorFlow's numbers,
its next draws restored, in this process and another) and dataset iterators (the position
restored as tf.data restores it, checked beside TensorFlow when it is at hand; pipelines
that cannot be saved raise at save time)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt


def _draws(g):
    return [g.normal([5]).numpy(), g.uniform([4]).numpy(), g.truncated_normal([3]).numpy(),
            g.uniform([6], 0, 100, dtype=mt.int64).numpy(),
            g.uniform([2], dtype=mt.float64).numpy()]


def _assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


# tf.random.Generator.from_seed(1234) in TensorFlow 2.21.
def test_generator_gives_tensorflows_numbers_and_states():
    g = mt.random.Generator.from_seed(1234)
    assert g.state.numpy().tolist() == [1234, 0, 0]
    np.testing.assert_array_equal(g.uniform([3]).numpy(), np.array(
        [0.3581475019454956, 0.11322760581970215, 0.566709041595459], np.float32))
    assert g.state.numpy().tolist() == [2002, 0, 0]
    assert g.uniform([2], 0, 10, dtype=mt.int64).numpy().tolist() == [9, 1]
    g.normal([2])
    assert g.state.numpy().tolist() == [3026, 0, 0]
    h = mt.random.Generator.from_state([5, 7, 9], alg="philox")
    np.testing.assert_array_equal(h.uniform([2]).numpy(), np.array(
        [0.16008341312408447, 0.4439568519592285], np.float32))
    assert mt.random.create_rng_state(2**64 + 3, "philox").tolist() == [3, 1, 0]
    assert mt.random.create_rng_state(-1, "philox").tolist() == [-1, -1, -1]


def test_generator_rejects_bad_states_and_algorithms():
    with pytest.raises(ValueError, match="must be 3 integers"):
        mt.random.Generator.from_state([1, 2])
    with pytest.raises(ValueError, match="Unsupported algorithm"):
        mt.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(ValueError, match="Must specify maxval"):
        mt.random.Generator.from_seed(1).uniform([2], dtype=mt.int32)
    with pytest.raises(TypeError, match="takes a Generator"):
        mt.random.set_global_generator(3)


def test_checkpoint_restores_a_generators_next_draws(tmp_path):
    g = mt.random.Generator.from_seed(42)
    g.normal([7])
    ckpt = mt.train.Checkpoint(rng=g)
    path = ckpt.save(str(tmp_path / "ckpt"))
    expected = _draws(g)
    ckpt.restore(path).assert_consumed()
    _assert_same(_draws(g), expected)
    other = mt.random.Generator.from_non_deterministic_state()
    mt.train.Checkpoint(rng=other).restore(path).assert_consumed()
    _assert_same(_draws(other), expected)


def test_global_generator_is_one_object_and_checkpoints(tmp_path):
    g = mt.random.get_global_generator()
    assert mt.random.get_global_generator() is g
    mt.random.set_global_generator(mt.random.Generator.from_seed(5))
    g = mt.random.get_global_generator()
    ckpt = mt.train.Checkpoint(rng=g)
    path = ckpt.write(str(tmp_path / "global"))
    expected = g.uniform([8]).numpy()
    ckpt.read(path)
    np.testing.assert_array_equal(g.uniform([8]).numpy(), expected)


_SAVE_THEN_DRAW = r"""
import sys, numpy as np, minitensor as mt
g = mt.random.Generator.from_seed(99)
g.uniform([10])
it = iter(mt.data.Dataset.range(50).shuffle(8).batch(3))
for _ in range(4):
    next(it)
mt.train.Checkpoint(rng=g, iterator=it).write(sys.argv[1])
np.save(sys.argv[1] + ".draws.npy", g.normal([6]).numpy())
np.save(sys.argv[1] + ".next.npy", np.concatenate([next(it).numpy() for _ in range(5)]))
"""


def test_generator_and_iterator_restore_in_another_process(tmp_path):
    prefix = str(tmp_path / "other")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _SAVE_THEN_DRAW, prefix], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    g = mt.random.Generator.from_seed(0)
    it = iter(mt.data.Dataset.range(50).shuffle(8).batch(3))  # another unseeded shuffle
    mt.train.Checkpoint(rng=g, iterator=it).read(prefix).assert_consumed()
    np.testing.assert_array_equal(g.normal([6]).numpy(), np.load(prefix + ".draws.npy"))
    np.testing.assert_array_equal(np.concatenate([next(it).numpy() for _ in range(5)]),
                                  np.load(prefix + ".next.npy"))


# Pipelines of every kind whose position a checkpoint records, built the same way with
# TensorFlow's tf.data in test_iterator_positions_match_tensorflows (shuffles excepted:
# their orders are not TensorFlow's); the text runs in both.
_PIPELINES = r"""
def _pipelines(data):
    x = np.arange(24, dtype=np.float32).reshape(12, 2)
    return {
        "slices_batch": data.Dataset.from_tensor_slices((x, np.arange(12))).batch(5),
        "range_map_repeat_take": data.Dataset.range(7).map(lambda v: v * 3).repeat(3).take(17),
        "skip_batch": data.Dataset.range(30).skip(4).batch(4, drop_remainder=True),
        "filter_dict": data.Dataset.from_tensor_slices({"a": np.arange(20)}).filter(
            lambda e: e["a"] % 3 == 0),
        "zip_unbatch": data.Dataset.zip((data.Dataset.range(6), data.Dataset.range(10, 16)))
        .batch(4).unbatch(),
    }


def _plain(element):
    if isinstance(element, dict):
        return {k: _plain(v) for k, v in element.items()}
    if isinstance(element, tuple):
        return [_plain(v) for v in element]
    return element.numpy().tolist()


def _values(it, n):
    out = []
    for _ in range(n):
        try:
            out.append(_plain(next(it)))
        except StopIteration:
            out.append("end")
            break
    return out
"""
exec(_PIPELINES)  # defines _pipelines, _plain and _values here


@pytest.mark.parametrize("name", sorted(_pipelines(mt.data)))
def test_iterator_restores_its_position(tmp_path, name):
    it = iter(_pipelines(mt.data)[name])
    _values(it, 2)
    ckpt = mt.train.Checkpoint(iterator=it)
    path = ckpt.save(str(tmp_path / name))
    expected = _values(it, 40)
    ckpt.restore(path).assert_consumed()
    assert _values(it, 40) == expected
    fresh = iter(_pipelines(mt.data)[name])
    mt.train.Checkpoint(iterator=fresh).restore(path).assert_consumed()
    assert _values(fresh, 40) == expected


# The other kinds, checked against the saved iterator itself.
def _more_pipelines():
    data = mt.data.Dataset
    return {
        "from_tensors_repeat": data.from_tensors(np.arange(3)).repeat(4),
        "padded_batch": data.range(1, 14).map(lambda n: mt.fill([int(n)], int(n)))
        .padded_batch(3),
        "interleave": data.range(4).interleave(
            lambda v: data.range(v * 10, v * 10 + 3), cycle_length=2, block_length=2),
        "cache": data.range(9).map(lambda v: v + 100).cache().repeat(2),
    }


@pytest.mark.parametrize("name", sorted(_more_pipelines()))
def test_other_kinds_restore_their_position(tmp_path, name):
    it = iter(_more_pipelines()[name])
    _values(it, 3)
    ckpt = mt.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / name))
    expected = _values(it, 30)
    assert expected[0] != "end"
    ckpt.read(path).assert_consumed()
    assert _values(it, 30) == expected
    fresh = iter(_more_pipelines()[name])
    mt.train.Checkpoint(iterator=fresh).read(path).assert_consumed()
    assert _values(fresh, 30) == expected


def test_shuffled_repeated_iterator_resumes_mid_epoch(tmp_path):
    def pipeline(seed):
        return mt.data.Dataset.range(10).shuffle(4, seed=seed).repeat(3).batch(3).skip(1)

    it = iter(pipeline(3))
    _values(it, 4)  # into the second pass, whose order differs from the first
    ckpt = mt.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / "shuffled"))
    expected = _values(it, 20)
    assert expected[-1] == "end"
    other = iter(pipeline(77))  # the checkpoint brings the saved seed
    mt.train.Checkpoint(iterator=other).read(path).assert_consumed()
    assert _values(other, 20) == expected
    # A new iteration of the saved dataset goes on with the next pass's order.
    ckpt.read(path)
    _values(it, 20)


def test_iterator_saved_at_its_end_stays_at_its_end(tmp_path):
    it = iter(mt.data.Dataset.range(3))
    _values(it, 5)
    ckpt = mt.train.Checkpoint(iterator=it)
    path = ckpt.write(str(tmp_path / "end"))
    fresh = iter(mt.data.Dataset.range(3))
    mt.train.Checkpoint(iterator=fresh).read(path)
    assert _values(fresh, 2) == ["end"]


def test_generator_pipelines_cannot_be_saved(tmp_path):
    def gen():
        yield from range(5)

    ds = mt.data.Dataset.from_generator(gen, output_signature=mt.data.TensorSpec([], mt.int64))
    it = iter(ds.map(lambda v: v * 2))
    next(it)
    ckpt = mt.train.Checkpoint(iterator=it)
    with pytest.raises(mt.errors.FailedPreconditionError,
                       match="Dataset.from_generator is stateful"):
        ckpt.write(str(tmp_path / "sub" / "ckpt"))
    assert not (tmp_path / "sub").exists()


def test_restore_into_another_pipeline_is_a_clear_error_that_changes_nothing(tmp_path):
    v = mt.Variable([1.0])
    it = iter(mt.data.Dataset.range(10).shuffle(3, seed=1))
    next(it)
    path = mt.train.Checkpoint(v=v, iterator=it).write(str(tmp_path / "two"))
    v.assign([5.0])
    plain = iter(mt.data.Dataset.range(10))
    with pytest.raises(ValueError, match="pipeline has 0 shuffles"):
        mt.train.Checkpoint(v=v, iterator=plain).read(path)
    assert v.numpy().tolist() == [5.0]
    assert _values(plain, 1) == [0]


def test_skip_follows_tensorflow():
    ds = mt.data.Dataset.range(5)
    assert [int(v) for v in ds.skip(2)] == [2, 3, 4]
    assert list(ds.skip(-1)) == []
    assert int(ds.skip(7).cardinality()) == 0
    assert int(ds.repeat().skip(3).cardinality()) == mt.data.INFINITE_CARDINALITY


def _tensorflow_python():
    try:
        import tensorflow  # noqa: F401
        return sys.executable
    except ImportError:
        return os.environ.get("MT_TF_PYTHON")


_TF_PIPELINES = r"""
import json, sys, numpy as np, tensorflow as tf
exec(sys.argv[2])
out = {}
for name, ds in _pipelines(tf.data).items():
    it = iter(ds)
    before = _values(it, 2)
    ckpt = tf.train.Checkpoint(iterator=it)
    path = ckpt.write(sys.argv[1] + "/" + name)
    after = _values(it, 40)
    ckpt.read(path)
    out[name] = [before, after, _values(it, 40)]
json.dump(out, open(sys.argv[1] + "/tf.json", "w"))
"""


def test_iterator_positions_match_tensorflows(tmp_path):
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable and MT_TF_PYTHON is not set")
    done = subprocess.run([python, "-c", _TF_PIPELINES, str(tmp_path), _PIPELINES],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(tmp_path / "tf.json") as f:
        tf_values = json.load(f)
    for name, ds in _pipelines(mt.data).items():
        it = iter(ds)
        before = _values(it, 2)
        ckpt = mt.train.Checkpoint(iterator=it)
        path = ckpt.write(str(tmp_path / f"mt-{name}"))
        after = _values(it, 40)
        ckpt.read(path)
        ours = [before, after, _values(it, 40)]
        assert json.loads(json.dumps(ours)) == tf_values[name], name
