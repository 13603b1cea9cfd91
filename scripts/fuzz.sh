#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ against the C core and runs each for
# FUZZ_SECONDS (0: no time limit) or until FUZZ_RUNS executions, whichever comes
# first, seeded from the corpus manifest's files, Tests/Fixtures/HARNESS-seeds/, the
# APNG test files (png and probe), the AVIF test files (avif and probe), the HEIC (also the
# built ones) and JPEG XL fixtures (heif, jxl and probe) and the committed regression files. Prints execs/s
# and total execs per harness; exits 1 if any harness found a crash (the reproducer
# is left in .build-fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${FUZZ_SECONDS:-60}
RUNS_EACH=${FUZZ_RUNS:--1}
CORPUS=${CORPUS:-../shared/corpus}
HARNESSES=${FUZZ_HARNESSES:-"probe jpeg png gif webp incremental avif heif jxl resize store url head encode ops"}
CC=${FUZZ_CC:-/opt/swift/usr/bin/clang}
OUT=.build-fuzz
mkdir -p "$OUT/artifacts"

CORE=$(find Sources/CImageCore -name "*.c" | sort)
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: the disk tier's reader accepts any checksum, and
# the APNG reader any chunk CRC, so the harnesses reach the parsing behind them.
# Fuzz/coverage_ignore.txt: pixel loops keep ASan and UBSan but are not coverage-traced.
FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
       -fsanitize-coverage-ignorelist=Fuzz/coverage_ignore.txt \
       -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -ISources/CImageCore/include"
# libavif, libheif and libjxl are not linked: the core opens them on first use, as everywhere else.
LIBS="-fuse-ld=lld -lturbojpeg -ljpeg -lpng16 -ldeflate -lz -lwebp -lwebpdemux -lwebpmux -llcms2 -llz4 -lcurl -lm -lpthread"

seed_dir() { # harness -> directory of seed files
    local h=$1 dir="$OUT/seeds/$1"
    rm -rf "$dir" && mkdir -p "$dir"
    if [ -f "$CORPUS/manifest.json" ]; then
        python3 - "$CORPUS" "$h" "$dir" <<'PY'
import json, os, shutil, sys
corpus, harness, dest = sys.argv[1:]
m = json.load(open(os.path.join(corpus, "manifest.json")))
for i, e in enumerate(m["entries"]):
    src = os.path.join(corpus, e["path"])
    if harness == "incremental" and e["format"] in ("jpeg", "png", "webp", "gif") and os.path.getsize(src) <= 65536:
        # The harness reads 4 bytes of options and piece sizes before the file.
        with open(os.path.join(dest, "%04d.bin" % i), "wb") as f:
            f.write(bytes([i & 0xFF, 1 + i % 7, 64 + i % 61, 255]) + open(src, "rb").read())
    elif harness in ("probe", "resize", "encode", "ops") or e["format"] == harness:
        if os.path.getsize(src) <= 65536:
            shutil.copy(src, os.path.join(dest, "%04d%s" % (i, os.path.splitext(src)[1])))
PY
    fi
    if [ -d "Tests/Fixtures/$h-seeds" ]; then
        cp "Tests/Fixtures/$h-seeds"/* "$dir/"
    fi
    # The HEIC and JPEG XL fixtures (the corpus has none).
    if [ "$h" = heif ] || [ "$h" = probe ]; then
        cp Tests/Fixtures/heic/*.hei[cf] Tests/Fixtures/heic-built/*.heic "$dir/"
    fi
    if [ "$h" = jxl ] || [ "$h" = probe ]; then
        cp Tests/Fixtures/jxl/*.jxl "$dir/"
    fi
    # The APNG test files (animation chunks the corpus's PNGs do not have).
    if [ "$h" = png ] || [ "$h" = probe ] || [ "$h" = encode ]; then
        cp Tests/Fixtures/apng/*.png "$dir/"
    fi
    # The AVIF conformance files (the corpus has no AVIF).
    if [ "$h" = avif ] || [ "$h" = probe ]; then
        cp Tests/Fixtures/avif/*.avif "$dir/"
    fi
    # The decoders' regression inputs: images, which the URL and response harnesses do not read.
    if [ -d Tests/Fixtures/fuzz-regressions ] && [ "$h" != url ] && [ "$h" != head ]; then
        cp Tests/Fixtures/fuzz-regressions/* "$dir/" 2>/dev/null || true
    fi
    echo "$dir"
}

# The core is compiled once, its files two at a time (the flags are the same for every
# harness); each harness is then compiled and linked against its objects.
rm -rf "$OUT/core" && mkdir -p "$OUT/core"
export CC FLAGS OUT
printf '%s\n' $CORE | xargs -P "$(nproc)" -I{} sh -c \
    'f="{}"; o="$OUT/core/$(echo "$f" | tr / _).o"; $CC $FLAGS -c "$f" -o "$o"'
OBJECTS=$(find "$OUT/core" -name "*.o" | sort)

failed=0
printf '%-8s %12s %14s %8s\n' harness "execs/s" "total execs" result
for h in $HARNESSES; do
    "$CC" $FLAGS "Fuzz/fuzz_$h.c" $OBJECTS $LIBS -o "$OUT/fuzz_$h"
    mkdir -p "$OUT/corpus/$h"
    seeds=$(seed_dir "$h")
    log="$OUT/fuzz_$h.log"
    set +e
    "$OUT/fuzz_$h" -max_total_time="$SECONDS_EACH" -runs="$RUNS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=${FUZZ_MAX_LEN:-8192} \
        -print_final_stats=1 -artifact_prefix="$OUT/artifacts/${h}-" "$OUT/corpus/$h" "$seeds" > "$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    result=ok
    if [ $rc -ne 0 ]; then
        result=CRASH
        failed=1
        grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5
    fi
    printf '%-8s %12s %14s %8s\n' "$h" "$rate" "$execs" "$result"
done
exit $failed
