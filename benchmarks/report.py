"""Merges benchmark JSON lines (jitx_bench and jax_bench) into RESULTS.md and PNG plots."""
import collections
import datetime
import json
import os
import platform
import sys


def load(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main(results_dir):
    rows = load(os.path.join(results_dir, "jitx.jsonl")) + load(os.path.join(results_dir, "jax.jsonl"))
    meta = [r for r in rows if r.get("workload") == "_meta"]
    rows = [r for r in rows if r.get("workload") != "_meta"]
    triad = [r for r in rows if r["workload"] == "probe_triad"]
    gemm = [r for r in rows if r["workload"] == "probe_gemm"]
    bw = triad[0]["bytes"] / (triad[0]["median_ms"] * 1e-3) / 1e9 if triad else float("nan")
    gf = gemm[0]["flops"] / (gemm[0]["median_ms"] * 1e-3) / 1e9 if gemm else float("nan")
    by = collections.OrderedDict()
    for r in rows:
        if r["workload"].startswith("probe_"):
            continue
        by.setdefault((r["workload"], r["size"], r["dtype"]), {})[r["system"]] = r
    systems = ["jitx", "jitx-eager", "eigen", "jax"]
    lines = [
        "# jitx benchmark results",
        "",
        f"Run on {datetime.date.today().isoformat()}: {cpu_model()}, {os.cpu_count()} cores. "
        f"Measured limits: STREAM triad {bw:.1f} GB/s (one thread), Eigen f32 GEMM {gf:.1f} GFLOP/s.",
        "",
        *(f"Peer: {m['note']}" for m in meta),
        "",
        "Times are medians (ms) of calls that wait with `block_until_ready`; compile time is excluded and listed apart. "
        "Ratios are peer time / jitx time (above 1: jitx is faster). `of limit` is jitx's rate as a fraction of the "
        "triad bandwidth (memory-bound rows) or of the GEMM rate (mlp_block).",
        "",
        "| workload | size | dtype | jitx | jitx eager | Eigen | JAX | eager/jitx | Eigen/jitx | JAX/jitx | of limit | jitx compile | JAX compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    fmt = lambda r: f"{r['median_ms']:.3f}" if r and r.get("reps") else "–"
    for (w, size, dt), s in by.items():
        j = s.get("jitx")
        if j and j.get("note", "").startswith("pending"):
            lines.append(f"| {w} | – | – | {j['note']} | | | | | | | | | |")
            continue
        ratio = lambda p: (f"{s[p]['median_ms'] / j['median_ms']:.2f}" if j and p in s and j.get("reps") and s[p].get("reps") else "–")
        limit = "–"
        if j and j.get("reps"):
            secs = j["median_ms"] * 1e-3
            if w == "mlp_block" and j.get("flops"):
                limit = f"{j['flops'] / secs / 1e9 / gf:.0%}"
            elif j.get("bytes"):
                limit = f"{j['bytes'] / secs / 1e9 / bw:.0%}"
        comp = lambda p: (f"{s[p]['compile_ms']:.1f} ms" if p in s and s[p].get("compile_ms", -1) >= 0 else "–")
        lines.append(f"| {w} | {size} | {dt} | " + " | ".join(fmt(s.get(p)) for p in systems) + " | " +
                     " | ".join(ratio(p) for p in ["jitx-eager", "eigen", "jax"]) + f" | {limit} | {comp('jitx')} | {comp('jax')} |")
    with open(os.path.join(results_dir, "RESULTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [f"{w}\n{sz} {dt}" for (w, sz, dt) in by if "jitx" in by[(w, sz, dt)] and by[(w, sz, dt)]["jitx"].get("reps")]
        keys = [k for k in by if "jitx" in by[k] and by[k]["jitx"].get("reps")]
        fig, ax = plt.subplots(figsize=(max(8, len(keys) * 1.2), 4))
        width = 0.2
        for i, p in enumerate(systems):
            vals = [by[k][p]["median_ms"] if p in by[k] and by[k][p].get("reps") else 0 for k in keys]
            ax.bar([x + i * width for x in range(len(keys))], vals, width, label=p)
        ax.set_xticks([x + 1.5 * width for x in range(len(keys))], names, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("median ms (log)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(results_dir, "runtime.png"), dpi=110)
        fig, ax = plt.subplots(figsize=(max(8, len(keys) * 1.2), 4))
        for i, p in enumerate(["jitx", "jax"]):
            vals = [by[k][p]["compile_ms"] if p in by[k] and by[k][p].get("compile_ms", -1) >= 0 else 0 for k in keys]
            ax.bar([x + i * 0.35 for x in range(len(keys))], vals, 0.35, label=p)
        ax.set_xticks([x + 0.17 for x in range(len(keys))], names, fontsize=7)
        ax.set_ylabel("compile ms")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(results_dir, "compile.png"), dpi=110)
    except ImportError:
        print("matplotlib not installed: no plots", file=sys.stderr)
    print(open(os.path.join(results_dir, "RESULTS.md")).read())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results")
