#!/usr/bin/env bash
# Paired runs of blanket and the numpy baselines (docs/performance.md, issue 15).
#
#   cargo build --release -p blanket-cli
#   bench/compare.sh [ROUNDS]        # default 5 rounds, blanket and numpy interleaved
#
# Needs jq and python3 with numpy (e.g. python3 -m venv target/numpy-venv &&
# target/numpy-venv/bin/pip install numpy && PYTHON=target/numpy-venv/bin/python bench/compare.sh).
# Prints the minimum over the rounds of every figure, and the load average before and after.
# Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BLANKET:-target/release/blanket}
PY=${PYTHON:-python3}
ROUNDS=${1:-5}
H="simulate histogram --eps 1 --delta 1e-8 --n 1e6 --reps 10 --json"
V="simulate vector-sum --n 50000 --d 100 --eps 0.95 --delta 0.5 --t 1 --k 3 --data ecg-windows --json"
min() { sort -g | head -1; }
max() { sort -g | tail -1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
  $B bench --n 1e6 --domain 16 --json >"$tmp/bench.json"
  jq '.histogram.users_per_second_single_thread' "$tmp/bench.json" >>"$tmp/h1"
  jq '.histogram.users_per_second_all_threads' "$tmp/bench.json" >>"$tmp/hall"
  jq '.vector_sum.users_per_second_single_thread' "$tmp/bench.json" >>"$tmp/v1"
  jq '.vector_sum.users_per_second_all_threads' "$tmp/bench.json" >>"$tmp/vall"
  $B $H | jq .seconds >>"$tmp/hs"
  $B $H --no-shuffle | jq .seconds >>"$tmp/hn"
  RAYON_NUM_THREADS=1 $B $H | jq .seconds >>"$tmp/hs1"
  RAYON_NUM_THREADS=1 $B $H --no-shuffle | jq .seconds >>"$tmp/hn1"
  $B $V 2>/dev/null | jq .seconds >>"$tmp/vs"
  $B $V --no-shuffle 2>/dev/null | jq .seconds >>"$tmp/vn"
  RAYON_NUM_THREADS=1 $B $V 2>/dev/null | jq .seconds >>"$tmp/vs1"
  RAYON_NUM_THREADS=1 $B $V --no-shuffle 2>/dev/null | jq .seconds >>"$tmp/vn1"
  $PY bench/numpy_baselines.py --runs 3 --json >"$tmp/np.json"
  jq '.grr_client.users_per_second' "$tmp/np.json" >>"$tmp/npg"
  jq '.simulate_histogram.seconds_shuffled' "$tmp/np.json" >>"$tmp/nphs"
  jq '.simulate_histogram.seconds_no_shuffle' "$tmp/np.json" >>"$tmp/nphn"
  jq '.simulate_vector_sum.seconds_shuffled' "$tmp/np.json" >>"$tmp/npvs"
  jq '.simulate_vector_sum.seconds_no_shuffle' "$tmp/np.json" >>"$tmp/npvn"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat <<TABLE
| path | numpy (1 thread) | blanket, 1 thread | blanket, all threads |
|---|---:|---:|---:|
| GRR client + aggregate, 1e6 users, M users/s (higher is better) | $(max <"$tmp/npg" | awk '{printf "%.0f", $1/1e6}') | $(max <"$tmp/h1" | awk '{printf "%.0f", $1/1e6}') | $(max <"$tmp/hall" | awk '{printf "%.0f", $1/1e6}') |
| vector-sum client + aggregate (d = 100, t = 1, k = 3), M users/s | | $(max <"$tmp/v1" | awk '{printf "%.0f", $1/1e6}') | $(max <"$tmp/vall" | awk '{printf "%.0f", $1/1e6}') |
| simulate histogram, 1e6 x 10, shuffled (s) | $(min <"$tmp/nphs") | $(min <"$tmp/hs1") | $(min <"$tmp/hs") |
| simulate histogram, 1e6 x 10, --no-shuffle (s) | $(min <"$tmp/nphn") | $(min <"$tmp/hn1") | $(min <"$tmp/hn") |
| simulate vector-sum, paper defaults, shuffled (s) | $(min <"$tmp/npvs") | $(min <"$tmp/vs1") | $(min <"$tmp/vs") |
| simulate vector-sum, paper defaults, --no-shuffle (s) | $(min <"$tmp/npvn") | $(min <"$tmp/vn1") | $(min <"$tmp/vn") |
TABLE
