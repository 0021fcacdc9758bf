#!/usr/bin/env python3
"""The GPU benchmark's results as one figure (bench.py writes it beside the
JSON and the Markdown when matplotlib is there; alone:
``bench/gpu/plot.py RESULTS.json [-o RESULTS.png]``).

Four panels:
  * prefill B8·H16 with D = 64 and with D = 128: ms against T for every
    implementation measured, with the HBM floors of bf16 and f32 inputs
    (compulsory bytes over the copy bandwidth measured in the same run);
  * the other prefill shapes (flash-linear-attention's): each
    implementation's time over linattn's chunked bf16 scan (> 1: slower);
  * decode: µs per token against the batch, with the kernel-launch floor and
    the HBM floor of the state.
"""

import argparse
import json
import os
import re
import sys

# Implementations in the order of the legends; linattn's in blues, the
# peers' in other colours. Rows of other names are drawn in grey.
STYLES = {
    "linattn chunked bf16": ("#08306b", "o", "-"),
    "linattn chunked bf16, synchronous staging": ("#2171b5", "o", "--"),
    "linattn chunked bf16, 32-bit offsets": ("#4292c6", "o", ":"),
    "linattn chunked bf16, value-tile=32": ("#6baed6", "o", "-."),
    "linattn chunked bf16, value-tile=128": ("#9ecae1", "o", "--"),
    "linattn chunked bf16, mma.sync": ("#c6dbef", "o", "-"),
    "linattn chunked bf16, synchronous + L2 prefetch": ("#2171b5", "o", "-."),
    "linattn chunked bf16, wgmma outputs": ("#08519c", "o", "--"),
    "linattn chunked bf16, normalized": ("#08306b", "P", ":"),
    "linattn chunked bf16, mma.sync, normalized": ("#c6dbef", "P", ":"),
    "linattn chunked tf32": ("#08519c", "s", "-"),
    "linattn chunked tf32x3": ("#08519c", "s", "--"),
    "linattn recurrent f32": ("#3f007d", "D", "-"),
    "linattn recurrent f32, synchronous staging": ("#3f007d", "D", "-."),
    "linattn recurrent f32, 1 lane/column": ("#807dba", "D", ":"),
    "linattn recurrent f32, 1 column/thread": ("#6a51a3", "D", "--"),
    "linattn recurrent f32, 2 columns/thread": ("#6a51a3", "D", ":"),
    "linattn recurrent f32, 32 columns/warp": ("#9e9ac8", "D", "-."),
    "linattn recurrent f32, scan-tile=256": ("#54278f", "D", ":"),
    "linattn recurrent f32, scan-tile=512": ("#54278f", "D", "-."),
    "linattn recurrent f32, 4 columns/warp": ("#9e9ac8", "D", "--"),
    "linattn recurrent f32, scan-tile=32": ("#54278f", "D", "--"),
    "fla.chunk_linear_attn": ("#d94801", "^", "-"),
    "fla.fused_chunk_linear_attn": ("#fd8d3c", "^", "--"),
    "fla.chunk_linear_attn, features precomputed": ("#d94801", "^", ":"),
    "fla.fused_chunk_linear_attn, features precomputed": ("#fd8d3c", "^", ":"),
    "fast_transformers.causal_dot_product (f32)": ("#238b45", "v", "-"),
    "fast_transformers.causal_dot_product (f32), features precomputed":
        ("#238b45", "v", ":"),
    "torch SDPA causal (softmax)": ("#cb181d", "x", "-"),
    "linattn step (graph replay)": ("#08306b", "o", "-"),
    "linattn step (plain launches)": ("#4292c6", "o", "--"),
    "torch eager step": ("#d94801", "^", "-"),
}
OURS = "linattn chunked bf16"


def parse_shape(name):
    parts = name.split("x")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def measured(results, kind):
    return [r for r in results if r["kind"] == kind and "ms" in r
            and parse_shape(r["shape"])]


def ordered(impls):
    known = [i for i in STYLES if i in impls]
    return known + sorted(set(impls) - set(known))


def style(impl):
    return STYLES.get(impl, ("#969696", ".", "-"))


def prefill_panel(ax, rows, b, h, d):
    """ms against T for the B·H·D series, with the HBM floors."""
    series = [r for r in rows if parse_shape(r["shape"])[:2] == (b, h)
              and parse_shape(r["shape"])[3] == d]
    if not series:
        ax.set_axis_off()
        ax.set_title(f"prefill B{b}·H{h}·D{d}: not measured")
        return
    for impl in ordered({r["impl"] for r in series}):
        points = sorted((parse_shape(r["shape"])[2], r["ms"]) for r in series
                        if r["impl"] == impl)
        color, marker, line = style(impl)
        ax.plot([t for t, _ in points], [ms for _, ms in points], color=color,
                marker=marker, linestyle=line, label=impl)
    floors = {}
    for r in series:
        floors.setdefault(r["precision"], {})[parse_shape(r["shape"])[2]] = r["floor_ms"]
    for precision, dash in (("bf16", "--"), ("f32", ":")):
        if precision in floors:
            points = sorted(floors[precision].items())
            ax.plot([t for t, _ in points], [ms for _, ms in points], color="black",
                    linestyle=dash, linewidth=1, label=f"HBM floor, {precision} inputs")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("T (tokens)")
    ax.set_ylabel("ms")
    ax.set_title(f"prefill B{b}·H{h}·D{d} (causal, elu+1)")
    ax.grid(True, which="both", alpha=0.3)


def ratio_panel(ax, rows, skip):
    """Each implementation's time over linattn's chunked bf16 scan, per shape
    not in `skip`."""
    shapes = [s for s in dict.fromkeys(r["shape"] for r in rows) if s not in skip]
    ours = {r["shape"]: r["ms"] for r in rows if r["impl"] == OURS}
    shapes = [s for s in shapes if s in ours]
    if not shapes:
        ax.set_axis_off()
        ax.set_title("other prefill shapes: not measured")
        return
    impls = [i for i in ordered({r["impl"] for r in rows if r["shape"] in shapes})
             if i != OURS]
    height = 0.8 / max(1, len(impls))
    for j, impl in enumerate(impls):
        for i, shape in enumerate(shapes):
            r = next((r for r in rows if r["shape"] == shape and r["impl"] == impl), None)
            if r is None:
                continue
            color, _, _ = style(impl)
            ax.barh(i + (j - len(impls) / 2 + 0.5) * height, r["ms"] / ours[shape],
                    height=height, color=color, label=impl if i == 0 else None)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(shapes)))
    ax.set_yticklabels([re.sub(r"^(\d+)x(\d+)x(\d+)x(\d+)$", r"B\1·H\2·T\3·D\4", s)
                        for s in shapes])
    ax.invert_yaxis()
    ax.set_xlabel(f"time / {OURS} (> 1: linattn is faster)")
    ax.set_title("other prefill shapes")
    ax.grid(True, axis="x", which="both", alpha=0.3)


def decode_panel(ax, rows):
    """µs per token against the batch, with the launch and HBM floors."""
    if not rows:
        ax.set_axis_off()
        ax.set_title("decode: not measured")
        return
    for impl in ordered({r["impl"] for r in rows}):
        points = sorted((parse_shape(r["shape"])[0], r["ms"] * 1e3) for r in rows
                        if r["impl"] == impl)
        color, marker, line = style(impl)
        ax.plot([b for b, _ in points], [us for _, us in points], color=color,
                marker=marker, linestyle=line, label=impl)
    floors = sorted({parse_shape(r["shape"])[0]: r["floor_ms"] * 1e3 for r in rows}.items())
    ax.plot([b for b, _ in floors], [us for _, us in floors], color="black",
            linestyle=":", linewidth=1, label="HBM floor (state read and written)")
    launch = [r["launch_floor_ms"] * 1e3 for r in rows if r.get("launch_floor_ms")]
    if launch:
        ax.axhline(min(launch), color="black", linestyle="--", linewidth=1,
                   label="kernel-launch floor")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    shape = parse_shape(rows[0]["shape"])
    ax.set_xlabel("batch B")
    ax.set_ylabel("µs per token")
    ax.set_title(f"decode step H{shape[1]}·D{shape[2]}")
    ax.grid(True, which="both", alpha=0.3)


def plot(meta, path):
    """Writes the figure of `meta` (bench.py's JSON) to `path`; returns the
    path, or None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    results = meta["results"]
    prefill = measured(results, "prefill")
    fig, axes = plt.subplots(2, 2, figsize=(15, 11))
    prefill_panel(axes[0][0], prefill, 8, 16, 64)
    prefill_panel(axes[0][1], prefill, 8, 16, 128)
    ratio_panel(axes[1][0], prefill,
                {r["shape"] for r in prefill if parse_shape(r["shape"])[:2] == (8, 16)})
    decode_panel(axes[1][1], measured(results, "decode"))
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    columns = 3
    fig.legend(handles.values(), handles.keys(), loc="lower center",
               ncol=columns, fontsize="small", frameon=False)
    # Room below the panels for the legend's rows (about 0.2 inch each in
    # an 11-inch figure), so that it covers no axis label.
    legend_height = 0.015 + 0.019 * -(-len(handles) // columns)
    bw = meta.get("copy_bandwidth_bytes_per_ms")
    fig.suptitle(f"linattn GPU benchmark on {meta['device']}"
                 + (f" (copy bandwidth {bw / 1e6:.0f} GB/s)" if bw else ""))
    fig.tight_layout(rect=(0, legend_height, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", help="bench.py's JSON")
    parser.add_argument("-o", "--output", help="default: the JSON's name, .png")
    args = parser.parse_args()
    with open(args.results) as f:
        meta = json.load(f)
    out = args.output or os.path.splitext(args.results)[0] + ".png"
    if plot(meta, out) is None:
        sys.exit("plot.py: matplotlib is missing (pip install matplotlib)")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
