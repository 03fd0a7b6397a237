#!/usr/bin/env bash
# A real Prometheus (Debian's 2.42, --enable-feature=native-histograms) scrapes two
# gateways of examples/prometheus_gateway.rs, each serving its hedger's window as a native
# histogram; .ci/prometheus_check.py compares PromQL's histogram_count, histogram_sum,
# histogram_quantile and buckets over both with tailguard's own merged sketch of the two.
# Loopback only, a temporary directory for the config and the storage, everything under
# `timeout`, and every process stopped (and the directory removed) on exit, pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null; then
  apt-get update && apt-get install -y prometheus
fi
prometheus --version 2>&1 | head -n 1

cargo build --features std --example prometheus_gateway
gateway=target/debug/examples/prometheus_gateway
metric=gateway_latency_nanoseconds

tmp="$(mktemp -d)"
pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  if [ "$rc" -ne 0 ] && [ -f "$tmp/prometheus.log" ]; then
    echo "--- prometheus log (last lines)"; tail -n 20 "$tmp/prometheus.log"
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# Two gateways, each on a free loopback port it picks and prints.
addrs=()
for seed in 1 2; do
  timeout 300 "$gateway" serve --seed "$seed" --requests 20000 >"$tmp/gateway$seed.out" &
  pids+=($!)
done
for seed in 1 2; do
  for _ in $(seq 100); do
    addr="$(sed -n 's/^listening on //p' "$tmp/gateway$seed.out")"
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "gateway $seed did not start"; exit 1; }
  addrs+=("$addr")
done
echo "gateways on ${addrs[*]}"

# tailguard's merged sketch of what the two serve.
timeout 60 "$gateway" merge "${addrs[@]}" >"$tmp/expected.json"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gateway
    static_configs:
      - targets: ['${addrs[0]}', '${addrs[1]}']
YAML
timeout 300 prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$port" --enable-feature=native-histograms \
  >"$tmp/prometheus.log" 2>&1 &
pids+=($!)

timeout 120 python3 .ci/prometheus_check.py "http://127.0.0.1:$port" "$tmp/expected.json" "$metric" 2
