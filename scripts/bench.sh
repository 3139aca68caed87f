#!/usr/bin/env bash
# The table of docs/speed.md, measured here: whole-process times of lab run
# beside their references, interleaved and repeated (REPEAT, default 3),
# medians printed with the machine's load. Run by `task bench` (after the
# engine's go benchmarks) or alone: bash scripts/bench.sh
#
#   LINES=10000000   lines of the gzip trace (row 1)
#   REPEAT=3         runs of each command, interleaved
#   BIG=1            also row 5, 10^9 generated arrivals (a minute a run)
#   BASE=path        an older lab binary to print beside this one ("before")
#   SEED_JAVA=dir    the seed lab's Java sources (ShapingScenario.java ...),
#                    compiled and run for row 2's reference when a JDK is here
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-10000000}
REPEAT=${REPEAT:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

go build -o "$work/lab" ./cmd/lab
labs=("$work/lab")
names=(after)
if [ -n "${BASE:-}" ]; then labs=("$BASE" "${labs[@]}"); names=(before after); fi

# wall seconds of a command (its output discarded); its CPU seconds (user
# + system, children included) go to cpu.log under KEY: the CPU column,
# the steadier figure on a loaded machine.
wall() {
  local key=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>&1
  read -r e u s <"$work/time"
  echo "$key $(echo "$u + $s" | bc -l)" >>"$work/cpu.log"
  echo "$e"
}
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m}'; }
ratio() { echo "$1 / $2" | bc -l | awk '{printf "%.2f", $1}'; }

echo "== inputs"
trace="$work/trace.csv.gz"
awk -v n="$LINES" 'BEGIN { srand(1); t = 0; print "t_ms,client";
  for (i = 0; i < n; i++) { t += -log(1 - rand()) * 0.09; printf "%.3f,client-%d\n", t, int(rand() * 1000) } }' | gzip -6 >"$trace"
dur=$(awk -v n="$LINES" 'BEGIN { printf "%d", n * 0.09 * 1.2 + 1000 }')
cat >"$work/trace.json" <<JSON
{"version": 1, "name": "trace", "workload": {"duration_ms": $dur, "parts": [{"type": "trace", "file": "trace.csv.gz"}]},
 "server": {"workers": 100, "service_ms": 10, "deadline_ms": 200},
 "limiters": [{"type": "token-bucket", "rate_rps": 10000, "burst": 1000}]}
JSON
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
c = json.load(open("experiments/presets/token-vs-leaky.json"))
c["workload"]["duration_ms"] = 9900000
json.dump(c, open(work + "/post3.json", "w"))
json.dump({"version": 1, "name": "stream8", "seed": 1,
  "workload": {"duration_ms": 100000, "parts": [{"type": "clients", "group": "c", "clients": 100, "rate_rps": 1000, "arrival": "poisson"}]},
  "server": {"workers": 100, "service_ms": 1, "deadline_ms": 200},
  "limiters": [{"type": "token-bucket", "rate_rps": 90000, "burst": [10, 100, 1000, 10000]},
               {"type": "leaky-bucket", "rate_rps": 90000, "queue": [10, 100, 1000, 10000]}]},
  open(work + "/stream8.json", "w"))
json.dump({"version": 1, "name": "big", "seed": 1,
  "workload": {"duration_ms": 1000000, "parts": [{"type": "poisson", "rate_rps": 1000000}]},
  "server": {"workers": 1000, "service_ms": 1, "deadline_ms": 200},
  "limiters": [{"type": "token-bucket", "rate_rps": 900000, "burst": 1000}]}, open(work + "/big.json", "w"))
PY

# The same commands on one core (taskset: the lab's default workers and
# GOMAXPROCS follow the CPUs it may use), beside --workers 1, which still
# lets the series writer and the arrivals' producer use the second core.
# Run r takes CPU r mod nproc: on a VM whose cores run at different
# speeds for minutes at a time (this one: 0.50 and 0.92 s for the same
# run on core 0 and core 1 at once), a core of its own would be its
# luck, not the lab's.
one_core=""
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then one_core="taskset -c"; fi

echo "== runs ($REPEAT each, interleaved); machine: $(nproc) cores, $(uptime | sed 's/.*load/load/')"
declare -A t
add() { t[$1]="${t[$1]:-} $2"; }
for r in $(seq "$REPEAT"); do
  core=$(((r - 1) % $(nproc)))
  add zcat "$(wall zcat sh -c "zcat '$trace' | wc -l")"
  for i in "${!labs[@]}"; do
    l=${labs[$i]}; n=${names[$i]}
    add "trace-$n" "$(wall "trace-$n" "$l" run -q --config "$work/trace.json" --trace "$trace" --out "$work/o")"
    add "post3-$n" "$(wall "post3-$n" "$l" run -q --config "$work/post3.json" --out "$work/o")"
    # into a new folder: nothing to replace (the rename over the last
    # run's 80 MB series.csv waits 17 to 29 ms here for the disk, mounted
    # with discard, to free its blocks)
    rm -rf "$work/new"
    add "post3new-$n" "$(wall "post3new-$n" "$l" run -q --config "$work/post3.json" --out "$work/new")"
    add "post3w1-$n" "$(wall "post3w1-$n" "$l" run -q --workers 1 --config "$work/post3.json" --out "$work/o")"
    add "stream8w1-$n" "$(wall "stream8w1-$n" "$l" run -q --workers 1 --config "$work/stream8.json" --out "$work/o")"
    add "stream8-$n" "$(wall "stream8-$n" "$l" run -q --workers 2 --config "$work/stream8.json" --out "$work/o")"
    if [ -n "$one_core" ]; then
      add "post3c1-$n" "$(wall "post3c1-$n" $one_core "$core" "$l" run -q --config "$work/post3.json" --out "$work/o")"
      add "stream8c1-$n" "$(wall "stream8c1-$n" $one_core "$core" "$l" run -q --config "$work/stream8.json" --out "$work/o")"
    fi
    if [ -n "${BIG:-}" ]; then add "big-$n" "$(wall "big-$n" "$l" run -q --config "$work/big.json" --out "$work/o")"; fi
  done
done
med() { echo "${t[$1]}" | tr ' ' '\n' | grep . | median; }
cpumed() { awk -v k="$1" '$1 == k {print $2}' "$work/cpu.log" | median; }

java=""
if [ -n "${SEED_JAVA:-}" ] && command -v javac >/dev/null; then
  mkdir -p "$work/java" && javac -d "$work/java" "$SEED_JAVA"/*.java
  for r in $(seq "$REPEAT"); do add java "$(wall java java -cp "$work/java" ShapingScenario 9900)"; done
  java=$(med java)
fi

echo
echo "| work | build | median wall s (CPU s) | reference (CPU s) | ratio (of CPU) | goal |"
echo "|---|---|---|---|---|---|"
z=$(med zcat)
for n in "${names[@]}"; do
  a=$(med "trace-$n"); echo "| $LINES-line gzip trace, one point (lab run --trace) | $n | $a ($(cpumed "trace-$n")) | zcat \| wc -l: $z s ($(cpumed zcat)) | $(ratio "$a" "$z")× zcat ($(ratio "$(cpumed "trace-$n")" "$(cpumed zcat)")×) | ≤ 1.5× |"
done
# seed TITLE KEY: a row per build of KEY's runs against the seed's
# program (run here with SEED_JAVA, else the issue's 3.6 s).
seed() {
  for n in "${names[@]}"; do
    a=$(med "$2-$n")
    if [ -n "$java" ]; then ref="seed Java: $java s"; r="$(ratio "$java" "$a")× faster"
    else ref="seed Java: 3.6 s (issue 24; its source is not here)"; r="$(ratio 3.6 "$a")× faster"; fi
    echo "| $1 | $n | $a ($(cpumed "$2-$n")) | $ref | $r | ≥ 10× |"
  done
}
seed "Post 3 sweep at 9,900 s, whole process" post3
seed "Post 3 sweep at 9,900 s, whole process, into a new folder" post3new
# vs TITLE BASE ONE LABEL: a row per build of BASE's runs against ONE's,
# the same work with less parallelism (LABEL names it), and their ratio.
vs() {
  for n in "${names[@]}"; do
    a=$(med "$3-$n"); b=$(med "$2-$n")
    echo "| $1 | $n | $b ($(cpumed "$2-$n")) | $4: $a s ($(cpumed "$3-$n")) | $(ratio "$a" "$b")× | ≥ 1.8× |"
  done
}
vs "Post 3 sweep, 2 workers vs 1" post3 post3w1 "1 worker"
vs "streamed 10^7 arrivals × 8 points, 2 workers vs 1" stream8 stream8w1 "1 worker"
if [ -n "$one_core" ]; then
  vs "Post 3 sweep, two cores vs one (taskset, each core in turn)" post3 post3c1 "one core"
  vs "streamed 10^7 arrivals × 8 points, two cores vs one (taskset, each core in turn)" stream8 stream8c1 "one core"
fi
if [ -n "${BIG:-}" ]; then
  for n in "${names[@]}"; do echo "| 10^9 generated arrivals, one point | $n | $(med "big-$n") ($(cpumed "big-$n")) | — | — | ≤ 30 s |"; done
fi

# The flash-crowd run page, from lab serve over loopback: its bytes sent
# without and with gzip and the time to its first byte (a cached page).
# Its time to the first chart drawn is the browser test's log line:
#   go test -run TestBrowserFlashCrowdPage -v ./web/
for i in "${!labs[@]}"; do
  l=${labs[$i]}; n=${names[$i]}
  port=$((20000 + RANDOM % 20000))
  "$l" serve --addr "127.0.0.1:$port" --db "$work/lab-$n.db" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/api/types" >/dev/null && break; sleep 0.1; done
  loc=$("$l" presets flash-crowd | curl -s -D - -o /dev/null -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$port/api/runs" | tr -d '\r' | awk 'tolower($1) == "location:" {print $2}')
  id=${loc##*/}
  for _ in $(seq 600); do curl -s "http://127.0.0.1:$port/api/runs/$id" | grep -q '"status": *"done"' && break; sleep 0.2; done
  curl -s -o /dev/null "http://127.0.0.1:$port/runs/$id" # rendered once, then cached
  curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/runs/$id" # its gzip bytes made once
  plain=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port/runs/$id")
  gz=$(curl -s -o /dev/null -H 'Accept-Encoding: gzip' -w '%{size_download} %{time_starttransfer}' "http://127.0.0.1:$port/runs/$id")
  enc=$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/runs/$id" | tr -d '\r' | awk 'tolower($1) == "content-encoding:" {print $2}')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "| flash-crowd run page (lab serve, loopback) | $n | first byte ${gz#* } s | $plain bytes of HTML | ${gz% *} bytes sent (${enc:-identity}) | compressed |"
done
echo
echo "load after: $(uptime | sed 's/.*load/load/')"
