// The report's page. Hand-written, no library: the script reads the data element, then
// draws memory over time (SVG polylines), each pool's block map at its peak (SVG rects),
// tables of ops per device and of copies, and sets body[data-rendered] when done.

#include "runtime/trace/report_page.h"

namespace mt::internal {

const char kReportHead[] = R"html(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>minitensor: placement and memory</title>
<style>
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:6px 0 14px}td,th{padding:2px 8px;text-align:left;
border-bottom:1px solid #eee;font-size:12px}th{background:#f4f4f4}td.num{text-align:right}
tr.fallback td{background:#fff4e0}.legend span{display:inline-block;width:12px;height:12px;
margin:0 4px 0 12px;vertical-align:middle}.muted{color:#777}svg{display:block}
</style></head>
<body>
<h1>minitensor: placement and memory</h1>
<p id="summary" class="muted">The report needs JavaScript to draw.</p>
<h2>Memory over time</h2><div id="memory"></div>
<h2>Pools at their peak</h2>
<div class="legend"><span style="background:#3b7dd8"></span>in use<span
style="background:#f0a030"></span>cached<span style="background:#e4e4e4"></span>free</div>
<div id="pools"></div>
<h2>Ops per device</h2><div id="ops"></div>
<h2>Copies between devices</h2><div id="copies"></div>
<h2>Out of memory and configuration</h2><div id="events"></div>
<script type="application/json" id="data">)html";

const char kReportTail[] = R"html(</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const events = data.trace.traceEvents;
const SVG = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let u = 0;
  while (n >= 1024 && u < 4) { n /= 1024; u++; }
  return (Number.isInteger(n) ? n : n.toFixed(1)) + " " + units[u];
}
function table(parent, head, rows, rowClass) {
  const t = el("table"), tr = el("tr");
  head.forEach(h => tr.appendChild(el("th", {}, h)));
  t.appendChild(tr);
  rows.forEach((r, i) => {
    const row = el("tr", rowClass ? {class: rowClass(i)} : {});
    r.forEach(c => row.appendChild(el("td", c.cls ? {class: c.cls} : {}, c.text)));
    t.appendChild(row);
  });
  parent.appendChild(t);
}
const devices = {};
events.filter(e => e.ph === "M" && e.name === "thread_name")
      .forEach(e => { devices[e.tid] = e.args.name; });
const ops = events.filter(e => e.cat === "op");
const copies = events.filter(e => e.cat === "copy");
const end = Math.max(1, ...events.filter(e => e.ts !== undefined).map(e => e.ts + (e.dur || 0)));
document.getElementById("summary").textContent =
    ops.length + " ops and " + copies.length + " copies on " + Object.keys(devices).length +
    " devices in " + end.toFixed(1) + " µs";

function drawMemory() {
  const div = document.getElementById("memory");
  const pools = {};
  events.filter(e => e.ph === "C").forEach(e => (pools[e.name] = pools[e.name] || []).push(e));
  for (const name in pools) {
    const pts = pools[name];
    const top = Math.max(1, ...pts.map(p => p.args.reserved));
    const W = 900, H = 120;
    const s = svg("svg", {width: W, height: H + 20, class: "memory", "data-pool": name});
    s.appendChild(svg("rect", {x: 0, y: 0, width: W, height: H, fill: "#fafafa"}));
    for (const [key, color] of [["reserved", "#bbb"], ["in_use", "#3b7dd8"]]) {
      let path = "", y = H;
      pts.forEach(p => {
        const x = (p.ts / end * W).toFixed(1), ny = (H - p.args[key] / top * H).toFixed(1);
        path += (path ? " L" : "M") + x + " " + y + " L" + x + " " + ny;
        y = ny;
      });
      s.appendChild(svg("path", {d: path + " L" + W + " " + y, fill: "none", stroke: color,
                                 "stroke-width": 2}));
    }
    const label = svg("text", {x: 4, y: H + 15, "font-size": 12});
    const peak = Math.max(...pts.map(p => p.args.in_use));
    label.textContent = name + ": peak in use " + bytes(peak) + ", reserved up to " + bytes(top);
    s.appendChild(label);
    div.appendChild(s);
  }
  if (!Object.keys(pools).length) div.appendChild(el("p", {class: "muted"}, "No op ran."));
}

function drawPools() {
  const div = document.getElementById("pools");
  const colors = {in_use: "#3b7dd8", cached: "#f0a030", free: "#e4e4e4"};
  data.snapshots.forEach(snap => {
    const t = snap.totals;
    div.appendChild(el("h3", {class: "pool"}, snap.device + " (" + snap.allocator + ")"));
    div.appendChild(el("p", {}, "in use " + bytes(t.current) + " of " + bytes(t.reserved) +
        " reserved; largest free block " + bytes(t.largest_free_block) + "; fragmentation " +
        (100 * t.fragmentation).toFixed(1) + "%"));
    const rows = [];
    snap.regions.forEach((r, ri) => {
      const W = 900, s = svg("svg", {width: W, height: 28, class: "region"});
      r.chunks.forEach(c => {
        const rect = svg("rect", {x: c.offset / r.size * W, y: 2,
            width: Math.max(1, c.size / r.size * W - 0.5), height: 24, fill: colors[c.state]});
        const tip = svg("title", {});
        tip.textContent = c.state + " " + bytes(c.size) + (c.op ? " from " + c.op + " " +
            c.dtype + " " + c.shape : "");
        rect.appendChild(tip);
        s.appendChild(rect);
        if (rows.length < 40) rows.push([{text: String(ri)}, {text: "+" + c.offset, cls: "num"},
            {text: bytes(c.size), cls: "num"}, {text: c.state}, {text: c.op},
            {text: c.dtype + " " + c.shape}, {text: c.time_us < 0 ? "" : c.time_us.toFixed(1)}]);
      });
      div.appendChild(s);
    });
    if (!snap.regions.length) div.appendChild(el("p", {class: "muted"}, "Nothing reserved."));
    if (rows.length) table(div, ["region", "offset", "size", "state", "op", "tensor", "at (µs)"], rows);
  });
}

function drawOps() {
  const div = document.getElementById("ops");
  Object.keys(devices).forEach(tid => {
    const mine = ops.filter(e => String(e.tid) === tid);
    div.appendChild(el("h3", {class: "device"}, devices[tid] + ": " + mine.length + " ops"));
    if (!mine.length) return;
    table(div, ["op", "dtype", "shapes", "reason", "why", "µs", "allocated", "timing"],
          mine.map(e => [{text: e.name, cls: "op"}, {text: e.args.dtype},
              {text: e.args.shapes}, {text: e.args.reason}, {text: e.args.detail},
              {text: e.dur.toFixed(2), cls: "num"},
              {text: String(e.args.bytes_allocated), cls: "num"}, {text: e.args.timing}]),
          i => (mine[i].args.reason.endsWith("fallback") ? "fallback" : ""));
  });
}

function drawCopies() {
  const div = document.getElementById("copies");
  if (!copies.length) return div.appendChild(el("p", {class: "muted"}, "No copies."));
  table(div, ["from", "to", "bytes", "µs", "GB/s"], copies.map(e => [
      {text: e.args.source}, {text: e.args.destination}, {text: String(e.args.bytes), cls: "num"},
      {text: e.dur.toFixed(2), cls: "num"}, {text: e.args["GB/s"].toFixed(3), cls: "num"}]));
}

function drawEvents() {
  const div = document.getElementById("events");
  const rows = events.filter(e => e.cat === "oom" || e.cat === "config").map(e => [
      {text: e.ts.toFixed(1), cls: "num"}, {text: e.name},
      {text: e.cat === "oom" ? e.args.message : JSON.stringify(e.args)}]);
  table(div, ["µs", "event", "what"], rows);
}

drawMemory();
drawPools();
drawOps();
drawCopies();
drawEvents();
document.body.setAttribute("data-rendered", "yes");
</script>
</body></html>
)html";

}  // namespace mt::internal
