#!/usr/bin/env bash
# Instructions per operation on x86-64 for the ids of benches/tailguard.rs, counted by
# valgrind's callgrind with the K-versus-2K method (benches/insns.rs). Immune to the noise
# of a shared machine, blind to latency and caches: a complement to the medians.
#   bash .ci/bench-insns.sh            (needs valgrind: apt-get install -y valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cargo bench --bench insns --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "insns" and m.get("executable"):
        print(m["executable"])')
count() { # op k
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_op() { # op k
  local a b
  a=$(count "$1" "$2")
  b=$(count "$1" $((2 * $2)))
  echo $(((b - a) / $2))
}
printf '| id | instructions per op |\n|---|---|\n'
for id in record/tailguard/log record/tailguard/cubic record/tailguard/int \
  record/tailguard/atomic record/tailguard/window record/tailguard/exponential_window \
  record/sketches-ddsketch record/hdrhistogram hedge/threshold hedge/should_hedge \
  hedge/ratio_budget/try_acquire hedge/token_bucket/try_acquire batch/tailguard/int/slice \
  batch/tailguard/cubic/slice batch/tailguard/atomic/slice; do
  printf '| `%s` | %s |\n' "$id" "$(per_op "$id" 200000)"
done
for id in quantile/tailguard quantile/tailguard/p50 quantile/tailguard/p999 \
  quantile/tailguard/int quantile/tailguard/cubic quantile/tailguard/atomic \
  quantile/tailguard/window/refresh quantile/sketches-ddsketch quantile/hdrhistogram; do
  printf '| `%s` | %s |\n' "$id" "$(per_op "$id" 5000)"
done
for id in merge/tailguard merge/sketches-ddsketch merge/hdrhistogram; do
  printf '| `%s` | %s (clone excluded) |\n' "$id" "$(($(per_op "$id" 2000) - $(per_op "$id/clone" 2000)))"
done
