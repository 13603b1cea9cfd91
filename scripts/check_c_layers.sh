#!/usr/bin/env bash
# check_c_layers.sh — the C core's include arrows point down (DESIGN.md, round 3: "Arrows
# point down"). Each folder of Sources/CImageCore may include its own headers, the public
# ones (include/) and the folders listed for it below; `make test` runs this first. Folders
# not listed are not checked yet.
# It also checks the names: a function or type an internal header (any header outside include/)
# declares is named ic__ (libvips's vips__), so a reader tells it from the public ic_ API.
#   common/  nothing else: the budget, errors and threads everything else uses
#   image/   common/
#   color/   common/ and image/: a budget, never a decoder (libvips: colour/ never includes foreign/)
set -euo pipefail
cd "$(dirname "$0")/../Sources/CImageCore"

declare -A allowed=(
    [common]="common"
    [image]="common image"
    [color]="common image color"
)

status=0
for folder in "${!allowed[@]}"; do
    while IFS= read -r hit; do
        file=${hit%%:*}
        target=$(sed -E 's/.*#include "([^"]*)".*/\1/' <<< "${hit#*:*:}")
        # Resolve the quoted path against the including file's folder; a bare name is either
        # a header next to it or a public one in include/.
        resolved=$(realpath -m --relative-to=. "$(dirname "$file")/$target")
        [[ $resolved == */* ]] || continue
        top=${resolved%%/*}
        [[ -e $resolved || $top == include ]] || continue
        if [[ $top != include && " ${allowed[$folder]} " != *" $top "* ]]; then
            echo "check_c_layers: $file includes $target ($top/), which $folder/ may not (allowed: ${allowed[$folder]})" >&2
            status=1
        fi
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$folder" || true)
done

public=$(grep -rhoE '\bic_[a-z0-9_]+' include | sort -u)
while IFS= read -r hit; do
    name=$(grep -oE '\bic_[a-z0-9][a-z0-9_]*' <<< "${hit#*:*:}" | head -1)
    if ! grep -qx "$name" <<< "$public"; then
        echo "check_c_layers: ${hit%%:*:*} declares $name, an internal name: call it ic__${name#ic_}" >&2
        status=1
    fi
done < <(find . -name '*.h' -not -path './include/*' -print0 |
         xargs -0 grep -nE '^[^/*#]*\bic_[a-z0-9][a-z0-9_]*[[:space:]]*\(' || true)
[[ $status == 0 ]] && echo "check_c_layers: the include arrows of ${!allowed[*]} point down; internal headers declare ic__ names"
exit $status
