#!/usr/bin/env python3
"""Turns the benchmark figures (results.jsonl) into the report.

Writes results.json (machine facts and every figure) and report.svg (ImageKit's
time beside the peer's for the decode and thumbnail rows, then each benchmark's
ratio against its target) next to the input, and prints a table with a verdict
a person can read at a glance. A row whose samples spread more than 10 % (relative
standard deviation) is marked noisy: its figures are kept, its verdict is weak.
With --readme, also writes that Markdown file through scripts/bench_readme.py
(Benchmarks/README.md, for a full `make bench`).
"""
import argparse
import datetime
import html
import json
import os
import platform
import subprocess
import sys


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        return ""


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    mem_kb = 0
    try:
        with open("/proc/meminfo") as f:
            mem_kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
    except (OSError, StopIteration):
        pass
    libs = {}
    for pkg in ["libjpeg62-turbo", "libpng16-16", "libwebp7", "liblz4-1", "libcurl4", "libvips42", "nginx"]:
        version = run(["dpkg-query", "-W", "-f=${Version}", pkg])
        if version:
            libs[pkg] = version
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "swift": run(["swift", "--version"]).split("\n")[0],
        "commit": run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"]),
        "libraries": libs,
    }


def throughput(r):
    ms = r.get("medianMs") or 0
    if ms <= 0:
        return ""
    if r.get("megapixels"):
        return f"{r['megapixels'] / (ms / 1000):.0f} MP/s"
    if r.get("bytes"):
        gbs = r["bytes"] / 1e9 / (ms / 1000)
        return f"{gbs:.2f} GB/s" if gbs >= 0.1 else f"{gbs * 1000:.0f} MB/s"
    if r.get("files"):
        return f"{r['files'] / (ms / 1000):.0f} files/s"
    return ""


def passed(r):
    if r.get("ratio") is None or r.get("target") is None:
        return None
    if r.get("targetRelation") == ">=":
        return r["ratio"] >= r["target"]
    return r["ratio"] <= r["target"]


def budget(r):
    """Share of the target used: below 1 is met, for either direction."""
    ratio, target = r["ratio"], r["target"]
    if r.get("targetRelation") == ">=":
        return target / ratio if ratio else float("inf")
    return ratio / target if target else float("inf")


NOISY_SPREAD = 10.0
# Sections whose rows are drawn as ImageKit next to its peer.
PEER_SECTIONS = ("decode", "thumbnail 256 px")


def noisy(r):
    return (r.get("spreadPercent") or 0) > NOISY_SPREAD


def fmt_spread(r):
    spread = r.get("spreadPercent")
    if spread is None:
        return ""
    return f"±{spread:.1f}%" + (" noisy" if noisy(r) else "")


def peer_of(r):
    """(name, median ms) of the row's peer: libvips where it was timed, else its anchor."""
    if r.get("peer") and r.get("peerMedianMs"):
        return r["peer"], r["peerMedianMs"]
    if r.get("anchor") and r.get("anchorMedianMs"):
        return r["anchor"], r["anchorMedianMs"]
    return None


def time_unit(ms):
    """Scale and unit for a duration in ms: µs under a millisecond."""
    return (1000, "µs") if ms < 1 else (1, "ms")


def digits(v):
    """Three significant digits, whole numbers from 100 up."""
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def fmt_duration(ms):
    scale, unit = time_unit(ms)
    return f"{digits(ms * scale)} {unit}"


def fmt_time(median_ms, min_ms):
    """Median and, in brackets, minimum, both in the median's unit."""
    scale, _ = time_unit(median_ms)
    return f"{fmt_duration(median_ms)} ({digits(min_ms * scale)})"


def table(results):
    rows = [("section", "benchmark", "median (min)", "spread", "throughput", "anchor", "ratio", "target", "",
             "peer (ours / peer)")]
    for r in results:
        ms = "" if not r.get("medianMs") else fmt_time(r["medianMs"], r.get("minMs", 0))
        anchor = ""
        if r.get("anchor"):
            anchor = r["anchor"]
            if r.get("anchorMedianMs"):
                anchor += f" {fmt_duration(r['anchorMedianMs'])}"
        ratio = "" if r.get("ratio") is None else f"{r['ratio']:.3f}"
        target = "" if r.get("target") is None else f"{r.get('targetRelation', '<=')} {r['target']:g}"
        ok = passed(r)
        mark = "" if ok is None else ("✓" if ok else "✗")
        peer = ""
        if r.get("peer") and r.get("peerMedianMs"):
            peer = f"{r['peer']} {fmt_duration(r['peerMedianMs'])} ({r['medianMs'] / r['peerMedianMs']:.2f}x)"
        rows.append((r["section"], r["name"], ms, fmt_spread(r), throughput(r), anchor, ratio, target, mark, peer))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


TEXT_PX = 6.6  # width of one character at the report's 12 px sans-serif, generously


def svg_text(x, y, text, anchor="start", extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{html.escape(text)}</text>')


def svg_peers(results, top, width):
    """Two bars a row for the decode and thumbnail rows: ImageKit's median time and its peer's,
    on one scale per row (the longer of the two fills the bar space). Returns (parts, height)."""
    rows = [(r, peer_of(r)) for r in results if r["section"] in PEER_SECTIONS and r.get("medianMs")]
    rows = [(r, p) for r, p in rows if p]
    if not rows:
        return [], 0
    labels = [f'{r["section"]} / {r["name"]}' for r, _ in rows]
    left = 20 + TEXT_PX * max(len(t) for t in labels) + 12
    value_space = TEXT_PX * max(len(f"{p[0]} {fmt_duration(p[1])} (0.00x)") for _, p in rows) + 12
    bar_space = max(120, width - left - value_space - 20)
    bar_h, pair_gap = 14, 12
    out = [svg_text(20, top + 16, "ImageKit next to its peer (median time, shorter is faster)",
                    extra=' font-size="15" font-weight="bold"')]
    y = top + 34
    for (r, (peer_name, peer_ms)), label in zip(rows, labels):
        longest = max(r["medianMs"], peer_ms)
        ours_w = bar_space * r["medianMs"] / longest
        peer_w = bar_space * peer_ms / longest
        out.append(svg_text(left - 8, y + bar_h - 2, label, "end"))
        out.append(f'<rect x="{left:.1f}" y="{y}" width="{max(1, ours_w):.1f}" height="{bar_h}" fill="#2e6fd1"/>')
        out.append(svg_text(left + ours_w + 6, y + bar_h - 3, f"ImageKit {fmt_duration(r['medianMs'])}"
                            + (" (noisy)" if noisy(r) else "")))
        y += bar_h + 2
        out.append(f'<rect x="{left:.1f}" y="{y}" width="{max(1, peer_w):.1f}" height="{bar_h}" fill="#9a9a9a"/>')
        out.append(svg_text(left + peer_w + 6, y + bar_h - 3,
                            f"{peer_name} {fmt_duration(peer_ms)} ({r['medianMs'] / peer_ms:.2f}x)"))
        y += bar_h + pair_gap
    return out, y - top


def svg_targets(results, top, width):
    """One bar a row with a target: the share of the target used. Returns (parts, height)."""
    targeted = [r for r in results if passed(r) is not None]
    if not targeted:
        return [], 0
    labels = [f'{r["section"]} / {r["name"]}' for r in targeted]
    left = 20 + TEXT_PX * max(len(t) for t in labels) + 12
    value_space = TEXT_PX * max(len(f'{r["ratio"]:.3f} (<= {r["target"]:g}) ±00.0% noisy') for r in targeted) + 12
    bar_space = max(120, width - left - value_space - 20)
    bar_h, gap = 18, 8
    scale_max = max([1.5] + [min(budget(r), 3.0) for r in targeted])
    x_of = lambda v: left + bar_space * min(v, scale_max) / scale_max
    out = [svg_text(20, top + 16, "Targets: share of each target used (left of the line is met)",
                    extra=' font-size="15" font-weight="bold"'),
           svg_text(20, top + 34, 'Bar = ratio / target (for ">=" targets: target / ratio); '
                    "hatched rows spread over 10 % (noisy).", extra=' fill="#555"')]
    y0 = top + 50
    bottom = y0 + len(targeted) * (bar_h + gap)
    one = x_of(1.0)
    out.append(f'<line x1="{one:.1f}" y1="{y0 - 6}" x2="{one:.1f}" y2="{bottom}" stroke="#333" stroke-dasharray="4,3"/>')
    out.append(svg_text(one + 4, bottom + 14, "target", extra=' fill="#333"'))
    for i, (r, label) in enumerate(zip(targeted, labels)):
        y = y0 + i * (bar_h + gap)
        b = budget(r)
        color = "#2e9d4f" if passed(r) else "#d1453b"
        fill = "url(#noisy)" if noisy(r) else color
        out.append(svg_text(left - 8, y + 14, label, "end"))
        out.append(f'<rect x="{left:.1f}" y="{y}" width="{max(1, x_of(b) - left):.1f}" height="{bar_h}" '
                   f'fill="{fill}" stroke="{color}"/>')
        text = f'{r["ratio"]:.3f} ({r.get("targetRelation", "<=")} {r["target"]:g})'
        if r.get("spreadPercent") is not None:
            text += " " + fmt_spread(r)
        out.append(svg_text(x_of(b) + 6, y + 14, text))
    return out, bottom + 24 - top


def svg(results, info):
    width = 1400
    peers, peers_h = svg_peers(results, 60, width)
    targets, targets_h = svg_targets(results, 60 + peers_h + 20, width)
    height = 60 + peers_h + 20 + targets_h + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           '<defs><pattern id="noisy" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4d5d2"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="3"/></pattern></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           svg_text(20, 28, "ImageKit benchmarks", extra=' font-size="18" font-weight="bold"'),
           svg_text(20, 48, f'{info.get("cpu", "")}, {info.get("cores")} cores, {info.get("date", "")}.',
                    extra=' fill="#555"')]
    out += peers + targets
    out.append("</svg>")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", help="results.jsonl written by the benchmarks")
    parser.add_argument("--readme", help="also write the figures with how to read them to this Markdown file")
    args = parser.parse_args()
    results = []
    with open(args.results) as f:
        for line in f:
            line = line.strip()
            if line:
                results.append(json.loads(line))
    if not results:
        print("no benchmark results were recorded", file=sys.stderr)
        return 1
    order = []
    for r in results:
        if r["section"] not in order:
            order.append(r["section"])
    results.sort(key=lambda r: (order.index(r["section"]), r["name"]))
    info = machine()
    directory = os.path.dirname(os.path.abspath(args.results))
    with open(os.path.join(directory, "results.json"), "w") as f:
        json.dump({"machine": info, "results": results}, f, indent=1)
    with open(os.path.join(directory, "report.svg"), "w") as f:
        f.write(svg(results, info))
    if args.readme:
        import bench_readme
        bench_readme.write(args.readme, results, info)
    print(table(results))
    verdicts = [passed(r) for r in results if passed(r) is not None]
    missed = [r for r in results if passed(r) is False]
    print()
    print(f"{sum(verdicts)} of {len(verdicts)} targets met" + (":" if missed else "."))
    for r in missed:
        print(f"  ✗ {r['section']} / {r['name']}: {r['ratio']:.3f}, target {r.get('targetRelation', '<=')} {r['target']:g}"
              + (f" (noisy: ±{r['spreadPercent']:.1f}%)" if noisy(r) else ""))
    spread_rows = [r for r in results if noisy(r)]
    if spread_rows:
        print(f"{len(spread_rows)} of {len(results)} rows spread over {NOISY_SPREAD:g} % (a noisy machine; "
              "their figures are kept, their verdicts are weak):")
        for r in spread_rows:
            print(f"  ~ {r['section']} / {r['name']}: ±{r['spreadPercent']:.1f}%")
    print(f"Report: {os.path.join(directory, 'results.json')} and {os.path.join(directory, 'report.svg')}"
          + (f", and {args.readme}" if args.readme else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
