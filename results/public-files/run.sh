#!/usr/bin/env bash
# Solve the public files of results/public-files/README.md (Tuzun-Burke coordP111112, Barreto
# Christofides 50 and 100) with clrp-rl4co solve and write each method's outputs into
# results/public-files/<method>/[<model>/] (summary.csv, one JSON and one .sol per file,
# provenance.json).
#
#   bash results/public-files/run.sh LRP_DIR [STAGE ...]
#
# LRP_DIR: a folder holding the public .dat files anywhere below it (e.g. a checkout of
# alberto-santini/lrp-instances). STAGE: x8 (deterministic decoding, any load), pyvrp, hybrid,
# auto (10 s per instance each: run them on a quiet machine); default: all four.
# Environment: CLRP_RL4CO (the command, default clrp-rl4co), PYTHON (default python),
# TIME (seconds per instance of the time-limited stages, default 10).
set -euo pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 LRP_DIR [x8|pyvrp|hybrid|auto ...]  (LRP_DIR: folder of the public files)" >&2
    exit 2
fi
lrp_dir=$1
shift
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(x8 pyvrp hybrid auto)

here=$(cd "$(dirname "$0")" && pwd)
solve=${CLRP_RL4CO:-clrp-rl4co}
python=${PYTHON:-python}
seconds=${TIME:-10}
export OMP_NUM_THREADS=1

files=()
for name in coordP111112.dat coordChrist50.dat coordChrist100.dat; do
    found=$(find "$lrp_dir" -name "$name" -type f | sort | head -n 1)
    if [ -z "$found" ]; then
        echo "error: $name not found under $lrp_dir (see results/public-files/README.md)" >&2
        exit 2
    fi
    files+=("$found")
done

# run OUT_SUBDIR SOLVE_ARGS...: one clrp-rl4co solve call over the three files
run() {
    local sub=$1
    local out=$here/$sub
    shift
    rm -rf "$out"
    mkdir -p "$out"
    echo "== $out: $solve solve FILES $*" >&2
    "$solve" solve "${files[@]}" --bks "$here/bks.csv" --out "$out" --quiet "$@"
    # the files are named by their base names so that the record holds no local path
    "$python" - "$out/provenance.json" "$sub" "$*" <<'EOF'
import json, os, sys
from clrp_rl4co.reporting import provenance

out, sub, args = sys.argv[1:4]
record = provenance.record(
    command="clrp-rl4co solve coordP111112.dat coordChrist50.dat coordChrist100.dat "
    f"--bks results/public-files/bks.csv --out results/public-files/{sub} --quiet {args}"
)
record["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
with open(out, "w") as f:
    json.dump(record, f, indent=1)
    f.write("\n")
EOF
}

for stage in "${stages[@]}"; do
    case $stage in
    x8)
        # --time 600: x8 decodes every start in one batch only when it is predicted to fit
        # in --time; the outputs record "decode": "x8" when it did
        for model in drlhq_clrp100 drlhq_clrp50 drlhqcf_mixed drlhqcf_mixed50_cpu; do
            run "x8/$model" --method x8 --time 600 --model "$model"
        done
        ;;
    pyvrp)
        run pyvrp --method pyvrp --time "$seconds"
        ;;
    hybrid)
        for model in drlhq_clrp100 drlhqcf_mixed drlhqcf_mixed50_cpu; do
            run "hybrid/$model" --method hybrid --time "$seconds" --model "$model"
        done
        ;;
    auto)
        run auto --method auto --time "$seconds"
        ;;
    *)
        echo "error: unknown stage $stage (x8, pyvrp, hybrid, auto)" >&2
        exit 2
        ;;
    esac
done
