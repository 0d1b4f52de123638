#!/usr/bin/env bash
# The command-level comparison of issue 16: numcheck's commands end to end against the script or
# tool a researcher would use instead, side by side in one run, medians of repeated runs. Never run
# by the tests or CI (it takes minutes and its figures depend on the machine); run it with
#   make bench-compare            (or: bash bench/compare.sh [--scale K] [--runs N] [--only LIST])
# (LIST: any of score,report,run,start; default all; --fixtures run,slim: the score rows' fixtures)
#
# What it measures (all on this machine, at the same time, so load affects both sides alike):
#   orbit score    numcheck on K copies of the default benchmark (K = 117 gives 1,006,200 prompts)
#                  vs bench/python_grader.py (re + fractions.Fraction); the script checks that both
#                  give the same strict and audit grade on every record. Two fixtures, one row each:
#                  the records `numcheck orbit run` writes, made by running it against
#                  numcheck_test_server (tests/support) answering with the reference system's
#                  faults (--inject) and a reasoning text (--reasoning), the headline; and the slim
#                  records of bench/make_responses.py (prompt_id, response, finish_reason, usage).
#                  numcheck twice, interleaved with the peer: with the benchmark index cache warm
#                  (a cache folder an earlier score filled) and cold (a fresh cache folder).
#                  Peak memory (max RSS) from /usr/bin/time.
#   orbit report   numcheck, 5 systems (the default benchmark run by `orbit run` against the test
#                  server with 5 fault profiles, then scored), 10,000 bootstrap draws, whole command
#                  vs bench/numpy_bootstrap.py doing the same resampling (its input exported by
#                  build/release/bench/bench_report from those scores).
#   orbit run      numcheck (the default benchmark's 8,600 prompts, whole process, N runs with a
#                  fresh run folder and cache each: the median rate) vs wrk (3 s, run right before
#                  each of numcheck's runs; the ratio is the median of each run's ratio to the wrk
#                  beside it) at concurrency 1, 16 and 64 against nginx-light serving a canned
#                  completion on a loopback port (config generated here, started and stopped here).
#                  Also the run's rate between its first request and its last answer (the records'
#                  own times), in parentheses: the whole-process figure less the command's start
#                  and finish. And a long run at concurrency 16 and 64: 20 copies of the default
#                  benchmark (172,000 prompts, a few seconds), whole process, each beside a wrk. At
#                  concurrency 16 and 64 the same runs again with --no-cache (interleaved with the
#                  cached ones): the runner without the response cache's storing of every answer.
#                  Then the CPU budget of those runs: the CPU time a request costs numcheck (user +
#                  system, from hyperfine) and nginx's worker (/proc), against wrk's and nginx's under
#                  wrk, and the rate the machine's cores allow numcheck at that cost (cores / the CPU a
#                  request costs client and server together), as a fraction of wrk's rate: where that
#                  bound is below 0.8, the gap is the CPU numcheck spends on a request, not waiting.
#   orbit generate and `numcheck --version` vs a C++ hello world (hyperfine).
# Prints the issue's table with the new figures. Work files go to $WORK (default /tmp/numcheck-compare).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli="$root/build/release/src/cli/numcheck"
py=/usr/bin/python3
work=${WORK:-/tmp/numcheck-compare}
scale=117
runs=3
sections="score report run start"
fixtures="run slim"  # the score rows' fixtures (below)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --scale) scale=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --only) sections=${2//,/ }; shift 2 ;;
    --fixtures) fixtures=${2//,/ }; shift 2 ;;
    *) echo "usage: $0 [--scale K] [--runs N] [--only score,report,run,start] [--fixtures run,slim]" >&2; exit 2 ;;
  esac
done
[[ -x "$cli" ]] || { echo "build numcheck first (cmake --build --preset release)" >&2; exit 1; }
for tool in hyperfine /usr/bin/time "$py"; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/setup.sh --with-test-tools)" >&2; exit 1; }
done
mkdir -p "$work"
rows=()

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# Runs "$@" $runs times; prints "median_seconds median_max_rss_kb median_cpu_seconds" (CPU: user +
# system, the figure to compare on a shared machine).
measure() {
  local t=() m=() c=() s k u y
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%e %M %U %S" -o "$work/time.txt" "$@" >/dev/null 2>&1
    read -r s k u y <"$work/time.txt"
    t+=("$s")
    m+=("$k")
    c+=("$(awk -v u="$u" -v y="$y" 'BEGIN {printf "%.2f", u + y}')")
  done
  echo "$(printf '%s\n' "${t[@]}" | median) $(printf '%s\n' "${m[@]}" | median) $(printf '%s\n' "${c[@]}" | median)"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }
# copies_spec K OUT: the default spec with its templates K times (ids of copy k > 0 end in k).
copies_spec() {
  "$py" - "$root/data/orbit/default_spec.json" "$2" "$1" <<'EOF'
import copy, json, sys
spec = json.load(open(sys.argv[1]))
out = []
for k in range(int(sys.argv[3])):
    for t in spec["templates"]:
        c = copy.deepcopy(t)
        if k:
            c["id"] = f"{t['id']}{k}"
        out.append(c)
spec["templates"] = out
json.dump(spec, open(sys.argv[2], "w"))
EOF
}

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (figures on a shared machine are noisy)"

# ---- runner-written fixtures -------------------------------------------------------------------
# serve_and_run BENCH INJECT OUT MODEL [ORBIT RUN OPTION...]: starts numcheck_test_server (serving
# model MODEL) on BENCH with the reference system's answer faults INJECT and a thinking model's
# reasoning, runs `numcheck
# orbit run` against it into OUT at concurrency 16 (skipped when OUT already has its records:
# minutes at a million prompts), and stops the server. So every record is what a live run writes:
# request, response, reasoning, finish_reason, usage, timings, system_fingerprint, attempts,
# times, in completion order.
server="$root/build/release/tests/support/numcheck_test_server"
serve_and_run() {
  local bench=$1 faults=$2 out=$3 model=$4 pid url=
  [[ -f "$out/responses.jsonl" && -f "$out/run.json" ]] && return 0
  rm -rf "$out"
  "$server" --port 0 --bench "$bench" --model "$model" --inject "$faults" --reasoning --threads 32 \
    >"$work/server.url" 2>"$work/server.log" &
  pid=$!
  for _ in $(seq 600); do
    url=$(head -n1 "$work/server.url" 2>/dev/null || true)
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.2
  done
  "$cli" orbit run --bench "$bench" --out "$out" --endpoint "$url" --model "$model" --concurrency 16 \
    --no-cache --no-fsync --progress none "${@:5}" >/dev/null || { kill "$pid"; exit 1; }
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
# The main job's fault rates of the simulated system: 5% "1.494 × 10^4" (strict parse_error, audit
# correct), 3% markdown (format_error, audit correct), 2% unit slips (a wrong value in both
# layers), 1% truncations (finish_reason length).
inject=times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01

# ---- orbit score vs the Python grader --------------------------------------------------------
if [[ " $sections " == *" score "* ]]; then
  [[ -x "$server" ]] || { echo "build numcheck_test_server first (make build-all)" >&2; exit 1; }
  echo "== orbit score: $scale copies of the default benchmark"
  copies_spec "$scale" "$work/spec.json.new"
  # The spec replaced only when it changed, so that an earlier run's benchmark and responses
  # (minutes to make at 1M prompts) are reused by the next one.
  if cmp -s "$work/spec.json.new" "$work/spec.json"; then rm "$work/spec.json.new"; else mv "$work/spec.json.new" "$work/spec.json"; fi
  if [[ ! -f "$work/bench/views.jsonl" || "$work/spec.json" -nt "$work/bench/views.jsonl" ]]; then
    rm -rf "$work/bench" "$work/run" "$work/slim"
    "$cli" orbit generate --spec "$work/spec.json" --out "$work/bench" >/dev/null
  fi
  # Row 1, the headline: the records `orbit run` writes.
  serve_and_run "$work/bench" "$inject" "$work/run" test-model
  # Row 2, the slim fixture: only prompt_id, response (~300 bytes of reasoning and a FINAL line),
  # finish_reason and usage, faults by a hash of the prompt id, in benchmark order
  # (bench/make_responses.py; numcheck never writes records without a request).
  if [[ ! -f "$work/slim/responses.jsonl" ]]; then
    mkdir -p "$work/slim"
    "$py" "$root/bench/make_responses.py" "$work/bench" "$work/slim/responses.jsonl"
  fi
  # score_rows NAME LABEL: numcheck with the benchmark index cache warm (a cache folder an earlier
  # score of the same benchmark filled) and cold (a fresh cache folder: the first score of a
  # benchmark, which parses bases.jsonl and views.jsonl and writes the cache; the benchmark's files
  # are in the page cache either way), and the Python grader, interleaved, $runs rounds; medians.
  score_rows() {
    local d="$work/$1" n wt=() wm=() wc=() ct=() cm=() cc=() pt=() pm=() pc=() s k c
    n=$(wc -l <"$d/responses.jsonl")
    NUMCHECK_CACHE_DIR="$work/cache" "$cli" orbit score --bench "$work/bench" --responses "$d/responses.jsonl" --out "$d/scores.jsonl" >/dev/null
    for ((i = 0; i < runs; i++)); do
      read -r s k c < <(NUMCHECK_CACHE_DIR="$work/cache" runs=1 measure "$cli" orbit score --bench "$work/bench" --responses "$d/responses.jsonl" --out "$d/scores.jsonl")
      wt+=("$s") wm+=("$k") wc+=("$c")
      rm -rf "$work/cache-cold"
      read -r s k c < <(NUMCHECK_CACHE_DIR="$work/cache-cold" runs=1 measure "$cli" orbit score --bench "$work/bench" --responses "$d/responses.jsonl" --out "$d/scores.jsonl")
      ct+=("$s") cm+=("$k") cc+=("$c")
      read -r s k c < <(runs=1 measure "$py" "$root/bench/python_grader.py" "$work/bench" "$d/responses.jsonl" "$d/py_scores.jsonl")
      pt+=("$s") pm+=("$k") pc+=("$c")
    done
    echo "   $1 (load average $(cut -d' ' -f1-3 /proc/loadavg)): wall / CPU s: numcheck warm ${wt[*]} / ${wc[*]}, cold ${ct[*]} / ${cc[*]}, Python ${pt[*]} / ${pc[*]}; peak KB: warm ${wm[*]}, cold ${cm[*]}"
    "$py" - "$d/scores.jsonl" "$d/py_scores.jsonl" <<'EOF'
import json, sys
n = bad = 0
with open(sys.argv[1], encoding="utf-8") as a, open(sys.argv[2], encoding="utf-8") as b:
    for la, lb in zip(a, b, strict=True):
        x, y = json.loads(la), json.loads(lb)
        n += 1
        if x["prompt_id"] != y["prompt_id"] or x["strict"] != y["strict"] or x["audit"] != y["audit"]:
            bad += 1
            if bad <= 5:
                print("differs:", x["prompt_id"], x["strict"], x["audit"], "|", y["strict"], y["audit"])
print(f"   identical grades: {n - bad} of {n} records")
sys.exit(1 if bad else 0)
EOF
    local w c p w1 c1 p1 wmm cmm pmm
    w=$(printf '%s\n' "${wt[@]}" | median) c=$(printf '%s\n' "${ct[@]}" | median) p=$(printf '%s\n' "${pt[@]}" | median)
    w1=$(printf '%s\n' "${wc[@]}" | median) c1=$(printf '%s\n' "${cc[@]}" | median) p1=$(printf '%s\n' "${pc[@]}" | median)
    wmm=$(printf '%s\n' "${wm[@]}" | median | awk '{printf "%.0f", $1 / 1024}')
    cmm=$(printf '%s\n' "${cm[@]}" | median | awk '{printf "%.0f", $1 / 1024}')
    pmm=$(printf '%s\n' "${pm[@]}" | median | awk '{printf "%.0f", $1 / 1024}')
    rows+=("| \`orbit score\`, $n $2 ($(du -m "$d/responses.jsonl" | cut -f1) MB), index cache warm | ${w} s (CPU ${w1} s), ${wmm} MB peak | Python grader, identical grades: ${p} s (CPU ${p1} s), ${pmm} MB | $(ratio "$p" "$w")x (CPU $(ratio "$p1" "$w1")x) |")
    rows+=("| \`orbit score\`, the same, cold cache folder | ${c} s (CPU ${c1} s), ${cmm} MB peak; cold / warm $(ratio "$c" "$w") (CPU $(ratio "$c1" "$w1")) | (same) | $(ratio "$p" "$c")x (CPU $(ratio "$p1" "$c1")x) |")
  }
  if [[ " $fixtures " == *" run "* ]]; then score_rows run "runner-written records"; fi
  if [[ " $fixtures " == *" slim "* ]]; then score_rows slim "slim records"; fi
fi

# ---- orbit report vs numpy ---------------------------------------------------------------------
# Five systems on the default benchmark, each run by `orbit run` against the test server with
# fault rates of its own and scored by `orbit score`; the report reads the scores and (for its
# examples and provenance) the responses and run.json. bench_report exports the bootstrap's input
# from those scores (NUMCHECK_BENCH_REPORT_RUNS) for bench/numpy_bootstrap.py.
if [[ " $sections " == *" report "* && -x "$root/build/release/bench/bench_report" ]] && "$py" -c 'import numpy' 2>/dev/null; then
  echo "== orbit report: 5 systems, 10,000 draws"
  rdir="$work/report-runs"
  mkdir -p "$rdir"
  [[ -f "$rdir/bench/views.jsonl" ]] || "$cli" orbit generate --out "$rdir/bench" >/dev/null
  profiles=("$inject" times_ten=0.10,markdown=0.01,unit_slip=0.05,truncation=0.05
    times_ten=0.02,markdown=0.08,unit_slip=0.01,truncation=0.02 times_ten=0.01
    times_ten=0.20,markdown=0.02,unit_slip=0.10,truncation=0.01)
  for s in 1 2 3 4 5; do
    serve_and_run "$rdir/bench" "${profiles[$((s - 1))]}" "$rdir/system$s" "system$s"
    [[ -f "$rdir/system$s/scores.jsonl" ]] || "$cli" orbit score --bench "$rdir/bench" \
      --responses "$rdir/system$s/responses.jsonl" --out "$rdir/system$s/scores.jsonl" >/dev/null
  done
  scores=("$rdir"/system*/scores.jsonl)
  "$cli" orbit report --bench "$rdir/bench" --scores "${scores[@]}" --out "$rdir/report" >/dev/null
  NUMCHECK_BENCH_REPORT_RUNS="$rdir" "$root/build/release/bench/bench_report" --benchmark_filter=BM_LoadScores \
    --benchmark_min_time=0.01 >/dev/null 2>&1
  rts=() rcs=() nps=()
  for ((i = 0; i < runs; i++)); do
    read -r s _ c < <(runs=1 measure "$cli" orbit report --bench "$rdir/bench" --scores "${scores[@]}" --out "$rdir/report")
    rts+=("$s") rcs+=("$c")
    nps+=("$("$py" "$root/bench/numpy_bootstrap.py" "$rdir" --repeat 1 |
      awk '/best of/ {for (i = 1; i < NF; i++) if ($(i + 1) == "s" && $(i + 2) == "total,") print $i}')")
  done
  echo "   (load average $(cut -d' ' -f1-3 /proc/loadavg)) numcheck ${rts[*]} s (CPU ${rcs[*]} s), numpy ${nps[*]} s"
  rt=$(printf '%s\n' "${rts[@]}" | median) rc=$(printf '%s\n' "${rcs[@]}" | median) np=$(printf '%s\n' "${nps[@]}" | median)
  rows+=("| \`orbit report\`, 5 systems of $(wc -l <"$rdir/system1/responses.jsonl") runner-written records each, 10,000 draws, whole command | ${rt} s (CPU ${rc} s) | numpy, the same resampling (the bootstrap alone, wall): ${np} s | $(ratio "$np" "$rt")x |")
fi

# ---- orbit run vs wrk against nginx-light ------------------------------------------------------
if [[ " $sections " == *" run "* ]] && command -v nginx >/dev/null && command -v wrk >/dev/null; then
  echo "== orbit run vs wrk against nginx"
  port=18716
  ndir="$work/nginx"
  mkdir -p "$ndir/html/v1/chat" "$ndir/logs"
  cat >"$ndir/html/v1/chat/completions" <<'EOF'
{"id":"c","object":"chat.completion","model":"canned","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"The total is 2.75 L.\nFINAL: 2.75 L"}}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}
EOF
  # The model list the runner's preflight asks for (GET /v1/models) before it sends anything.
  echo '{"object":"list","data":[{"id":"canned","object":"model","owned_by":"nginx"}]}' >"$ndir/html/v1/models"
  # Paths quoted: a WORK with a space in it stays one argument of each directive.
  cat >"$ndir/nginx.conf" <<EOF
worker_processes 1;
pid "$ndir/nginx.pid";
error_log "$ndir/logs/error.log";
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    root "$ndir/html";
    location / { default_type application/json; error_page 405 =200 \$uri; }
  }
}
EOF
  nginx -c "$ndir/nginx.conf" -p "$ndir"
  trap 'nginx -c "$ndir/nginx.conf" -p "$ndir" -s stop 2>/dev/null || true' EXIT
  sleep 0.5
  [[ -f "$work/small/views.jsonl" ]] || "$cli" orbit generate --out "$work/small" >/dev/null
  # wrk posts a body of the runner's size and shape (bench/wrk_post.lua with __BODY__ filled in, as
  # a Lua long string so that the JSON needs no escaping).
  "$py" - "$root/bench/wrk_post.lua" "$work/wrk_post.lua" <<'EOF'
import json, sys
body = json.dumps({"model": "canned", "messages": [{"role": "user", "content":
    "A jug holds 8.4 liters of water and a bottle holds 4.4 liters of water. Both are emptied into a large "
    "bucket that was empty before. How many liters of water are in the bucket?\nReturn exactly one final "
    "line in this form: FINAL: <number> <unit>"}], "max_tokens": 1024, "temperature": 0.0, "seed": 20260725},
    separators=(",", ":"))
lua = open(sys.argv[1]).read().replace('"__BODY__"', "[[" + body + "]]")
open(sys.argv[2], "w").write(lua)
EOF
  mkdir -p "$work/runs"  # the run logs go here (the redirect below needs the folder)
  # nginx's one worker process (the master's child), whose CPU time the budget rows count. Read in
  # the shell, process by process: a process that ends meanwhile is skipped (mawk would stop).
  nginx_master=$(cat "$ndir/nginx.pid") nginx_worker=
  for f in /proc/[0-9]*/stat; do
    read -r st 2>/dev/null <"$f" || continue
    rest=${st##*) }  # the fields after the command's name, which may hold spaces
    read -r _ ppid _ <<<"$rest"
    if [[ "$ppid" == "$nginx_master" && "$st" == *"(nginx)"* ]]; then nginx_worker=${st%% *}; break; fi
  done
  [[ -n "$nginx_worker" ]] || { echo "compare: cannot find nginx's worker process" >&2; exit 1; }
  tck=$(getconf CLK_TCK)
  # nginx_cpu: the worker's CPU time so far (user + system), in seconds.
  nginx_cpu() { awk -v t="$tck" '{printf "%.2f", ($14 + $15) / t}' "/proc/$nginx_worker/stat"; }
  # timed_run BENCH NAME C [OPTION...]: one run of BENCH into $work/runs/NAME at concurrency C, with
  # a fresh run folder and cache, and the options given; prints its whole-process rate (prompts a
  # second). The process is timed by hyperfine (-N, one run: from its spawn to its exit, without a
  # shell, a `date` or /usr/bin/time around it, whose own forks and execs took about 4 ms on each
  # side of a 0.3 s run), which also gives its user and system CPU. Leaves in $work/runs/NAME.cpu
  # the CPU microseconds a prompt cost numcheck and nginx's worker. A failed run would time only its
  # failure: the script runs it again to show its error, and stops instead of printing a rate.
  timed_run() {
    local n n0 n1 cmd
    n=$(wc -l <"$1/views.jsonl")
    rm -rf "$work/runs/$2" "$work/runs/cache-$2"
    cmd=("$cli" orbit run --bench "$1" --out "$work/runs/$2" --endpoint "http://127.0.0.1:$port/v1" --model canned
      --concurrency "$3" --cache-dir "$work/runs/cache-$2" --progress none "${@:4}")
    n0=$(nginx_cpu)
    # hyperfine -N splits its command as a shell would (without running one), so each argument is
    # quoted (printf %q) and a WORK with a space in it stays one argument. Its --output takes the
    # command's standard output only, not the error a failed run prints.
    hyperfine -N --runs 1 --style none --output "$work/runs/$2.log" --export-json "$work/runs/$2.json" \
      "$(printf '%q ' "${cmd[@]}")" >/dev/null 2>&1 || {
      echo "compare: orbit run $2 (concurrency $3) failed:" >&2
      rm -rf "$work/runs/$2" "$work/runs/cache-$2"
      "${cmd[@]}" >&2 || true
      exit 1
    }
    n1=$(nginx_cpu)
    "$py" - "$work/runs/$2.json" "$n" "$n0" "$n1" "$work/runs/$2.cpu" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
n, a, b = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
open(sys.argv[5], "w").write(f"{(r['user'] + r['system']) * 1e6 / n:.2f} {(b - a) * 1e6 / n:.2f}\n")
print(f"{n / r['times'][0]:.0f}", end="")
EOF
  }
  # us_median NAME...: the medians of the two columns of $work/runs/NAME.cpu over the given runs.
  us_median() {
    local f
    echo "$(for f in "$@"; do cut -d' ' -f1 "$work/runs/$f.cpu"; done | median)" \
      "$(for f in "$@"; do cut -d' ' -f2 "$work/runs/$f.cpu"; done | median)"
  }
  # steady_rate NAME: the rate of run NAME between its first request and its last answer, from the
  # records' own times (started_at, completed_at; milliseconds): without the command's start and finish.
  steady_rate() {
    "$py" - "$work/runs/$1/responses.jsonl" <<'EOF'
import datetime, json, sys
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
first, last, n = float("inf"), 0.0, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    first, last, n = min(first, t(r["started_at"])), max(last, t(r["completed_at"])), n + 1
print(f"{n / max(last - first, 1e-3):.0f}")
EOF
  }
  # wrk_run C: wrk at concurrency C for $wrk_seconds against the same nginx. Sets wrk_last to its
  # rate (requests a second), and wrk_last_us and nginx_last_us to its CPU microseconds a request and
  # nginx's under it ("N requests in 3.00s"). Run right before each of numcheck's runs, so that each
  # run is compared with wrk at the same moment of the host: on a shared machine the host's speed
  # moves by a third within seconds, and one wrk for all the runs at a concurrency compared the long
  # runs with a wrk measured minutes before them.
  wrk_seconds=3
  wrk_run() {
    local n0 n1 wn
    n0=$(nginx_cpu)
    /usr/bin/time -f "%U %S" -o "$work/wrk.time" \
      wrk -t1 -c"$1" -d"${wrk_seconds}s" -s "$work/wrk_post.lua" "http://127.0.0.1:$port/v1/chat/completions" >"$work/wrk.out"
    n1=$(nginx_cpu)
    wrk_last=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$work/wrk.out")
    wn=$(awk '/requests in/ {print $1}' "$work/wrk.out")
    wrk_last_us=$(awk -v n="$wn" '{printf "%.2f", ($1 + $2) * 1e6 / n}' "$work/wrk.time")
    nginx_last_us=$(awk -v n="$wn" -v a="$n0" -v b="$n1" 'BEGIN {printf "%.2f", (b - a) * 1e6 / n}')
    wrk_seq+=("$wrk_section $1 $wrk_last")
  }
  wrk_seq=()  # "section concurrency rate" of every wrk run, in the order they ran
  wrk_section=short
  # per_run_ratios RATES WRKS (array names): RATES[i] / WRKS[i], one a line.
  per_run_ratios() {
    local -n rs=$1 ws=$2
    local i
    for i in "${!rs[@]}"; do ratio "${rs[$i]}" "${ws[$i]}"; echo; done
  }
  # run_row LABEL WHOLES WRKS [STEADIES] (array names): a row from the runs' whole-process rates
  # (and their rates from first request to last answer, when given) against the wrk run beside
  # each: the medians of both, the median of the runs' own ratios to their wrk, and those ratios.
  run_row() {
    local -n ws_=$2 wk_=$3
    local text rel
    text="$(printf '%s\n' "${ws_[@]}" | median) req/s whole process"
    rel=$(per_run_ratios "$2" "$3" | median)
    if [[ -n "${4:-}" ]]; then
      local -n st_=$4
      text+=" ($(printf '%s\n' "${st_[@]}" | median) req/s from first request to last answer)"
      rel+=" ($(per_run_ratios "$4" "$3" | median))"
    fi
    rows+=("| $1 | $text | wrk beside each run, same request: $(printf '%s\n' "${wk_[@]}" | median) req/s (${wk_[*]}) | $rel; each run: $(per_run_ratios "$2" "$3" | paste -sd' ') |")
  }
  for c in 1 16 64; do
    # $runs rounds at each concurrency: wrk, then numcheck with a fresh run folder and cache; at 16
    # and 64 then wrk again and the same run with --no-cache. Each run's ratio is to the wrk right
    # before it.
    wholes=() steadies=() wrks=() nc_wholes=() nc_steadies=() nc_wrks=()
    for ((r = 0; r < runs; r++)); do
      wrk_run "$c"
      wrks+=("$wrk_last")
      wholes+=("$(timed_run "$work/small" "c$c" "$c")")
      steadies+=("$(steady_rate "c$c")")
      if ((c > 1)); then
        wrk_run "$c"
        nc_wrks+=("$wrk_last")
        nc_wholes+=("$(timed_run "$work/small" "nc$c" "$c" --no-cache)")
        nc_steadies+=("$(steady_rate "nc$c")")
      fi
    done
    run_row "\`orbit run\`, concurrency $c" wholes wrks steadies
    if ((c > 1)); then run_row "\`orbit run --no-cache\`, concurrency $c" nc_wholes nc_wrks nc_steadies; fi
  done
  # A long run: 20 copies of the default benchmark (172,000 prompts, a few seconds), so that the
  # command's fixed start and end weigh little and the response cache holds what a large run leaves
  # in it; whole process, the median of $runs rounds (wrk, the run, the run with --no-cache).
  [[ -f "$work/long/views.jsonl" ]] || {
    copies_spec 20 "$work/spec20.json"
    "$cli" orbit generate --spec "$work/spec20.json" --out "$work/long" >/dev/null
  }
  long=$(wc -l <"$work/long/views.jsonl")
  wrk_section=long
  # budget_rows C: the CPU budget row of the long runs at concurrency C. numcheck's and nginx's CPU
  # microseconds a prompt (medians of the runs), wrk's and nginx's under wrk (medians of the wrk runs
  # beside them); then the most the machine's cores allow numcheck at that cost, cores * 1e6 /
  # (numcheck + nginx) requests a second, as a fraction of wrk's rate, and the CPU a request may cost
  # numcheck for 0.8 of wrk.
  budget_rows() {
    local c=$1 names=() nc_names=() cu nu ncu nnu cores w wu nwu
    for ((r = 0; r < runs; r++)); do names+=("long$c-$r"); nc_names+=("longnc$c-$r"); done
    read -r cu nu < <(us_median "${names[@]}")
    read -r ncu nnu < <(us_median "${nc_names[@]}")
    cores=$(nproc)
    w=$(printf '%s\n' "${wrks[@]}" "${nc_wrks[@]}" | median)
    wu=$(printf '%s\n' "${wrk_uss[@]}" | median)
    nwu=$(printf '%s\n' "${nginx_wrk_uss[@]}" | median)
    local bound nc_bound allowed
    bound=$(awk -v k="$cores" -v a="$cu" -v b="$nu" -v w="$w" 'BEGIN {printf "%.2f", k * 1e6 / (a + b) / w}')
    nc_bound=$(awk -v k="$cores" -v a="$ncu" -v b="$nnu" -v w="$w" 'BEGIN {printf "%.2f", k * 1e6 / (a + b) / w}')
    allowed=$(awk -v k="$cores" -v b="$nu" -v w="$w" 'BEGIN {printf "%.1f", k * 1e6 / (0.8 * w) - b}')
    rows+=("| CPU a request, concurrency $c, $long prompts ($cores cores) | numcheck $cu us + nginx $nu us (\`--no-cache\`: $ncu + $nnu us) | wrk $wu us + nginx $nwu us | cores allow $bound (\`--no-cache\`: $nc_bound); 0.8 needs numcheck <= $allowed us |")
  }
  for c in 16 64; do
    wholes=() nc_wholes=() wrks=() nc_wrks=() wrk_uss=() nginx_wrk_uss=()
    for ((r = 0; r < runs; r++)); do
      wrk_run "$c"
      wrks+=("$wrk_last") wrk_uss+=("$wrk_last_us") nginx_wrk_uss+=("$nginx_last_us")
      wholes+=("$(timed_run "$work/long" "long$c" "$c")")
      cp "$work/runs/long$c.cpu" "$work/runs/long$c-$r.cpu"
      wrk_run "$c"
      nc_wrks+=("$wrk_last") wrk_uss+=("$wrk_last_us") nginx_wrk_uss+=("$nginx_last_us")
      nc_wholes+=("$(timed_run "$work/long" "longnc$c" "$c" --no-cache)")
      cp "$work/runs/longnc$c.cpu" "$work/runs/longnc$c-$r.cpu"
    done
    run_row "\`orbit run\`, concurrency $c, $long prompts (20 copies of the default benchmark)" wholes wrks
    run_row "\`orbit run --no-cache\`, concurrency $c, $long prompts" nc_wholes nc_wrks
    # The CPU budget of these long runs, from the .cpu file each run left (copied per run in the
    # loop above, since a run's name is reused), against the wrk runs beside them.
    budget_rows "$c"
  done
  # The host's own noise, measured on the peer: each wrk run against the one before it at the same
  # concurrency in the same section (short or long runs), one numcheck run apart. Where wrk itself
  # falls under 0.8 of the wrk a few seconds before it, a single run of numcheck can too, whatever
  # its code.
  for c in 1 16 64; do
    read -r lo hi under n < <(printf '%s\n' "${wrk_seq[@]}" | awk -v c="$c" '
      $2 == c {
        if ($1 in prev) { r = $3 / prev[$1]; if (n == 0 || r < lo) lo = r; if (n == 0 || r > hi) hi = r; if (r < 0.8) u++; n++ }
        prev[$1] = $3
      }
      END { printf "%.2f %.2f %d %d\n", lo, hi, u, n }')
    if ((n == 0)); then  # one wrk run at this concurrency (--runs 1): nothing to compare it with
      rows+=("| wrk at concurrency $c against the wrk before it (the host's noise) | - | no pair: one wrk run in each section | - |")
    else
      rows+=("| wrk at concurrency $c against the wrk before it (the host's noise) | - | $n pairs, one run apart: $lo-$hi | $under of $n under 0.8 |")
    fi
  done
fi

# ---- start-up and generate ---------------------------------------------------------------------
if [[ " $sections " == *" start "* ]]; then
echo "== start-up"
printf '#include <iostream>\nint main() { std::cout << "hello\\n"; }\n' >"$work/hello.cpp"
g++ -O2 "$work/hello.cpp" -o "$work/hello"
# Each argument quoted (printf %q): hyperfine -N splits a command as a shell would.
hyperfine -N -w 10 -r 100 --export-json "$work/start.json" "$(printf '%q ' "$cli" --version)" \
  "$(printf '%q' "$work/hello")" >/dev/null 2>&1 || {
  echo "compare: timing numcheck --version failed:" >&2
  "$cli" --version >&2 || true
  exit 1
}
rm -rf "$work/gen"
hyperfine -N -w 3 -r 20 --prepare "$(printf '%q ' rm -rf "$work/gen")" --export-json "$work/gen.json" \
  "$(printf '%q ' "$cli" orbit generate --out "$work/gen")" >/dev/null 2>&1 || {
  echo "compare: timing orbit generate failed:" >&2
  rm -rf "$work/gen"
  "$cli" orbit generate --out "$work/gen" >/dev/null || true
  exit 1
}
read -r ver hello gen < <("$py" - "$work/start.json" "$work/gen.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["results"]
g = json.load(open(sys.argv[2]))["results"]
print(f"{s[0]['median'] * 1000:.1f} {s[1]['median'] * 1000:.1f} {g[0]['median'] * 1000:.1f}")
EOF
)
rows+=("| \`numcheck --version\` | ${ver} ms | C++ hello world: ${hello} ms | $(ratio "$ver" "$hello")x |")
rows+=("| \`orbit generate\` default, whole process | ${gen} ms | - | - |")
fi

echo
echo "| command (measured side by side, medians of $runs runs; shared machine) | numcheck | peer | ratio |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
