"""mt.distribute.cluster_resolver.TFConfigClusterResolver against TensorFlow 2.21's answers
for the same TF_CONFIG values (recorded here)."""

import json

import pytest

import minitensor as mt

R = mt.distribute.cluster_resolver.TFConfigClusterResolver
CLUSTER = {"worker": ["localhost:12345", "localhost:23456"], "chief": ["localhost:1"]}


def _set(monkeypatch, config):
    if config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", config if isinstance(config, str) else json.dumps(config))


# (TF_CONFIG, resolver arguments) -> (cluster, task_type, task_id, rpc_layer, master(),
# master("worker", 1)), as TensorFlow gives them.
CASES = [
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}}, {},
     (CLUSTER, "worker", 1, None, "localhost:23456", "localhost:23456")),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"}, {},
     (CLUSTER, "worker", 1, "grpc", "grpc://localhost:23456", "grpc://localhost:23456")),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}},
     {"task_type": "chief", "task_id": 0, "rpc_layer": "grpc"},
     (CLUSTER, "chief", 0, "grpc", "grpc://localhost:1", "grpc://localhost:23456")),
    (None, {}, ({}, None, None, None, "", "")),
    ({"cluster": {"worker": ["a:1"]}}, {}, ({"worker": ["a:1"]}, None, None, None, "", "")),
    ({"task": {"type": "worker", "index": 0}}, {}, ({}, "worker", 0, None, "", "")),
    ({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}}, {},
     ({"worker": ["a:1"]}, "worker", 0, None, "", "")),  # one task: this process
]


@pytest.mark.parametrize("config, kwargs, expected", CASES)
def test_tf_config_reads_as_tensorflow_reads_it(monkeypatch, config, kwargs, expected):
    _set(monkeypatch, config)
    r = R(**kwargs)
    got = (r.cluster_spec().as_dict(), r.task_type, r.task_id, r.rpc_layer, r.master(),
           r.master("worker", 1))
    assert got == expected


def test_sparse_jobs_bad_json_and_later_assignments(monkeypatch):
    _set(monkeypatch, {"cluster": {"worker": {"0": "a:1", "2": "b:2"}},
                       "task": {"type": "worker", "index": 2}})
    r = R()
    assert r.cluster_spec().as_dict() == {"worker": {0: "a:1", 2: "b:2"}}
    assert r.master() == "b:2"
    with pytest.raises(ValueError, match="No task with index 1 in job 'worker'"):
        r.master("worker", 1)
    _set(monkeypatch, "{not json")
    with pytest.raises(json.JSONDecodeError):
        R().cluster_spec()
    _set(monkeypatch, {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}})
    r = R()
    r.task_type, r.task_id = "chief", 0
    assert (r.master(), r.task_type) == ("localhost:1", "chief")
    # TF_CONFIG is read when asked: a change shows.
    _set(monkeypatch, {"cluster": {"ps": ["p:1", "p:2"]}, "task": {"type": "ps", "index": 1}})
    assert R().master() == "p:2"
