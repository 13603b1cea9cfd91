#!/usr/bin/env python3
"""Writes Benchmarks/README.md: how to read `make bench`, then the figures of one run.

`make bench` (a full run: no FILTER, no INPUT) calls this through scripts/bench_report.py, so the
figures in the repository are a run's output, never typed by hand. To write the file again from
an earlier run's results.json (machine facts and every figure):

    python3 scripts/bench_readme.py bench-results/results.json -o Benchmarks/README.md
"""
import argparse
import json
import sys

import bench_report as report

HEADER = """# Benchmarks

This file is written by `make bench` (`scripts/bench_report.py`, through `scripts/bench_readme.py`)
at the end of a full run; do not edit it by hand. The prose below is fixed; the tables are the run's.

## Reading `make bench`

`make bench` makes its inputs on first run (photo-like pictures encoded at fixed settings: baseline
and progressive JPEGs of 12 to 24 MP, a Display P3 JPEG, PNGs from 8 to 100 MP, lossy and lossless
WebP, AVIF, HEIC and JPEG XL stills, an 8-frame GIF and APNG, a 100 KB JPEG and 256 px thumbnails,
kept in `.build/bench-inputs`), runs every benchmark in one release process with a `[bench]` line
as each finishes, and ends with a table, a verdict (`N of M targets met.`, then each missed one,
then the rows that were noisy), `bench-results/results.json` (machine, toolchain and every figure),
`bench-results/report.svg` (ImageKit's time next to its peer's for the decode and thumbnail rows,
then each target's share used; open it in a browser) and, for a full run, this file. It uses the
build `make test` made (the same `swift test -c release` flags: after `make test` its build step
only checks that nothing changed) and runs without network access (local nginx, Python and Redis
servers on 127.0.0.1; libvips, which `make bench` installs, in the same process).
`make bench FILTER=Thumbnail` runs only the benchmark classes whose name matches (a regular
expression: `DecodeBenchmarks`, `Thumbnail|Memory`, …). `make bench INPUT=dir` adds decode and
256 px thumbnail rows for each JPEG, PNG, GIF or WebP file in `dir`, against the same anchors.
Neither writes this file.

**Noise is a figure, not a failure.** Each row shows its spread, the relative standard deviation of
its samples. XCTest's `measure` fails a test whose spread is over 10 %; on a shared 2-core machine a
few rows do that in most runs with nothing wrong in the code, so the benchmarks keep that figure as
data instead: the tables say `noisy` and the report hatches the row. `make bench` exits non-zero
only when a benchmark really breaks (it throws, gets a wrong result, or its input or peer is
missing), and prints the report of the rows that ran first. A missed target is shown as `missed`
and does not fail the run.

| column | meaning |
|---|---|
| ours: median (min) | median time of one operation over the samples (in µs under a millisecond), and the fastest sample in the same unit |
| spread | relative standard deviation of the samples |
| anchor | what we are compared with, measured in the same process on the same bytes, and its median |
| ratio | ours ÷ anchor for times (below 1 is faster), or the figure itself where the row says so (µs, MB, dB) |
| target | the bound the feature promises |
| verdict | `met` or `missed` against the target; `noisy` when the spread is over 10 % (the figures are kept, the verdict is weak) |
| peer | where a row has one: libvips's `vips_thumbnail_buffer` (one thread, operation cache off) on the same bytes, its median and ours ÷ its |
| notes | the row's other figures (bytes, PSNR, CPU time per load, …) |

The anchors are the bare libraries a service would otherwise call: `tjDecompress2` (libjpeg-turbo)
to RGBA, full size or at 1/8 scale for thumbnails; libpng's simplified API to RGBA;
`WebPDecodeRGBAInto`; giflib's `DGifSlurp` (which does not even composite frames); the decode of the
original file for disk-tier hits; URLSession for downloads; and for the manager, its own parts
(download, decode and store) timed alone between its loads. Ratios are what to compare across
machines: absolute times on a shared 2-core machine move by 10 % from run to run, ratios taken in
one run much less. Where a target is "no worse" (≤ 1.00), an A/A row follows it (the same work
with the anchor's settings on both sides), so its ratio can be read against the noise of the same
run. `make bench-peers` adds the longer peer runs from a separate package (libvips with its helper
threads and on AVIF, HEIC and JPEG XL, and AsyncHTTPClient for downloads) and `make bench-service`
the thumbnail service under load; they add their rows to the report in `bench-results/`, not to
this file.
"""


def cell(text):
    """A Markdown table cell: pipes escaped, never empty."""
    text = str(text).replace("|", "\\|")
    return text if text else "–"


def verdict(r):
    ok = report.passed(r)
    words = [] if ok is None else ["met" if ok else "missed"]
    if report.noisy(r):
        words.append("noisy")
    return ", ".join(words)


def fmt_note(value):
    if isinstance(value, float):
        return report.digits(value) if value >= 0.01 else f"{value:.2g}"
    return str(value)


def row(r, with_peer, with_notes):
    ms = report.fmt_time(r["medianMs"], r.get("minMs", 0)) if r.get("medianMs") else ""
    spread = f"±{r['spreadPercent']:.1f}%" if r.get("spreadPercent") is not None else ""
    anchor = r.get("anchor", "")
    if anchor and r.get("anchorMedianMs"):
        anchor += f" {report.fmt_duration(r['anchorMedianMs'])}"
    ratio = "" if r.get("ratio") is None else f"{r['ratio']:.3f}"
    target = "" if r.get("target") is None else f"{r.get('targetRelation', '<=')} {r['target']:g}"
    cells = [r["name"], ms, spread, anchor, ratio, target, verdict(r)]
    if with_peer:
        peer = ""
        if r.get("peer") and r.get("peerMedianMs") and r.get("medianMs"):
            peer = (f"{r['peer']} {report.fmt_duration(r['peerMedianMs'])} "
                    f"({r['medianMs'] / r['peerMedianMs']:.2f}x)")
        cells.append(peer)
    if with_notes:
        cells.append(", ".join(f"{k} {fmt_note(v)}" for k, v in sorted((r.get("notes") or {}).items())))
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def section_table(rows):
    """One section's table; the peer and notes columns only when a row has them."""
    with_peer = any(r.get("peer") and r.get("peerMedianMs") for r in rows)
    with_notes = any(r.get("notes") for r in rows)
    head = ["benchmark", "ours: median (min)", "spread", "anchor", "ratio", "target", "verdict"]
    head += ["peer"] * with_peer + ["notes"] * with_notes
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return lines + [row(r, with_peer, with_notes) for r in rows]


def machine_line(info, commit):
    libs = ", ".join(f"{k} {v}" for k, v in sorted((info.get("libraries") or {}).items()))
    parts = [f"{info.get('cpu') or 'unknown CPU'}, {info.get('cores')} cores, {info.get('memory_gib')} GiB",
             f"kernel {info.get('kernel')}", info.get("swift") or "Swift unknown"]
    lines = [f"- **Run:** {info.get('date', 'unknown date')}"
             + (f", commit `{commit}`" if commit else ""),
             f"- **Machine:** {'; '.join(parts)}"]
    if libs:
        lines.append(f"- **Libraries:** {libs}")
    return "\n".join(lines)


def render(results, info, commit=None):
    """The whole file: the fixed header, the run's facts and verdict, one table per section."""
    out = [HEADER, "## The last full run", "", machine_line(info, commit or info.get("commit")), ""]
    targeted = [r for r in results if report.passed(r) is not None]
    missed = [r for r in targeted if report.passed(r) is False]
    spread = [r for r in results if report.noisy(r)]
    out.append(f"{len(targeted) - len(missed)} of {len(targeted)} targets met; "
               f"{len(spread)} of {len(results)} rows spread over {report.NOISY_SPREAD:g} %.")
    if missed:
        out.append("")
        out.append("Missed:")
        out.append("")
        for r in missed:
            out.append(f"- {r['section']} / {r['name']}: {r['ratio']:.3f}, target "
                       f"{r.get('targetRelation', '<=')} {r['target']:g}" + (" (noisy)" if report.noisy(r) else ""))
    sections = []
    for r in results:
        if r["section"] not in sections:
            sections.append(r["section"])
    for section in sections:
        out += ["", f"### {section}", ""]
        out += section_table([r for r in results if r["section"] == section])
    return "\n".join(out) + "\n"


def write(path, results, info, commit=None):
    with open(path, "w") as f:
        f.write(render(results, info, commit))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="results.json written by scripts/bench_report.py")
    parser.add_argument("-o", "--output", default="Benchmarks/README.md")
    parser.add_argument("--commit", help="the commit the run measured, when results.json does not say")
    args = parser.parse_args()
    with open(args.results) as f:
        data = json.load(f)
    if not data.get("results"):
        print("no benchmark results in " + args.results, file=sys.stderr)
        return 1
    write(args.output, data["results"], data.get("machine", {}), args.commit)
    print(f"Wrote {args.output} ({len(data['results'])} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
