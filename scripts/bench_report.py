#!/usr/bin/env python3
"""Turns the benchmark figures (results.jsonl) into the report.

Writes results.json (machine facts and every figure) and report.svg (each
benchmark's ratio against its target) next to the input, and prints a table
with a verdict a person can read at a glance.
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
    rows = [("section", "benchmark", "median (min)", "throughput", "anchor", "ratio", "target", "")]
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
        rows.append((r["section"], r["name"], ms, throughput(r), anchor, ratio, target, mark))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def svg(results, info):
    targeted = [r for r in results if passed(r) is not None]
    width, left, bar_h, gap, top = 1100, 430, 20, 8, 70
    height = top + len(targeted) * (bar_h + gap) + 60
    scale_max = max([1.5] + [min(budget(r), 3.0) for r in targeted])
    x_of = lambda v: left + (width - left - 190) * min(v, scale_max) / scale_max
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="20" y="28" font-size="18" font-weight="bold">ImageKit benchmarks: share of each target used</text>',
           f'<text x="20" y="48" fill="#555">{html.escape(info.get("cpu", ""))}, {info.get("cores")} cores, '
           f'{html.escape(info.get("date", ""))}. Bar = ratio / target (for "&gt;=" targets: target / ratio); '
           'left of the line is met.</text>']
    one = x_of(1.0)
    out.append(f'<line x1="{one}" y1="{top - 8}" x2="{one}" y2="{height - 40}" stroke="#333" stroke-dasharray="4,3"/>')
    out.append(f'<text x="{one + 4}" y="{height - 28}" fill="#333">target</text>')
    for i, r in enumerate(targeted):
        y = top + i * (bar_h + gap)
        b = budget(r)
        color = "#2e9d4f" if passed(r) else "#d1453b"
        label = f'{r["section"]} / {r["name"]}'
        out.append(f'<text x="{left - 8}" y="{y + 14}" text-anchor="end">{html.escape(label[:64])}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{max(1, x_of(b) - left):.1f}" height="{bar_h}" fill="{color}"/>')
        text = f'{r["ratio"]:.3f} ({r.get("targetRelation", "<=")} {r["target"]:g})'
        out.append(f'<text x="{x_of(b) + 6:.1f}" y="{y + 14}">{html.escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", help="results.jsonl written by the benchmarks")
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
    print(table(results))
    verdicts = [passed(r) for r in results if passed(r) is not None]
    missed = [r for r in results if passed(r) is False]
    print()
    print(f"{sum(verdicts)} of {len(verdicts)} targets met" + (":" if missed else "."))
    for r in missed:
        print(f"  ✗ {r['section']} / {r['name']}: {r['ratio']:.3f}, target {r.get('targetRelation', '<=')} {r['target']:g}")
    print(f"Report: {os.path.join(directory, 'results.json')} and {os.path.join(directory, 'report.svg')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
