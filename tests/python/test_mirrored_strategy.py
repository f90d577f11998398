"""mt.distribute.MirroredStrategy from Python: on logical CPUs (each case in a fresh
process, since the CPU is split before the runtime starts) the scope's mirrored variables,
run() on one thread per replica, all_reduce, reduce, the distributed datasets, Keras fit
data-parallel equal to one device, mt.function inside run() and run() inside an
mt.function (each replica replays its own recording), and the bad inputs; on a GPU, two
virtual GPUs."""

import textwrap

import minitensor as mt
from conftest import run_python

PRELUDE = """
import numpy as np
import minitensor as mt
cpu = mt.config.list_physical_devices("CPU")[0]
mt.config.set_logical_device_configuration(cpu, [mt.config.LogicalDeviceConfiguration()] * 2)
mt.config.set_visible_devices([], "GPU")
strategy = mt.distribute.MirroredStrategy(["/CPU:0", "/CPU:1"])
"""


def check(code):
    done = run_python(PRELUDE + textwrap.dedent(code))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_default_strategy_outside_any_scope():
    assert not mt.distribute.has_strategy()
    strategy = mt.distribute.get_strategy()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.run(lambda x: x + 1, args=(1,)) == 2
    assert mt.distribute.get_replica_context().num_replicas_in_sync == 1


def test_default_strategy_distributes_datasets_as_tensorflows():
    # TensorFlow 2.21's default strategy: the dataset itself, one input pipeline.
    strategy = mt.distribute.get_strategy()
    dataset = mt.data.Dataset.range(4).batch(2)
    assert strategy.experimental_distribute_dataset(dataset) is dataset
    contexts = []

    def dataset_fn(context):
        contexts.append((context.num_input_pipelines, context.input_pipeline_id,
                         context.num_replicas_in_sync))
        return dataset

    assert strategy.distribute_datasets_from_function(dataset_fn) is dataset
    assert contexts == [(1, 0, 1)]
    total = mt.constant(0, mt.int64)
    for batch in strategy.experimental_distribute_dataset(dataset):
        total += strategy.reduce("SUM", strategy.run(mt.reduce_sum, args=(batch,)), axis=None)
    assert int(total) == 6
    assert float(strategy.reduce("SUM", mt.constant([1.0, 2.0]), axis=0)) == 3.0


def test_scope_mirrors_variables_and_run_gives_each_replica_its_copy():
    out = check("""
    with strategy.scope():
        assert mt.distribute.has_strategy() and mt.distribute.in_cross_replica_context()
        assert mt.distribute.get_strategy() is strategy
        v = mt.Variable([1.0, 2.0], name="v")
    reads = strategy.run(lambda: v.read_value())
    print(type(reads).__name__, [t.device[-5:] for t in reads.values])
    ids = strategy.run(lambda: mt.distribute.get_replica_context().replica_id_in_sync_group)
    print(ids.values, strategy.cross_device_ops, strategy.num_replicas_in_sync)
    v.assign([5.0, 6.0])   # cross-replica: every copy
    print([r.numpy().tolist() for r in strategy.run(v.read_value).values])
    """)
    assert out.splitlines() == [
        "PerReplica ['CPU:0', 'CPU:1']", "(0, 1) ReductionToOneDevice 2",
        "[[5.0, 6.0], [5.0, 6.0]]"]


def test_all_reduce_reduce_and_the_distributed_datasets():
    out = check("""
    def fn():
        ctx = mt.distribute.get_replica_context()
        r = float(ctx.replica_id_in_sync_group)
        return ctx.all_reduce(mt.distribute.ReduceOp.SUM, mt.constant([1 + r, 10 * r]))
    print([t.numpy().tolist() for t in strategy.run(fn).values])
    parts = mt.distribute.PerReplica([mt.constant([1.0, 2.0, 3.0]), mt.constant([4.0, 6.0])])
    print(strategy.reduce("MEAN", parts, axis=0).numpy())
    ds = mt.data.Dataset.from_tensor_slices((np.arange(8.0), np.arange(8))).batch(4)
    for x, y in strategy.experimental_distribute_dataset(ds):
        print([v.numpy().tolist() for v in x.values], [v.device[-5:] for v in y.values])
    dfn = strategy.distribute_datasets_from_function(
        lambda ctx: mt.data.Dataset.range(4).batch(ctx.get_per_replica_batch_size(2)))
    print([[v.numpy().tolist() for v in b.values] for b in dfn])
    """)
    assert out.splitlines() == [
        "[[3.0, 10.0], [3.0, 10.0]]", "3.2",
        "[[0.0, 1.0], [2.0, 3.0]] ['CPU:0', 'CPU:1']",
        "[[4.0, 5.0], [6.0, 7.0]] ['CPU:0', 'CPU:1']",
        "[[[0], [1]], [[2], [3]]]"]


def test_keras_fit_on_two_replicas_equals_one_device_with_the_whole_batch():
    out = check("""
    def train(scope):
        mt.keras.utils.set_random_seed(3)
        with scope:
            model = mt.keras.Sequential([mt.keras.Input((4,)),
                                         mt.keras.layers.Dense(8, activation="relu"),
                                         mt.keras.layers.Dense(3)])
            model.compile(loss=mt.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          optimizer=mt.keras.optimizers.Adam(0.01))
        rng = np.random.default_rng(0)
        x = rng.normal(size=(64, 4)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0).astype(np.int32)
        history = model.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
        return model.get_weights(), history.history["loss"]
    import contextlib
    one, one_loss = train(contextlib.nullcontext())
    two, two_loss = train(strategy.scope())
    print(max(float(np.max(np.abs(a - b))) for a, b in zip(one, two)) < 1e-5,
          np.allclose(one_loss, two_loss, atol=1e-5))
    """)
    assert out.split() == ["True", "True"]


TRAIN_STEP = """
def make():
    with strategy.scope():
        w = mt.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        opt = mt.keras.optimizers.Adam(0.05)

    def step(x, y):
        with mt.GradientTape() as tape:
            loss = mt.reduce_sum(mt.square(mt.reduce_sum(mt.matmul(x, w), axis=1) - y)) / 8.0
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss
    return w, opt, step

def batches(i):
    x = np.sin(np.arange(24, dtype=np.float32) + i).reshape(8, 3)
    y = np.cos(np.arange(8, dtype=np.float32) * (i + 1))
    return (mt.distribute.PerReplica([mt.constant(x[:4]), mt.constant(x[4:])]),
            mt.distribute.PerReplica([mt.constant(y[:4]), mt.constant(y[4:])]))

def copies(w):
    return [t.numpy() for t in strategy.run(w.read_value).values]
"""


def test_a_function_inside_run_replays_per_replica_equal_to_eager():
    out = check(TRAIN_STEP + textwrap.dedent("""
    results = []
    for wrap in (lambda f: f, mt.function):
        w, opt, step = make()
        fn = wrap(step)
        losses = [[t.numpy() for t in strategy.run(fn, args=batches(i)).values]
                  for i in range(5)]
        results.append((np.array(losses), copies(w)))
    (eager_losses, eager_w), (losses, got_w) = results
    print(fn.experimental_get_tracing_count(), fn.replay_kind, int(opt.iterations))
    print(np.array_equal(eager_losses, losses),
          all(np.array_equal(a, b) for a, b in zip(eager_w, got_w)),
          np.array_equal(got_w[0], got_w[1]))
    """))
    assert out.split() == ["2", "steps", "5", "True", "True", "True"]


def test_run_inside_a_function_replays_each_replicas_step():
    out = check(TRAIN_STEP + textwrap.dedent("""
    w, opt, step = make()
    eager = [strategy.reduce("SUM", strategy.run(step, args=batches(i)), axis=None).numpy()
             for i in range(4)]
    eager_w = copies(w)
    w, opt, step = make()

    @mt.function
    def distributed_step(x, y):
        return strategy.reduce("SUM", strategy.run(step, args=(x, y)), axis=None)

    got = [distributed_step(*batches(i)).numpy() for i in range(4)]
    inner = strategy._replica_functions[step]
    print(np.array_equal(np.array(eager), np.array(got)),
          all(np.array_equal(a, b) for a, b in zip(eager_w, copies(w))))
    print(distributed_step.replay_kind, inner.experimental_get_tracing_count(), inner.replay_kind)
    """))
    assert out.split() == ["True", "True", "eager", "2", "steps"]


def test_errors_reach_the_caller_and_nothing_hangs():
    out = check("""
    def fails_on_one():
        ctx = mt.distribute.get_replica_context()
        if ctx.replica_id_in_sync_group == 1:
            raise ValueError("replica one broke")
        ctx.all_reduce("SUM", mt.constant([1.0]))   # replica 0 waits here
    try:
        strategy.run(fails_on_one)
    except ValueError as e:
        print("ValueError:", e)
    def shapes():
        ctx = mt.distribute.get_replica_context()
        ctx.all_reduce("SUM", mt.zeros([ctx.replica_id_in_sync_group + 1]))
    try:
        strategy.run(shapes)
    except mt.errors.InvalidArgumentError as e:
        print(type(e).__name__, "every replica must reduce values of one shape" in str(e))
    plain = mt.Variable([1.0])
    opt = mt.keras.optimizers.SGD(0.1)
    try:
        strategy.run(lambda: opt.apply_gradients([(mt.constant([1.0]), plain)]))
    except mt.errors.InvalidArgumentError as e:
        print("outside the scope:", "create the variables it trains under" in str(e),
              plain.numpy().tolist())
    try:
        strategy.run(lambda: strategy.run(lambda: None))
    except mt.errors.FailedPreconditionError as e:
        print("nested run:", "called inside run()" in str(e))
    try:
        mt.distribute.MirroredStrategy(["/CPU:0"], cross_device_ops=mt.distribute.NcclAllReduce())
    except mt.errors.FailedPreconditionError as e:
        print("nccl:", "CPU:0 is not a local GPU" in str(e))
    print(strategy.run(lambda: 7).values)   # the strategy still works
    """)
    assert out.splitlines() == [
        "ValueError: replica one broke", "InvalidArgumentError True",
        "outside the scope: True [1.0]", "nested run: True",
        "nccl: True", "(7, 7)"]


def test_two_virtual_gpus_train_as_one_device(needs_gpu):
    done = run_python("""
    import numpy as np
    import minitensor as mt
    gpu = mt.config.list_physical_devices("GPU")[0]
    mt.config.set_logical_device_configuration(
        gpu, [mt.config.LogicalDeviceConfiguration(memory_limit=1024)] * 2)
    strategy = mt.distribute.MirroredStrategy(["/GPU:0", "/GPU:1"])  # both on card 0
    print(strategy.num_replicas_in_sync, strategy.cross_device_ops)
    def train(scope):
        mt.keras.utils.set_random_seed(3)
        with scope:
            model = mt.keras.Sequential([mt.keras.Input((4,)), mt.keras.layers.Dense(1)])
            model.compile(loss="mse", optimizer=mt.keras.optimizers.SGD(0.1))
        x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(-1, 4)
        model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, batch_size=8, verbose=0)
        return model.get_weights()
    import contextlib
    diff = max(float(np.max(np.abs(a - b))) for a, b in
               zip(train(contextlib.nullcontext()), train(strategy.scope())))
    print(diff < 1e-5)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["2", "ReductionToOneDevice", "True"]
