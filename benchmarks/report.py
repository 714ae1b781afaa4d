"""Merges benchmark JSON lines (jitx_bench and jax_bench) into RESULTS.md and PNG plots.

    report.py [RESULTS_DIR] [--readme README.md]

Reads RESULTS_DIR/jitx.jsonl, jax.jsonl and (when run_all.sh wrote it) run.json; writes RESULTS_DIR/RESULTS.md,
throughput.png (throughput vs size, one panel per workload, with the measured limit) and compile.png (compile
time per workload, jitx vs XLA). With --readme, the same text and plots replace what lies between the README's
<!-- benchmarks:begin --> and <!-- benchmarks:end --> lines.

The limits are the machine's, measured by jitx_bench's probes: compute-bound rows are compared with the FMA peak
(probe_peak: an FMA loop on every hardware thread, the better of AVX2 and AVX-512), memory-bound rows with STREAM's
triad on every hardware thread (probe_triad). Results from before probe_peak have no peak: their compute-bound
rows read "–"."""
import collections
import datetime
import json
import os
import platform
import re
import sys

SYSTEMS = ["jitx", "jitx-eager", "eigen", "jax"]
LABELS = {"jitx": "jitx", "jitx-eager": "jitx eager", "eigen": "Eigen", "jax": "JAX"}
COLORS = {"jitx": "tab:blue", "jitx-eager": "tab:orange", "eigen": "tab:green", "jax": "tab:red"}
# Workloads whose limit is the FMA peak (their flops dominate); the rest are measured against bandwidth.
COMPUTE_BOUND = {"matmul", "mlp_block", "train_step", "scan_layers", "unrolled_layers", "transformer_step",
                 "cnn_step", "transformer_infer"}


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


def ok(r):
    return bool(r) and bool(r.get("reps"))


def work(r):
    return r.get("flops") or r.get("bytes") or 0


def per_s(r, field):
    """r[field] per second of its median time, in units of 1e9 (GFLOP/s, GB/s, or GHz for the clock probe)."""
    return r[field] / (r["median_ms"] * 1e-3) / 1e9 if r and r.get(field) else float("nan")


# The Eigen peer of matmul and mlp_block is the better of its 1-thread and all-thread runs (jitx_bench's
# emit_eigen_best); its note: "<what>, <n> thread(s) (better of 1: <ms> ms and <all>: <ms> ms, medians)".
EIGEN_BEST = re.compile(r"^(?P<what>.*), (?P<n>\d+) thread\(s\) \(better of 1: [\d.]+ ms and (?P<all>\d+): ")


def rate(r):
    """(value, unit): GFLOP/s for compute-bound workloads, GB/s otherwise."""
    secs = r["median_ms"] * 1e-3
    if r["workload"] in COMPUTE_BOUND and r.get("flops"):
        return r["flops"] / secs / 1e9, "GFLOP/s"
    return r.get("bytes", 0) / secs / 1e9, "GB/s"


def main(results_dir, readme=None):
    rows = load(os.path.join(results_dir, "jitx.jsonl")) + load(os.path.join(results_dir, "jax.jsonl"))
    run = {}
    if os.path.exists(os.path.join(results_dir, "run.json")):
        run = json.load(open(os.path.join(results_dir, "run.json")))
    meta = [r for r in rows if r.get("workload") == "_meta"]
    rows = [r for r in rows if r.get("workload") != "_meta"]
    gemm = [r for r in rows if r["workload"] == "probe_gemm" and ok(r)]
    # The bandwidth limit is STREAM's triad on every core (jitx and JAX use them all); the one-thread triad is
    # shown beside it. Results from before the all-core probe have only the one-thread line.
    triads = {r["system"]: r for r in rows if r["workload"] == "probe_triad" and ok(r)}
    gbs = lambda r: per_s(r, "bytes")
    triad_all, triad_one = triads.get("stream-triad-all"), triads.get("stream-triad")
    bw = gbs(triad_all or triad_one)
    if triad_all:
        triad_threads = triad_all.get("note", "").split(",")[0] or "all threads"
        triad_text = f"STREAM triad {bw:.1f} GB/s ({triad_threads}" + \
                     (f"; one thread {gbs(triad_one):.1f})" if triad_one else ")")
        triad_name = f"triad ({triad_threads})"
    elif triad_one:
        triad_text = f"STREAM triad {bw:.1f} GB/s (one thread; the all-thread triad was not measured)"
        triad_name = "triad (one thread)"
    else:
        triad_text = "STREAM triad not measured"
        triad_name = "triad"
    # The compute limit is the FMA peak on every hardware thread: the better of the AVX-512 and AVX2 loops (rows
    # "fma-avx512-all", present where the CPU has AVX-512, and "fma-avx2-all"), with the one-thread AVX2 rate and
    # the clock beside it. Each probe_peak row carries its rate as flops per 1000 ms.
    peaks = {r["system"]: r for r in rows if r["workload"] == "probe_peak" and ok(r)}
    ghz = per_s(peaks.get("clock"), "flops")
    threads_of = lambda r: "1 thread" if r.get("size") == "1" else f"{r.get('size') or 'all'} threads"
    fma = [(per_s(peaks[s], "flops"), s) for s in ("fma-avx512-all", "fma-avx2-all") if s in peaks]
    fma = [(v, s) for v, s in fma if v == v]
    if fma:
        gf, peak_sys = max(fma)
        isa = "AVX-512" if peak_sys == "fma-avx512-all" else "AVX2"
        peak_name = f"FMA peak ({isa}, {threads_of(peaks[peak_sys])})"
        # The other ISA's all-thread rate, then the one-thread AVX2 rate.
        others = [f"{name} on {threads_of(peaks[s])} {per_s(peaks[s], 'flops'):.1f}"
                  for s, name in (("fma-avx512-all", "AVX-512"), ("fma-avx2-all", "AVX2"))
                  if s in peaks and s != peak_sys]
        others += [f"AVX2 on one thread {per_s(peaks[s], 'flops'):.1f}" for s in ("fma-avx2-1",) if s in peaks]
        if "fma-avx512-all" not in peaks:
            others.append("no AVX-512 result")
        per_cycle = ""
        if ghz == ghz and peaks[peak_sys].get("size", "").isdigit():
            per_cycle = f", {gf / ghz / int(peaks[peak_sys]['size']):.1f} flop/cycle/thread"
        peak_text = f"f32 FMA peak {gf:.1f} GFLOP/s ({isa} FMA loop on {threads_of(peaks[peak_sys])}{per_cycle}" + \
                    "".join(f"; {o}" for o in others) + ")"
    else:
        gf, peak_name = float("nan"), None
        peak_text = "FMA peak not measured (no probe_peak rows in these results)"
    clock_text = f", clock {ghz:.2f} GHz" if ghz == ghz else ""
    gemm_text = (f" For information, Eigen's f32 GEMM ({gemm[0]['size']}³, one thread) runs at "
                 f"{per_s(gemm[0], 'flops'):.1f} GFLOP/s." if gemm else "")
    limit = lambda w: (gf, "GFLOP/s") if w in COMPUTE_BOUND else (bw, "GB/s")

    by = collections.OrderedDict()
    # bandwidth_bar: (kernel, size) -> {system: row}, reported in a table of its own. The kernel is jitx's note; the
    # triad's note ends with the kernel it was interleaved with.
    bar = collections.OrderedDict()
    for r in rows:
        if r["workload"] == "bandwidth_bar":
            bar.setdefault((r.get("note", "").split("interleaved with ")[-1], r["size"]), {})[r["system"]] = r
            continue
        if r["workload"].startswith("probe_"):
            continue
        by.setdefault((r["workload"], r["size"], r["dtype"]), {})[r["system"]] = r
    # Workloads in order of first appearance; sizes (and dtypes) within a workload by the work they do.
    order = {w: i for i, w in enumerate(dict.fromkeys(k[0] for k in by))}
    dtypes = {"f32": 0, "bf16": 1}
    keys = sorted(by, key=lambda k: (order[k[0]], dtypes.get(k[2], 2), work(next(iter(by[k].values())))))

    date = run.get("date") or datetime.date.today().isoformat()
    lines = [
        f"Run on {date}: {cpu_model()}, {os.cpu_count()} cores. "
        f"Measured limits: {triad_text}; {peak_text}{clock_text}.{gemm_text}",
        "",
    ]
    if run:
        lines += [f"Command: `{run.get('command', '')}` ({run.get('mode', 'full')} mode); the whole run (build, "
                  f"virtualenv, jitx, JAX) took {run.get('duration_s', 0) / 60:.1f} min.", ""]
    lines += [*(f"Peer: {m['note']}" for m in meta), ""]
    # Eigen peers that run threaded say so in their note (train_step: GEMMs on all cores), once per workload; the
    # matmul and MLP block peers are the better of 1 and all threads, per row (the Eigen cell gives the count).
    threaded = {}
    for r in rows:
        m = EIGEN_BEST.match(r.get("note", "")) if r["system"] == "eigen" else None
        if m:
            threaded.setdefault(r["workload"], f"{m['what']}, better of 1 and all ({m['all']}) threads, measured "
                                               f"in interleaved rounds with jitx; the Eigen column gives the thread "
                                               f"count that won (1t or {m['all']}t)")
        elif r["system"] == "eigen" and "threads" in r.get("note", ""):
            threaded.setdefault(r["workload"], r["note"])
    lines += [*(f"Eigen {w}: {n}." for w, n in threaded.items()), *([""] if threaded else [])]
    lines += [
        "Times are medians (ms) of calls that wait with `block_until_ready`; compile time is excluded and listed "
        "apart (jitx: trace + lower + HLO passes + LLVM; JAX: `jit(f).lower(...).compile()`). Ratios are peer time / "
        "jitx time (above 1: jitx is faster). `jitx min–max` is jitx's fastest and slowest timed call (ms), so a "
        "bimodal size shows (matmul and mlp_block: calls in rounds interleaved with Eigen's; – where the results "
        "carry no max_ms). " +
        ("`% of peak` is jitx's rate (flops / median time) as a fraction of the " + peak_name +
         " above, for the compute-bound workloads (matmul, mlp_block, train_step, *_layers, transformer_step, "
         "transformer_infer, cnn_step; bf16 rows against the same f32 peak). " if peak_name else
         "`% of peak` reads – because the FMA peak was not measured in this run. ") +
        "`% of triad` is jitx's rate (bytes / median time) as a fraction of the " + triad_name + ", for the "
        "memory-bound rest; it can pass 100% by up to a third, since the triad's bytes (as STREAM counts them) "
        "leave out the write-allocate read of its output, which streaming stores avoid. "
        "`skipped` means a call was predicted (from the previous size) to take longer than the run's per-call cap; "
        "`(1 call)` that a single call took over 5 times that cap, so it was not repeated.",
        "",
        "| workload | size | dtype | jitx | jitx min–max | jitx eager | Eigen | JAX | eager/jitx | Eigen/jitx "
        "| JAX/jitx | % of peak | % of triad | jitx compile | JAX compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(r):
        if ok(r):
            m = EIGEN_BEST.match(r.get("note", "")) if r.get("system") == "eigen" else None
            return f"{r['median_ms']:.3f}" + (" (1 call)" if r["reps"] == 1 else "") + (f" ({m['n']}t)" if m else "")
        if r and r.get("note", "").startswith("skipped"):
            return "skipped"
        if r and r.get("note", "").startswith("pending"):
            return r["note"]
        return "–"

    for k in keys:
        w, size, dt = k
        s = by[k]
        j = s.get("jitx")
        ratio = lambda p: f"{s[p]['median_ms'] / j['median_ms']:.2f}" if ok(j) and ok(s.get(p)) else "–"
        # One of the two fractions per row: of the FMA peak (compute-bound) or of the all-thread triad (the rest);
        # both limits use every hardware thread, as jitx does.
        of_peak = of_triad = "–"
        if ok(j) and work(j) and not w.startswith("dispatch"):
            lim, unit = limit(w)
            if lim == lim and rate(j)[1] == unit:  # not NaN, and the rate is in the limit's unit
                if w in COMPUTE_BOUND:
                    of_peak = f"{rate(j)[0] / lim:.1%}"
                else:
                    of_triad = f"{rate(j)[0] / lim:.1%}"
        spread = "–"
        if ok(j) and j.get("min_ms") is not None and j.get("max_ms") is not None:
            spread = f"{j['min_ms']:.3f}–{j['max_ms']:.3f}"
        comp = lambda p: f"{s[p]['compile_ms']:.1f} ms" if p in s and s[p].get("compile_ms", -1) >= 0 else "–"
        lines.append(f"| {w} | {size} | {dt} | {cell(j)} | {spread} | " +
                     " | ".join(cell(s.get(p)) for p in SYSTEMS[1:]) + " | " +
                     " | ".join(ratio(p) for p in ["jitx-eager", "eigen", "jax"]) +
                     f" | {of_peak} | {of_triad} | {comp('jitx')} | {comp('jax')} |")
    # Issue 4's bar for the MLP block: within 1.2x of (jitx's dot of the same size + one read and one write of the
    # output at the triad bandwidth), and faster than the same function op by op. The dot is the one the mlp_block
    # workload measures interleaved with the block (jitx-dot), else the matmul workload's.
    block_lines = []
    for (w, size, dt), s in by.items():
        j, mm = s.get("jitx"), s.get("jitx-dot") or by.get(("matmul", size, dt), {}).get("jitx")
        if w != "mlp_block" or not ok(j) or not ok(mm):
            continue
        m, _, n = (int(v) for v in size.split("x"))
        es = 2 if dt == "bf16" else 4
        bound = mm["median_ms"] + 2 * es * m * n / (bw * 1e9) * 1e3
        eager = s.get("jitx-eager")
        block_lines.append(f"| {size} | {dt} | {j['median_ms']:.3f} | {mm['median_ms']:.3f} | {bound:.3f} | "
                           f"{j['median_ms'] / bound:.2f} | " +
                           (f"{eager['median_ms'] / j['median_ms']:.2f} |" if ok(eager) else "– |") +
                           f" {j['reps']} |")
    if block_lines:
        lines += ["", "MLP block against its own dot: `bound` = jitx's matmul of the same size + one read and one write "
                  "of the output at the triad bandwidth (the dot, the block and eager measured in interleaved rounds); the "
                  "issue's bar is block/bound ≤ 1.2 and eager/jitx > 1.", "",
                  "| size | dtype | block | dot alone | bound | block/bound | eager/jitx | calls |", "|---|---|---|---|---|---|---|---|",
                  *block_lines]
    # Issue 4's memory-bound bar: the GELU tail on 64 MiB, layer norm and a two-input elementwise chain at >= 80% of
    # the triad, each measured in interleaved rounds with a triad on all cores (the VM's bandwidth moves between
    # minutes).
    bar_lines = []
    for (_, size), s in bar.items():
        j, t = s.get("jitx"), s.get("stream-triad-all")
        if not ok(j) or not ok(t):
            continue
        jg, tg = gbs(j), gbs(t)
        bar_lines.append(f"| {j.get('note', '')} | {size} | {j['median_ms']:.3f} | {jg:.1f} | {tg:.1f} | {jg / tg:.0%} | "
                         f"{'met' if jg >= 0.8 * tg else 'not met'} |")
    if bar_lines:
        lines += ["", "Memory-bound kernels against a triad measured in interleaved rounds with them (the bar: ≥ 80%; "
                  "bytes: each input read and the output written once for jitx, the three arrays for the triad, as STREAM "
                  "counts them):", "",
                  "| kernel | size | jitx ms | jitx GB/s | triad GB/s | jitx/triad | ≥ 80% |", "|---|---|---|---|---|---|---|",
                  *bar_lines]
    images = lambda d: ["", f"![throughput vs size]({d}throughput.png)", "", f"![compile time]({d}compile.png)"]
    with open(os.path.join(results_dir, "RESULTS.md"), "w") as f:
        f.write("\n".join(["# jitx benchmark results", ""] + lines + images("")) + "\n")
    if readme:
        # The README shows the same run, with the plots' paths relative to the README.
        rel = os.path.relpath(results_dir, os.path.dirname(os.path.abspath(readme)) or ".") + "/"
        text = open(readme).read()
        begin, end = "<!-- benchmarks:begin -->", "<!-- benchmarks:end -->"
        if begin not in text or end not in text:
            print(f"{readme} has no {begin} ... {end} block: not updated", file=sys.stderr)
        else:
            block = "\n".join([begin, ""] + lines + images(rel) + ["", end])
            text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
            with open(readme, "w") as f:
                f.write(text)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots", file=sys.stderr)
    else:
        plot_throughput(plt, by, keys, limit, os.path.join(results_dir, "throughput.png"),
                        {True: peak_name, False: triad_name})
        plot_compile(plt, by, keys, os.path.join(results_dir, "compile.png"))
    print(open(os.path.join(results_dir, "RESULTS.md")).read())


def plot_throughput(plt, by, keys, limit, path, limit_names):
    """One panel per workload: each system's (and dtype's) rate against the work per call, with the limit."""
    workloads = [w for w in dict.fromkeys(k[0] for k in keys) if not w.startswith("dispatch")]
    dispatch = [k for k in keys if k[0].startswith("dispatch")]
    if not workloads and not dispatch:
        return
    cols = 3
    nrows = (len(workloads) + bool(dispatch) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, w in zip(axes.flat, workloads):
        unit = None
        for dt in dict.fromkeys(k[2] for k in keys if k[0] == w):
            for p in SYSTEMS:
                pts = [(by[k][p], k[1]) for k in keys if k[0] == w and k[2] == dt and ok(by[k].get(p))]
                if not pts:
                    continue
                xs = [work(r) for r, _ in pts]
                ys = [rate(r)[0] for r, _ in pts]
                unit = rate(pts[0][0])[1]
                style = "-o" if dt == "f32" else "--s"
                ax.plot(xs, ys, style, color=COLORS[p], label=f"{LABELS[p]} {dt}", ms=4)
        lim, lunit = limit(w)
        if unit == lunit and lim == lim:  # not NaN
            ax.axhline(lim, color="gray", ls=":", lw=1, label=limit_names[w in COMPUTE_BOUND])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(w, fontsize=10)
        ax.set_xlabel("work per call (flops)" if w in COMPUTE_BOUND else "bytes per call", fontsize=8)
        ax.set_ylabel(unit or "", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    if dispatch:
        # Dispatch: one cached call on three tiny arrays (jitx from C++, JAX from Python), in microseconds.
        ax = axes.flat[len(workloads)]
        width = 0.4
        for i, p in enumerate(["jitx", "jax"]):
            vals = [by[k][p]["median_ms"] * 1e3 if ok(by[k].get(p)) else 0 for k in dispatch]
            ax.bar([x + i * width for x in range(len(dispatch))], vals, width, color=COLORS[p],
                   label="jitx (C++ call)" if p == "jitx" else "JAX (Python call)")
        ax.set_xticks([x + width / 2 for x in range(len(dispatch))],
                      ["call + block_until_ready" if k[0] == "dispatch" else "enqueue only" for k in dispatch],
                      fontsize=7)
        ax.set_ylabel("µs per call (lower is better)", fontsize=8)
        ax.set_title("dispatch (3 tiny arrays)", fontsize=10)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(workloads) + bool(dispatch):]:
        ax.set_visible(False)
    fig.suptitle("Throughput vs size (higher is better)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_compile(plt, by, keys, path):
    """Compile time per workload and size: jitx against XLA (JAX)."""
    ks = [k for k in keys if any(by[k].get(p, {}).get("compile_ms", -1) >= 0 for p in ("jitx", "jax"))]
    if not ks:
        return
    fig, ax = plt.subplots(figsize=(max(8, len(ks) * 0.45), 4.2))
    width = 0.4
    for i, p in enumerate(["jitx", "jax"]):
        vals = [by[k][p]["compile_ms"] if p in by[k] and by[k][p].get("compile_ms", -1) >= 0 else 0 for k in ks]
        ax.bar([x + i * width for x in range(len(ks))], vals, width, color=COLORS[p],
               label="jitx" if p == "jitx" else "JAX (XLA)")
    ax.set_xticks([x + width / 2 for x in range(len(ks))], [f"{w}\n{sz} {dt}" for (w, sz, dt) in ks], fontsize=6,
                  rotation=70, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("compile ms (log)")
    ax.set_title("Compile time per workload (lower is better)", fontsize=11)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("results_dir", nargs="?", default="benchmarks/results")
    ap.add_argument("--readme", default=None)
    a = ap.parse_args()
    main(a.results_dir, a.readme)
