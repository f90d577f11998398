#!/usr/bin/env python3
"""Joins the JSON of cpu_kernels_benchmark and of its libtorch peer, one pair per thread
count, into the issue's table: each figure of minitensor beside libtorch's and the ratio
(higher is better for minitensor: throughput over throughput, or time over time for the
1-element add). Usage: cpu-bench-table.py THREADS:OURS.json[,OURS2.json]:PEER.json[,PEER2.json] ...

With several rounds per side (run alternately, so that both see the same noise of a shared
machine), each side's best figure is compared, and the ratio of every round is listed too."""
import json
import sys


def figures(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        name = b["name"].replace("/real_time", "")
        if "GFLOP/s" in b:
            out[name] = (b["GFLOP/s"], "GFLOP/s")
        elif "bytes_per_second" in b:
            out[name] = (b["bytes_per_second"] / 1e9, "GB/s")
        else:
            ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
            out[name] = (ns / 1e3, "us")
    return out, data.get("context", {})


def better(unit, a, b):
    """The better of two figures: the shorter time, or the higher throughput."""
    return min(a, b) if unit == "us" else max(a, b)


def ratio(unit, ours, theirs):
    return theirs / ours if unit == "us" else ours / theirs


def main():
    print("| threads | benchmark | minitensor | libtorch | ratio | ratio per round | baseline memcpy |")
    print("|---|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        threads, ours_paths, peer_paths = arg.split(":")
        ours_rounds = [figures(p) for p in ours_paths.split(",")]
        peer_rounds = [figures(p)[0] for p in peer_paths.split(",")]
        context = ours_rounds[0][1]
        memcpy_name = ("BM_Baseline_Memcpy1Thread" if threads == "1"
                       else "BM_Baseline_MemcpyAllThreads")
        memcpy = max(r[0].get(memcpy_name, (0, ""))[0] for r in ours_rounds)
        for name, (_, unit) in ours_rounds[0][0].items():
            if name.startswith("BM_Baseline") or name not in peer_rounds[0]:
                continue
            ours = [r[0][name][0] for r in ours_rounds if name in r[0]]
            theirs = [r[name][0] for r in peer_rounds if name in r]
            best_ours, best_theirs = ours[0], theirs[0]
            for v in ours[1:]:
                best_ours = better(unit, best_ours, v)
            for v in theirs[1:]:
                best_theirs = better(unit, best_theirs, v)
            rounds = " ".join(f"{ratio(unit, o, t):.2f}x" for o, t in zip(ours, theirs))
            base = f"{memcpy:.1f} GB/s" if unit == "GB/s" else ""
            print(f"| {threads} | {name} | {best_ours:.2f} {unit} | {best_theirs:.2f} {unit} | "
                  f"{ratio(unit, best_ours, best_theirs):.2f}x | {rounds} | {base} |")
        print(f"| {threads} | memcpy (baseline) | {memcpy:.1f} GB/s | | | | |")
    print("cpu_isa:", context.get("cpu_isa"), "| threads:", context.get("intra_op_threads_backend"),
          "| float32 GEMM:", context.get("float32_gemm"), "| host:", context.get("host_name"),
          "| cpus:", context.get("num_cpus"), "| MHz:", context.get("mhz_per_cpu"))


if __name__ == "__main__":
    main()
