"""Remote tasks from Python (docs/distributed.md, "From Python"): ClusterSpec and
SimpleClusterResolver as TensorFlow's, mt.distribute.Server, connecting, ops on
/job:worker/task:N, the token and mutual TLS, traces of remote ops, and bad input.

Workers are Python processes running mt.distribute.Server on unused loopback ports. A
client must connect before its runtime initialises, so clients run in fresh interpreters
(run_python); checks that fail before connecting run in this process."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import minitensor as mt
from conftest import run_python

ClusterSpec = mt.train.ClusterSpec
SimpleClusterResolver = mt.distribute.cluster_resolver.SimpleClusterResolver

needs_distributed = pytest.mark.skipif(
    not mt.distribute.is_available(),
    reason="the package was built without the distributed layer (no gRPC)")

WORKER = """
import sys, minitensor as mt
kwargs = eval(sys.argv[3])
mt.distribute.Server({"worker": sys.argv[1].split(",")}, "worker", int(sys.argv[2]),
                     **kwargs).join()
"""


class Workers:
    """Worker processes serving tasks 0..n-1 of job "worker" on loopback ports."""

    def __init__(self, n, **server_kwargs):
        self.addresses = [f"127.0.0.1:{mt.distribute.pick_unused_loopback_port()}"
                          for _ in range(n)]
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        self.processes = [
            subprocess.Popen([sys.executable, "-c", WORKER, ",".join(self.addresses), str(i),
                              repr(server_kwargs)], env=env, stderr=subprocess.PIPE, text=True)
            for i in range(n)]

    def spec(self):
        return {"worker": self.addresses}

    def stop(self):
        for p in self.processes:
            p.kill()
        return [p.communicate()[1] for p in self.processes]


@pytest.fixture(scope="module")
def workers():
    if not mt.distribute.is_available():
        pytest.skip("the package was built without the distributed layer (no gRPC)")
    w = Workers(2)
    yield w
    w.stop()


def client(code, **values):
    """Runs `code` in a fresh interpreter with `values` defined; returns its stdout, or
    fails with its stderr."""
    prelude = "".join(f"{k} = {v!r}\n" for k, v in values.items())
    result = run_python(prelude + "import minitensor as mt\n" + textwrap.dedent(code),
                        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert result.returncode == 0, result.stderr
    return result.stdout


# ClusterSpec and SimpleClusterResolver, as TensorFlow's.

def test_cluster_spec_behaves_as_tensorflows():
    spec = ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {0: "p0:2222", 2: "p2:2222"}})
    assert spec.jobs == ["worker", "ps"]
    assert spec.num_tasks("worker") == 2 and spec.num_tasks("ps") == 2
    assert spec.task_indices("ps") == [0, 2]
    assert spec.task_address("worker", 1) == "w1:2222"
    assert spec.job_tasks("ps") == ["p0:2222", None, "p2:2222"]
    assert spec.as_dict() == {"worker": ["w0:2222", "w1:2222"], "ps": {0: "p0:2222", 2: "p2:2222"}}
    assert ClusterSpec(spec) == spec and spec == spec.as_dict()
    assert ClusterSpec({"worker": {1: "a:1", 0: "b:1"}}).as_dict() == {"worker": ["b:1", "a:1"]}
    assert bool(spec) and not ClusterSpec({})
    assert repr(ClusterSpec({"w": ["a:1"]})) == "ClusterSpec({'w': ['a:1']})"
    with pytest.raises(ValueError, match="No such job in cluster: 'chief'"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 1 in job 'ps'"):
        spec.task_address("ps", 1)
    with pytest.raises(TypeError, match="must be a dictionary"):
        ClusterSpec(["w0:2222"])
    with pytest.raises(TypeError, match="must be a list or a dictionary"):
        ClusterSpec({"worker": "w0:2222"})
    with pytest.raises(TypeError, match="must be bytes or unicode"):
        ClusterSpec({"worker": [2222]})


def test_simple_cluster_resolver_behaves_as_tensorflows():
    spec = ClusterSpec({"worker": ["w0:2222", "w1:2222"]})
    r = SimpleClusterResolver(spec)
    assert r.cluster_spec() is spec
    assert r.master() == ""
    assert r.master("worker", 1) == "w1:2222"
    assert r.master("worker", 1, rpc_layer="grpc") == "grpc://w1:2222"
    assert r.environment == "" and r.num_accelerators() == {}
    r = SimpleClusterResolver(spec, master="w0:2222", task_type="worker", task_id=0,
                              environment="google", num_accelerators={"GPU": 1}, rpc_layer="grpc")
    assert r.master() == "grpc://w0:2222"
    assert (r.task_type, r.task_id, r.rpc_layer) == ("worker", 0, "grpc")
    assert r.environment == "google" and r.num_accelerators() == {"GPU": 1}
    r.task_id = 1
    assert r.task_id == 1
    assert isinstance(r, mt.distribute.cluster_resolver.ClusterResolver)
    with pytest.raises(TypeError, match="cluster_spec must be a `mt.train.ClusterSpec`"):
        SimpleClusterResolver({"worker": ["w0:2222"]})
    with pytest.raises(TypeError, match="master must be a string"):
        SimpleClusterResolver(spec, master=1)


# Connecting and running ops on workers.

@needs_distributed
def test_ops_run_on_a_worker_and_read_back(workers):
    out = client("""
        mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec(spec))
        print([d.name for d in mt.config.list_logical_devices()])
        print([d.name for d in mt.config.list_logical_devices("CPU")][2])
        with mt.device("/job:worker/task:1"):
            a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            c = mt.matmul(a, mt.transpose(a))
        print(c.device)
        print(c.numpy().tolist())
        with mt.device(mt.config.list_logical_devices()[1]):   # a LogicalDevice
            d = c + 1.0                                         # c travels from task 1
        print(d.device, d.numpy().tolist())
        print((c * 2.0).device)                                 # unscoped: runs here
    """, spec=workers.spec())
    assert out.splitlines() == [
        "['/job:localhost/replica:0/task:0/device:CPU:0', "
        "'/job:worker/replica:0/task:0/device:CPU:0', '/job:worker/replica:0/task:1/device:CPU:0']",
        "/job:worker/replica:0/task:1/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
        "[[14.0, 32.0], [32.0, 77.0]]",
        "/job:worker/replica:0/task:0/device:CPU:0 [[15.0, 33.0], [33.0, 78.0]]",
        "/job:localhost/replica:0/task:0/device:CPU:0",
    ]


@needs_distributed
def test_a_resolver_connects_unless_its_master_is_local(workers):
    out = client("""
        spec = mt.train.ClusterSpec(spec)
        Resolver = mt.distribute.cluster_resolver.SimpleClusterResolver
        mt.config.experimental_connect_to_cluster(Resolver(spec))   # master "": nothing
        print(len(mt.config.list_logical_devices()))
    """, spec=workers.spec())
    assert out == "1\n"
    out = client("""
        spec = mt.train.ClusterSpec(spec)
        Resolver = mt.distribute.cluster_resolver.SimpleClusterResolver
        resolver = Resolver(spec, master="grpc://" + spec.task_address("worker", 0))
        mt.config.experimental_connect_to_cluster(resolver)
        with mt.device("/job:worker/replica:0/task:0/device:CPU:0"):
            x = mt.fill([2], 3.0)
        print(x.device, x.numpy().tolist())
    """, spec=workers.spec())
    assert out == "/job:worker/replica:0/task:0/device:CPU:0 [3.0, 3.0]\n"


@needs_distributed
def test_connect_to_host_takes_a_server_target(workers):
    out = client("""
        mt.config.experimental_connect_to_host(["grpc://" + a for a in addresses])
        print(len(mt.config.list_logical_devices()))
    """, addresses=workers.addresses)
    assert out == "3\n"


@needs_distributed
def test_a_large_tensor_round_trips_over_bulk_connections(workers):
    # 12 MiB: at least two kChunkBytes (4 MiB, distributed/tensor_codec.h), so with
    # bulk_connections=2 the upload and the read each go in two parts, one per connection.
    out = client("""
        import numpy as np
        mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec(spec),
                                                  bulk_connections=2)
        x = np.arange(3 << 20, dtype=np.float32)
        with mt.device("/job:worker/task:0"):
            y = mt.constant(x) + 1.0
        print(y.device)
        print(np.array_equal(y.numpy(), x + 1.0))
    """, spec=workers.spec())
    assert out.splitlines() == ["/job:worker/replica:0/task:0/device:CPU:0", "True"]


@needs_distributed
def test_trace_records_remote_ops(workers):
    out = client("""
        import json
        mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec(spec))
        a = mt.constant([1.0, 2.0, 3.0])
        with mt.trace.Recording():
            with mt.device("/job:worker/task:1"):
                b = mt.add(a, a)
            b.numpy()
        events = json.loads(mt.trace.to_json())["traceEvents"]
        print(json.dumps([e for e in events if e.get("cat") == "op"]))
    """, spec=workers.spec())
    (op,) = json.loads(out)
    assert op["name"] == "AddV2"
    assert op["args"]["device"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert op["args"]["shapes"] == "(3,), (3,) -> (3,)"
    assert op["args"]["reason"] == "scope"
    assert op["args"]["timing"] == "issue"
    assert op["args"]["bytes_allocated"] == 12


# The server in this process.

@needs_distributed
def test_server_serves_until_stopped():
    port = mt.distribute.pick_unused_loopback_port()
    server = mt.distribute.Server({"local": [f"127.0.0.1:{port}"]}, start=False)
    assert server.target == f"grpc://127.0.0.1:{port}"
    assert server.server_def["job_name"] == "local" and server.server_def["task_index"] == 0
    joined = threading.Thread(target=server.join)  # join() starts it
    joined.start()
    out = client("""
        mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec(spec))
        with mt.device("/job:local/task:0"):
            print(mt.reduce_sum(mt.constant([1, 2, 3])).numpy())
    """, spec={"local": [f"127.0.0.1:{port}"]})
    assert out == "6\n"
    assert joined.is_alive()
    server.stop()
    joined.join(10)
    assert not joined.is_alive()
    local = mt.distribute.Server.create_local_server()
    assert local.target.startswith("grpc://127.0.0.1:")
    local.stop()


# Authentication.

@needs_distributed
def test_token_is_required_when_the_server_has_one():
    w = Workers(1, auth_token="s3cret")
    try:
        out = client("""
            spec = mt.train.ClusterSpec(spec)
            for token in [None, "wrong"]:
                try:
                    mt.config.experimental_connect_to_cluster(spec, auth_token=token)
                except mt.errors.UnauthenticatedError as e:
                    print(type(e).__name__, e.error_code, str(e).split("refused the call: ")[1])
            mt.config.experimental_connect_to_cluster(spec, auth_token=b"s3cret")
            with mt.device("/job:worker/task:0"):
                print(mt.fill([2], 1.5).numpy().tolist())
        """, spec=w.spec())
    finally:
        log = w.stop()[0]
    assert out.splitlines() == [
        "UnauthenticatedError 16 [GetDevices] no auth token was sent (ConnectOptions::auth_token)",
        "UnauthenticatedError 16 [GetDevices] the auth token sent is not the task's "
        "(ConnectOptions::auth_token)",
        "[1.5, 1.5]",
    ]
    assert "[Server] refused GetDevices from" in log


def make_certs(d):
    """Writes a CA, a server certificate for 127.0.0.1 and a client certificate into `d`, as
    tests/distributed/auth_fixture.h does; returns False when openssl could not."""
    ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    steps = [f"printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > {d}/san.ext",
             f"openssl req -x509 {ec} -days 2 -subj /CN=mt-test-ca -keyout {d}/ca.key "
             f"-out {d}/ca.pem"]
    for name, ext in [("server", f" -extfile {d}/san.ext"), ("client", "")]:
        steps += [f"openssl req {ec} -subj /CN={name} -keyout {d}/{name}.key -out {d}/{name}.csr",
                  f"openssl x509 -req -in {d}/{name}.csr -CA {d}/ca.pem -CAkey {d}/ca.key "
                  f"-CAcreateserial -days 1{ext} -out {d}/{name}.pem"]
    return subprocess.run(" && ".join(steps), shell=True, capture_output=True).returncode == 0


@needs_distributed
def test_mutual_tls_admits_only_clients_with_a_certificate(tmp_path):
    if shutil.which("openssl") is None or not make_certs(tmp_path):
        pytest.skip("openssl could not make certificates")
    pem = {p.stem + "_" + p.suffix[1:]: p.read_text() for p in tmp_path.glob("*.[pk]e[my]")}
    w = Workers(1, server_cert_pem=pem["server_pem"], server_key_pem=pem["server_key"],
                client_ca_pem=pem["ca_pem"])
    try:
        out = client("""
            spec = mt.train.ClusterSpec(spec)
            try:
                mt.config.experimental_connect_to_cluster(
                    spec, root_cert_pem=pem["ca_pem"], connect_timeout_ms=2000)
            except mt.errors.UnavailableError as e:
                print("without a certificate:", type(e).__name__)
            mt.config.experimental_connect_to_cluster(
                spec, root_cert_pem=pem["ca_pem"], client_cert_pem=pem["client_pem"],
                client_key_pem=pem["client_key"].encode())
            with mt.device("/job:worker/task:0"):
                print(mt.fill([1], 2.0).numpy().tolist())
        """, spec=w.spec(), pem=pem)
    finally:
        w.stop()
    assert out.splitlines() == ["without a certificate: UnavailableError", "[2.0]"]


# Bad input (docs/bad-input.md).

@needs_distributed
@pytest.mark.parametrize("spec,message", [
    ({"worker": []}, "invalid cluster spec: job 'worker' has no task"),
    ({"worker": ["127.0.0.1"]}, "invalid cluster spec: .*port"),
    ({"worker": {0: "127.0.0.1:1", 2: "127.0.0.1:2"}}, "invalid cluster spec: the tasks of job "
     "'worker' must be numbered 0 to n-1, got \\[0, 2\\] \\(sparse jobs are not supported\\)"),
])
def test_bad_cluster_specs_are_invalid_argument(spec, message):
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[experimental_connect_to_cluster\] " + message):
        mt.config.experimental_connect_to_cluster(ClusterSpec(spec))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"^\[Server\] " + message):
        mt.distribute.Server(spec, "worker", 0)


@needs_distributed
def test_bad_arguments_are_refused_as_tensorflow_refuses_them():
    spec = ClusterSpec({"worker": ["127.0.0.1:1"]})
    with pytest.raises(ValueError, match="must be a `ClusterSpec` or a `ClusterResolver`"):
        mt.config.experimental_connect_to_cluster({"worker": ["127.0.0.1:1"]})
    with pytest.raises(ValueError, match="protocol must be 'grpc', got 'grpc\\+verbs'"):
        mt.config.experimental_connect_to_cluster(spec, protocol="grpc+verbs")
    with pytest.raises(mt.errors.UnimplementedError, match="cluster_device_filters"):
        mt.config.experimental_connect_to_cluster(spec, cluster_device_filters=object())
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match="task index 3 is outside job 'worker', which has 1 tasks"):
        mt.config.experimental_connect_to_cluster(spec, job_name="worker", task_index=3)
    with pytest.raises(mt.errors.InvalidArgumentError, match="timeouts must be positive"):
        mt.config.experimental_connect_to_cluster(spec, rpc_timeout_ms=0)
    with pytest.raises(TypeError, match="the PEM text itself, not a file name"):
        mt.config.experimental_connect_to_cluster(spec, root_cert_pem=pathlib.Path("ca.pem"))
    for value in [2.0, True, "2"]:
        message = f"bulk_connections must be an int or None, got {type(value).__name__}$"
        with pytest.raises(TypeError, match=r"^\[experimental_connect_to_cluster\] " + message):
            mt.config.experimental_connect_to_cluster(spec, bulk_connections=value)
    for value in [-1, 65]:
        with pytest.raises(ValueError, match=r"^\[experimental_connect_to_cluster\] "
                           r"bulk_connections must be in \[0, 64\] \(0 or None: one per "
                           rf"hardware thread, at most 8\), got {value}$"):
            mt.config.experimental_connect_to_cluster(spec, bulk_connections=value)
    with pytest.raises(ValueError, match="bulk_connections must be in"):
        mt.config.experimental_connect_to_host("127.0.0.1:1", bulk_connections=-1)
    with pytest.raises(ValueError, match="Must specify an explicit `job_name`"):
        mt.distribute.Server({"a": ["127.0.0.1:1"], "b": ["127.0.0.1:2"]})
    with pytest.raises(ValueError, match="Must specify an explicit `task_index`"):
        mt.distribute.Server({"a": ["127.0.0.1:1", "127.0.0.1:2"]})
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"^\[Server\] refusing to serve "
                       r"0.0.0.0:1 without client authentication"):
        mt.distribute.Server({"worker": ["0.0.0.0:1"]})


@needs_distributed
def test_an_unreachable_task_is_unavailable():
    port = mt.distribute.pick_unused_loopback_port()
    start = time.monotonic()
    with pytest.raises(mt.errors.UnavailableError,
                       match=rf"task /job:worker/replica:0/task:0 at 127.0.0.1:{port} is "
                             "unavailable"):
        mt.config.experimental_connect_to_cluster(
            ClusterSpec({"worker": [f"127.0.0.1:{port}"]}), connect_timeout_ms=300)
    assert time.monotonic() - start < 10


@needs_distributed
def test_connecting_after_initialisation_is_failed_precondition(workers):
    out = client("""
        mt.constant(1.0)
        try:
            mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec(spec))
        except mt.errors.FailedPreconditionError as e:
            print(e)
    """, spec=workers.spec())
    assert out.startswith("Cluster cannot be connected after the runtime is initialized")


def test_without_the_distributed_layer_every_name_is_unimplemented():
    if mt.distribute.is_available():
        pytest.skip("the package was built with the distributed layer")
    spec = ClusterSpec({"worker": ["127.0.0.1:2222"]})
    with pytest.raises(mt.errors.UnimplementedError,
                       match="built without the distributed layer"):
        mt.config.experimental_connect_to_cluster(spec)
    with pytest.raises(mt.errors.UnimplementedError,
                       match="built without the distributed layer"):
        mt.distribute.Server(spec, "worker", 0)
    with pytest.raises(mt.errors.UnimplementedError,
                       match="built without the distributed layer"):
        mt.distribute.pick_unused_loopback_port()
