#!/usr/bin/env bash
# The peer ratios (benches/ratios.rs) under the two profiles issue 29 judges, on both data
# sets: cargo's default bench profile, and `lto = "fat"` with `codegen-units = 1` (in a
# target directory of its own, so that the two builds do not evict each other). Prints one
# table per profile and data set, then each path's ratio under both, tailguard's LTO time
# over its default one, and the figure that counts (the worse of the two).
#
#   bash .ci/ratios.sh                    # 5 runs per profile, alternated (~10 min warm)
#   TG_RATIO_RUNS=3 bash .ci/ratios.sh    # fewer runs
#   TG_RATIO_QUICK=1 bash .ci/ratios.sh   # one quick run per profile: does it run (CI)
#
# benches/ratios.rs's own variables pass through (TG_RATIO_ROUNDS, TG_RATIO_DATA,
# TG_RATIO_FILTER, TG_RATIO_CHUNK, TG_RATIO_VERBOSE). Each run's output is kept in
# target/ratios/ (TG_RATIO_OUT), the tables are printed and written to tables.md there.
set -euo pipefail
cd "$(dirname "$0")/.."

base="${CARGO_TARGET_DIR:-target}"
out="${TG_RATIO_OUT:-$base/ratios}"
if [ "${TG_RATIO_QUICK:-0}" != 0 ]; then
  runs=1
else
  runs="${TG_RATIO_RUNS:-5}"
fi

default() { CARGO_TARGET_DIR="$base" cargo bench --bench ratios "$@"; }
lto() {
  CARGO_PROFILE_BENCH_LTO=fat CARGO_PROFILE_BENCH_CODEGEN_UNITS=1 CARGO_TARGET_DIR="$base/lto" \
    cargo bench --bench ratios "$@"
}

# Both builds first, each timed (the LTO one is most of what the quick mode costs).
for profile in default lto; do
  start=$SECONDS
  "$profile" --no-run
  echo "ratios.sh: $profile build took $((SECONDS - start)) s" >&2
done

mkdir -p "$out"
rm -f "$out"/default-*.txt "$out"/lto-*.txt "$out"/*.err
for i in $(seq 1 "$runs"); do
  # Alternated, so that a change in the machine's load falls on both profiles.
  if [ $((i % 2)) -eq 1 ]; then order="default lto"; else order="lto default"; fi
  for profile in $order; do
    echo "ratios.sh: run $i of $runs, $profile" >&2
    "$profile" 2> "$out/$profile-$i.err" > "$out/$profile-$i.txt"
  done
done

python3 .ci/ratios-report.py --profile default "$out"/default-*.txt --profile lto "$out"/lto-*.txt \
  | tee "$out/tables.md"
