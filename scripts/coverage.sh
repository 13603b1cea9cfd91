#!/usr/bin/env bash
# Line coverage of the C core and the Swift library by the unit tests, with the
# toolchain's llvm-cov (the llvm-cov first on PATH is LLVM 14 and cannot read
# the profile). `--enable-code-coverage` alone skips C, hence the -Xcc flags.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
BIN=$(dirname "$(readlink -f "$(command -v "$SWIFT")")")
OUT=.build-cov

rm -rf "$OUT/debug/codecov"
"$SWIFT" test --scratch-path "$OUT" --enable-code-coverage \
    -Xcc -fprofile-instr-generate -Xcc -fcoverage-mapping --skip ImageKitBenchmarks
"$BIN/llvm-profdata" merge -sparse "$OUT"/debug/codecov/*.profraw -o "$OUT/coverage.profdata"
"$BIN/llvm-cov" report "$OUT/debug/ImageKitPackageTests.xctest" -instr-profile="$OUT/coverage.profdata" \
    -ignore-filename-regex='(\.build|/Tests/|/Benchmarks/|checkouts|/Sources/ImageKitCLI/)' > "$OUT/coverage.txt"
cat "$OUT/coverage.txt"
echo
awk '
    $1 ~ /^CImageCore\// && $8 > 0 { cl += $8; cm += $9 }
    $1 ~ /^ImageKit\//   && $8 > 0 { sl += $8; sm += $9 }
    END {
        printf "line coverage: C core %.1f%% (%d of %d lines), Swift library %.1f%% (%d of %d lines)\n",
               100 * (cl - cm) / cl, cl - cm, cl, 100 * (sl - sm) / sl, sl - sm, sl
    }' "$OUT/coverage.txt"
