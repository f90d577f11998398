#!/usr/bin/env python3
"""Joins the JSON of cpu_kernels_benchmark and of its libtorch peer, one pair per thread
count, into the issue's table: each figure of minitensor beside libtorch's and the ratio
(higher is better for minitensor: throughput over throughput, or time over time for the
1-element add). Usage: cpu-bench-table.py THREADS:OURS.json:PEER.json ..."""
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


def main():
    print("| threads | benchmark | minitensor | libtorch | ratio | baseline memcpy |")
    print("|---|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        threads, ours_path, peer_path = arg.split(":")
        (ours, context), (peer, _) = figures(ours_path), figures(peer_path)
        memcpy = ours.get("BM_Baseline_Memcpy1Thread" if threads == "1"
                          else "BM_Baseline_MemcpyAllThreads", (0, ""))[0]
        for name, (value, unit) in ours.items():
            if name.startswith("BM_Baseline") or name not in peer:
                continue
            theirs = peer[name][0]
            ratio = theirs / value if unit == "us" else value / theirs
            base = f"{memcpy:.1f} GB/s" if unit == "GB/s" else ""
            print(f"| {threads} | {name} | {value:.2f} {unit} | {theirs:.2f} {unit} | "
                  f"{ratio:.2f}x | {base} |")
        print(f"| {threads} | memcpy (baseline) | {memcpy:.1f} GB/s | | | |")
    print("cpu_isa:", context.get("cpu_isa"), "| host:", context.get("host_name"),
          "| cpus:", context.get("num_cpus"), "| MHz:", context.get("mhz_per_cpu"))


if __name__ == "__main__":
    main()
