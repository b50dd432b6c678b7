#!/usr/bin/env bash
# gpu-check.sh [OUTDIR] - the one-call GPU check: on a machine with an NVIDIA
# GPU and nvcc (or an AMD GPU and ROCm: GPU_CHECK_KIND=hip, chosen by itself
# when rocminfo finds a GPU and nvidia-smi does not), build from source, run
# the GPU tests at full size, then benchmark SpTRSV
# and ILU0 with every policy and the vendor library (cuSPARSE) on the real
# matrices and on generated problems of 10^6-10^7 unknowns (natural and
# permuted orders, circuit-like). Full logs, CSV and JSON go to OUTDIR
# (default bench/out/gpu-check-DATE); a short table is printed last.
#
# Works offline and as root on a bare machine: missing -dev packages are
# installed with .ci/deps.sh when apt-get can reach a mirror; otherwise the
# script says exactly what could not be built and goes on with what can.
# Bounded: every step runs under the remaining time of an 8-minute budget
# (GPU_CHECK_BUDGET seconds); steps that do not fit are reported skipped.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-bench/out/gpu-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUDGET=${GPU_CHECK_BUDGET:-480}
START=$SECONDS
JOBS=$(nproc 2>/dev/null || echo 4)
export PATH="$PATH:/usr/local/cuda/bin"
unset ATA_GPU_TEST_SIZE ATA_GPU_TEST_ONLY ATA_GPU_EPOCH0   # the full GPU suite, no sampling
KIND=${GPU_CHECK_KIND:-cuda}
if [ -z "${GPU_CHECK_KIND:-}" ] && ! command -v nvidia-smi >/dev/null && command -v rocminfo >/dev/null &&
   rocminfo 2>/dev/null | grep -q 'gfx9'; then KIND=hip; fi
if [ "$KIND" = hip ]; then BDIR=build-hip; else BDIR=build; fi
export ATA_BACKEND_PATH=$ROOT/$BDIR   # the GPU module, for $BDIR/tests/test_gpu and ata-bench
exec > >(tee "$OUT/gpu-check.log") 2>&1

notes=()            # one line per problem, repeated in the summary
note() { notes+=("$*"); echo "gpu-check: $*"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# run NAME SECONDS_WANTED CMD...: log to OUT/NAME.log, bounded by the budget.
run() {
  local name=$1 want=$2; shift 2
  local rem; rem=$(left)
  if [ "$rem" -lt 15 ]; then note "$name: skipped (time budget of ${BUDGET}s spent)"; return 124; fi
  [ "$want" -gt "$rem" ] && want=$rem
  echo "== $name (limit ${want}s): $*"
  local t0=$SECONDS
  timeout --signal=INT --kill-after=10 "$want" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "   -> rc $rc in $((SECONDS - t0))s, log $OUT/$name.log"
  [ $rc -eq 124 ] && note "$name: stopped at its time limit (${want}s)"
  return $rc
}

echo "== gpu-check: $(date -u +%FT%TZ) in $ROOT, output $OUT"
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo none) $(git status --porcelain 2>/dev/null | wc -l) changed files"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  else echo "nvidia-smi: not available"; fi
  command -v nvcc >/dev/null && nvcc --version | tail -2 || echo "nvcc: NOT FOUND"
  if [ "$KIND" = hip ]; then
    command -v rocminfo >/dev/null && rocminfo 2>/dev/null | grep -m2 -E 'Marketing Name|gfx' || echo "rocminfo: none"
    make -s gpu-info ATA_GPU=hip BUILD=build-hip 2>&1 | head -1
  fi
  echo "backend: $KIND"
  gcc --version | head -1
  echo "cpus: $JOBS"
} | tee "$OUT/environment.txt"

# ---------------------------------------------------------------- deps
missing=()
hdr() { [ -e "$1" ] || missing+=("$2"); }
hdr /usr/include/suitesparse/cholmod.h libsuitesparse-dev
hdr /usr/include/suitesparse/RBio.h libsuitesparse-dev
hdr /usr/include/metis.h libmetis-dev
hdr /usr/include/archive.h libarchive-dev
hdr /usr/include/zlib.h zlib1g-dev
hdr /usr/include/cmocka.h libcmocka-dev
MAKE_DEPS=()
if [ ${#missing[@]} -gt 0 ]; then
  note "missing packages: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')"
  if run deps 150 bash .ci/deps.sh; then
    note "installed them with .ci/deps.sh"
  else
    note "could not install them (apt-get cannot reach a mirror?): see $OUT/deps.log"
    MAKE_DEPS=(-o deps)   # do not let every make call retry (and fail in) deps.sh
  fi
fi
no_lib=0
for h in /usr/include/suitesparse/cholmod.h /usr/include/suitesparse/RBio.h /usr/include/metis.h /usr/include/archive.h; do
  [ -e "$h" ] || { no_lib=1; note "NOT BUILDABLE: $h is missing, and libata's matrix I/O and reordering need it"; }
done
no_cmocka=0
[ -e /usr/include/cmocka.h ] || { no_cmocka=1; note "test_gpu NOT BUILT: cmocka.h missing (libcmocka-dev)"; }

# ---------------------------------------------------------------- build
if [ "$KIND" = cuda ] && ! command -v nvcc >/dev/null; then
  note "nvcc not found (PATH, /usr/local/cuda/bin): the CUDA backend cannot be built"
fi
t0=$SECONDS
if [ $no_lib -eq 0 ] && run build 240 make "${MAKE_DEPS[@]}" -j"$JOBS" "$KIND"; then
  echo "   build: $((SECONDS - t0))s"
  built=1
else
  built=0
  note "build failed: last lines of $OUT/build.log:"
  tail -15 "$OUT/build.log" 2>/dev/null | sed 's/^/    /'
fi
BENCH=$ROOT/$BDIR/ata-bench

# matrices: ATA_MATRICES, else ../shared/matrices, else ./shared/matrices
if [ -z "${ATA_MATRICES:-}" ]; then
  for d in ../shared/matrices shared/matrices; do
    [ -d "$d/real" ] && { ATA_MATRICES=$(cd "$d" && pwd); break; }
  done
fi
export ATA_MATRICES=${ATA_MATRICES:-}
REAL=""
if [ -n "$ATA_MATRICES" ] && [ -d "$ATA_MATRICES/real" ]; then
  REAL=$(ls "$ATA_MATRICES"/real/*.mtx* 2>/dev/null | paste -sd, -)
else
  note "no real matrices (set ATA_MATRICES): real-matrix runs skipped"
fi

# ---------------------------------------------------------------- tests
if [ $built -eq 1 ] && [ $no_cmocka -eq 0 ]; then
  if [ "$KIND" = hip ]; then tmk=(make "${MAKE_DEPS[@]}" -j"$JOBS" BUILD=build-hip ATA_GPU=hip build-hip/tests/test_gpu)
  else tmk=(make "${MAKE_DEPS[@]}" -j"$JOBS" build/tests/test_gpu); fi
  if run build-tests 120 "${tmk[@]}"; then
    run test_gpu 200 "$BDIR/tests/test_gpu"
    rc=$?
    grep -E "^SKIPPED:|^\[  (PASSED|FAILED|  ERROR) |real matrices|GPU solves" "$OUT/test_gpu.log" | sed 's/^/    /'
    grep -q "^SKIPPED:" "$OUT/test_gpu.log" && note "test_gpu: $(grep -m1 '^SKIPPED:' "$OUT/test_gpu.log")"
    [ $rc -eq 0 ] || note "test_gpu FAILED (rc $rc): see $OUT/test_gpu.log"
  else
    note "test_gpu did not build: see $OUT/build-tests.log"
  fi
fi

# ---------------------------------------------------------------- benchmarks
POL=levelset,syncfree,ca,la,greedy,vendor
GEN_TRSV="lap3d:100,lap3d:100,perm=1,lap3d27:100,circuit:2000000,lap2d:2000,lap3d:200"
GEN_ILU0="lap3d:100,lap3d:100,perm=1,circuit:1000000,lap2d:1000"
csvs=()
bench() {   # bench NAME LIMIT ARGS...
  local name=$1 lim=$2; shift 2
  run "$name" "$lim" "$BENCH" "$@" --backend "$KIND" --policy "$POL" --csv "$OUT/$name.csv" --json "$OUT/$name.json"
  local rc=$?
  [ -s "$OUT/$name.csv" ] && csvs+=("$OUT/$name.csv")
  [ $rc -eq 0 ] || [ $rc -eq 124 ] || note "$name: ata-bench rc $rc (a run failed or was wrong): see $OUT/$name.log"
}
if [ $built -eq 1 ]; then
  if ! "$BENCH" --version | tee "$OUT/version.txt" | grep -qw "$KIND"; then
    note "ata-bench sees no usable $KIND device: $(cat "$OUT/version.txt")"
  else
    [ -n "$REAL" ] && bench sptrsv-real 60 sptrsv --matrix "$REAL" --reps 10
    bench sptrsv-gen 150 sptrsv --gen "$GEN_TRSV" --reps 5
    bench sptrsv-push 40 sptrsv --gen lap3d:100,circuit:2000000 --traversal push --reps 5
    [ -n "$REAL" ] && bench ilu0-real 40 ilu0 --matrix "$REAL" --reps 3
    bench ilu0-gen 100 ilu0 --gen "$GEN_ILU0" --reps 3
  fi
fi

# ---------------------------------------------------------------- summary
echo
echo "== gpu-check summary ($((SECONDS - START))s, logs in $OUT)"
head -2 "$OUT/environment.txt"
for n in "${notes[@]}"; do echo "  ! $n"; done
if [ ${#csvs[@]} -gt 0 ]; then
  # One line per (command, matrix, policy): time, speedups, correctness.
  awk -F, '
    FNR == 1 { split("", c); for (i = 1; i <= NF; i++) c[$i] = i; next }
    function v(k) { return (k in c) ? $(c[k]) : "" }
    {
      t = v("solve_ms") != "" ? v("solve_ms") : v("factor_ms")
      trav = v("traversal") == "push" ? "/push" : ""
      printf "%-7s %-20s %-9s %10s %8s %8s %9s  %s\n", v("command") trav, v("matrix"), v("policy"),
             t == "" ? "-" : sprintf("%.4f", t),
             v("speedup_levelset") == "" ? "-" : sprintf("%.2fx", v("speedup_levelset")),
             v("speedup_vendor") == "" ? "-" : sprintf("%.2fx", v("speedup_vendor")),
             v("check") == "" ? "-" : sprintf("%.1e", v("check")), v("status")
    }' "${csvs[@]}" > "$OUT/summary.txt"
  printf "%-7s %-20s %-9s %10s %8s %8s %9s  %s\n" command matrix policy "ms" "vs lvl" "vs vend" check status
  cat "$OUT/summary.txt"
else
  echo "  no benchmark results"
fi
