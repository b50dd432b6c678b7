#!/usr/bin/env bash
# gpu-check.sh - the GPU check, run on a lent GPU machine through the device
# tool with the kit carried (README, "On a lent GPU"). Builds nothing there:
# the GPU machine has nvcc but none of Debian's -dev packages, so everything
# it lacks comes in build-gpu-kit/ (make gpu-kit, on the development machine).
#
#   bench/gpu-check.sh            environment, test_gpu (ATA_GPU_TEST_REQUIRE=1),
#                                 compute-sanitizer racecheck/synccheck (then
#                                 memcheck) on a small case of each kernel
#                                 family, the benchmark: every GPU policy and
#                                 vendor (cuSPARSE), CuPy as a second anchor;
#                                 SpTS (pull, push), ILU0, PCG on lap3d:100,
#                                 lap3d:128, circuit:1000000, the real matrices;
#                                 on the generated ones also the first design
#                                 (rows NAME-first: ATA_GPU_WAIT=flag
#                                 ATA_GPU_MAP=fixed ATA_GPU_PCG=host) beside it,
#                                 and on circuits SpTS with hubs on one warp
#                                 (rows sptrsv-warphub: ATA_GPU_MAP=elastic-warp),
#                                 and SpTS with waiting warps pausing sooner
#                                 (rows sptrsv-bo-R_NS: ATA_GPU_BACKOFF=R:NS)
#   bench/gpu-check.sh --large    the same benchmark on lap3d:160, circuit:4000000
#   bench/gpu-check.sh --ncu      Nsight Compute: each policy's slowest kernel
#                                 (SpTS, lap3d:100), then ILU0's while time is left
#   bench/gpu-check.sh --rehearse here, in CI: the emulated kit, and the three
#                                 modes above run on it at tiny sizes with the
#                                 -dev packages' headers and libraries hidden
#                                 (a private mount namespace); checks the limits
#                                 of what comes back and of what travels
# Options: --kit DIR (default build-gpu-kit), --out DIR (default $OUT, the
# device tool's folder; else bench/out/gpu-check-DATE).
#
# What comes back ($OUT, at most 8 files): summary-MODE.txt (also printed
# last), results-MODE.csv (one row per result, appended the moment it exists),
# gpu-check-MODE.log (this output), environment-MODE.txt, and
# gpu-check-MODE.tar.gz (every step's log, ata-bench's CSV/JSON, ncu reports).
# Every step runs under `timeout` within the mode's budget (GPU_CHECK_BUDGET
# seconds; 450 default, 360 --large/--ncu): a step that hangs is killed, said
# so, and the next step runs; missing tools or libraries are named and the
# steps that need them skipped, never silently.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=main KIT=build-gpu-kit OUTDIR=${OUT:-}
while [ $# -gt 0 ]; do
  case $1 in
    --large) MODE=large ;;
    --ncu) MODE=ncu ;;
    --rehearse) MODE=rehearse ;;
    --kit) KIT=$2; shift ;;
    --out) OUTDIR=$2; shift ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# ====================================================================== rehearsal
# Here, not on the GPU machine: build the emulated kit, run the GPU machine's
# side of this script on it (all three modes, tiny sizes) with the -dev
# packages hidden, check what would come back.
if [ "$MODE" = rehearse ]; then
  t_start=$SECONDS
  R=$(mktemp -d /tmp/gpu-rehearse.XXXXXX)
  trap 'rm -rf "$R"' EXIT
  fail() { echo "gpu-rehearse: FAILED: $*"; exit 1; }
  echo "== gpu-rehearse: the emulated kit (make gpu-kit KIT_GPU=emu32)"
  EKIT=build-gpu-kit-emu32
  make -s -j"${GPU_REHEARSE_JOBS:-2}" gpu-kit KIT_GPU=emu32 KIT=$EKIT > "$R/kit-emu.log" 2>&1 ||
    { tail -30 "$R/kit-emu.log"; fail "make gpu-kit KIT_GPU=emu32"; }
  grep '^gpu-kit:' "$R/kit-emu.log"
  kits=("$EKIT")
  # The kit that travels: built here too where nvcc is (CI), to check it still
  # builds, finds its libraries and fits.
  if [ "${GPU_REHEARSE_CUDA_KIT:-1}" = 1 ] && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
    echo "== gpu-rehearse: the CUDA kit (make gpu-kit)"
    make -s -j"${GPU_REHEARSE_JOBS:-2}" gpu-kit > "$R/kit-cuda.log" 2>&1 ||
      { tail -30 "$R/kit-cuda.log"; fail "make gpu-kit"; }
    grep '^gpu-kit:' "$R/kit-cuda.log"
    kits+=(build-gpu-kit)
  else
    echo "gpu-rehearse: nvcc not found: the CUDA kit is not built here (only the emulated one checked)"
  fi
  tree_b=$( (git ls-files -z 2>/dev/null | xargs -0 -r stat -c %s 2>/dev/null || true) | awk '{s += $1} END {print s + 0}')
  for k in "${kits[@]}"; do
    kb=$(du -sb "$k" | cut -f1)
    [ $((kb + tree_b)) -le $((64 * 1024 * 1024)) ] || fail "$k ($kb bytes) + tree ($tree_b) > 64 MiB"
    echo "gpu-rehearse: $k: $(du -sh "$k" | cut -f1) + tracked tree $((tree_b / 1024)) KiB <= 64 MiB"
  done

  # What the GPU machine lacks, hidden: the -dev packages' headers, their
  # libraries (SuiteSparse, METIS, libarchive, cmocka, and whatever the kit
  # carries apart from base-system compression libraries that python3 and tar
  # need here and every distribution has), and the CUDA toolkit.
  hide=()
  for h in /usr/include/suitesparse /usr/include/metis.h /usr/include/archive.h /usr/include/archive_entry.h \
           /usr/include/cmocka.h /usr/include/zlib.h; do
    [ -e "$h" ] && hide+=("$(realpath "$h")")
  done
  for f in /usr/lib/x86_64-linux-gnu/lib{cholmod,rbio,suitesparseconfig,amd,camd,colamd,ccolamd,archive,metis,cmocka,GKlib}.*; do
    [ -f "$f" ] && hide+=("$(realpath "$f")")
  done
  while read -r name origin; do
    case $name in libz.so*|liblzma.so*|libzstd.so*|liblz4.so*|libbz2.so*) ;; *) hide+=("$origin") ;; esac
  done < "$EKIT/ORIGINS"
  [ -d /usr/local/cuda ] && hide+=("$(realpath /usr/local/cuda)")
  mapfile -t hide < <(printf '%s\n' "${hide[@]}" | sort -u)
  : > "$R/empty"
  {
    echo 'set -u'
    for h in "${hide[@]}"; do
      if [ -d "$h" ]; then printf 'mount -t tmpfs none %q || exit 97\n' "$h"
      else printf 'mount --bind %q %q || exit 97\n' "$R/empty" "$h"; fi
    done
    echo '[ -e /usr/include/suitesparse/cholmod.h ] && exit 98'
    echo 'echo "hidden: '"${#hide[@]}"' paths (the -dev headers, SuiteSparse/METIS/libarchive/cmocka libraries, /usr/local/cuda)"'
    echo 'export GPU_CHECK_SIZE=tiny'
    echo 'rc=0'
    for m in main large ncu; do
      flag=; [ $m = main ] || flag=--$m
      printf 'echo; echo "======== rehearsal: bench/gpu-check.sh %s (emulated kit, tiny sizes)"\n' "$flag"
      printf 'bash bench/gpu-check.sh %s --kit %q --out %q || rc=$?\n' "$flag" "$EKIT" "$R/out-$m"
    done
    echo 'exit $rc'
  } > "$R/inside.sh"
  visible=0
  if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    unshare -m --propagation private bash "$R/inside.sh"
    rc=$?
  elif [ "${GPU_REHEARSE_ALLOW_VISIBLE:-0}" = 1 ]; then
    echo "gpu-rehearse: WARNING: no private mount namespace here (needs root): the -dev packages stay VISIBLE"
    visible=1
    sed -i '/^mount /d; /suitesparse\/cholmod.h/d' "$R/inside.sh"
    bash "$R/inside.sh"
    rc=$?
  else
    fail "cannot hide the -dev packages: unshare -m needs root (GPU_REHEARSE_ALLOW_VISIBLE=1 runs without hiding)"
  fi
  [ $rc -eq 97 ] && fail "a mount in the private namespace failed"
  [ $rc -eq 98 ] && fail "the headers are still visible inside the namespace"
  [ $rc -eq 0 ] || fail "bench/gpu-check.sh failed on the emulated kit (rc $rc; output above)"

  # What would come back: <= 8 files, <= 16 MiB each, names [A-Za-z0-9._-],
  # at most two folders down; every row marked emulated; the anchors that
  # cannot run here skipped with a line saying so.
  for m in main large ncu; do
    o=$R/out-$m
    [ -d "$o" ] || fail "$m: no output folder"
    n=$(find "$o" -type f | wc -l)
    [ "$n" -le 8 ] || fail "$m: $n files in \$OUT (at most 8 come back)"
    big=$(find "$o" -type f -size +16M)
    [ -z "$big" ] || fail "$m: files over 16 MiB: $big"
    bad=$(cd "$o" && find . -mindepth 1 | sed 's|^\./||' | grep -v -E '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){0,2}$' || true)
    [ -z "$bad" ] || fail "$m: names that would not come back: $bad"
    [ -s "$o/summary-$m.txt" ] || fail "$m: no summary-$m.txt"
    [ -s "$o/gpu-check-$m.tar.gz" ] || fail "$m: no tarball"
    res=$o/results-$m.csv
    [ "$(sed -n '1p' "$res")" = "run,command,matrix,n,nnz,policy,ms,vs_levelset,vs_vendor,check,status,note" ] ||
      fail "$m: results header"
    nrows=$(($(wc -l < "$res") - 1))
    [ "$nrows" -gt 0 ] || fail "$m: no result rows"
    notemu=$(tail -n +2 "$res" | grep -vc '^emulated,' || true)
    [ "$notemu" = 0 ] || fail "$m: $notemu result rows not marked emulated"
    grep -q '^RESULTS' "$o/summary-$m.txt" || fail "$m: summary has no result table"
    notemu=$(sed -n '/^RESULTS/,$p' "$o/summary-$m.txt" | tail -n +3 | grep -vc '^emulated ' || true)
    [ "$notemu" = 0 ] || fail "$m: $notemu summary rows not marked emulated"
    # what the matrix itself may cause (missing_diag, zero_pivot, breakdown...) passes; a
    # wrong answer, a timeout or a broken run does not
    failed=$(tail -n +2 "$res" | awk -F, '$11 ~ /^(wrong_answer|timeout|backend_error|internal_error|bad_argument|out_of_memory|io_error|error|FAILED|refused)/' | head -5)
    [ -z "$failed" ] || fail "$m: rows that failed: $failed"
    echo "gpu-rehearse: $m: $n files back ($(du -sh "$o" | cut -f1)), $nrows rows, all marked emulated, none failed"
  done
  for m in main large; do
    grep -q 'CuPy anchor: skipped (emulated' "$R/out-$m/gpu-check-$m.log" || fail "$m: no line saying the CuPy anchor was skipped"
    grep -q 'vendor: emulated' "$R/out-$m/gpu-check-$m.log" || fail "$m: no line saying vendor is not cuSPARSE here"
  done
  grep -q 'test_gpu: passed' "$R/out-main/gpu-check-main.log" || fail "main: test_gpu did not pass"
  grep -q 'ncu: not run (emulated' "$R/out-ncu/gpu-check-ncu.log" || fail "ncu: no line saying ncu was not run"
  grep -q 'ncu_pick selftest: ok' "$R/out-ncu/gpu-check-ncu.log" || fail "ncu: the kernel picker's selftest did not pass"
  [ $visible = 0 ] || echo "gpu-rehearse: NOTE: run without hiding the -dev packages"
  echo "gpu-rehearse: passed in $((SECONDS - t_start)) s (kits built, three modes run on the emulated kit)"
  exit 0
fi

# ====================================================================== GPU machine side
STAMP=$(date -u +%Y%m%d-%H%M%S)
[ -n "$OUTDIR" ] || OUTDIR=bench/out/gpu-check-$STAMP
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=$(mktemp -d /tmp/gpu-check.XXXXXX)   # logs and raw files: tarred into OUTDIR at the end
mkdir -p "$WORK/raw" "$WORK/logs"
case $MODE in main) BUDGET=${GPU_CHECK_BUDGET:-450} ;; *) BUDGET=${GPU_CHECK_BUDGET:-360} ;; esac
START=$SECONDS
TINY=0; [ "${GPU_CHECK_SIZE:-}" = tiny ] && TINY=1
LOG=$OUTDIR/gpu-check-$MODE.log
RES=$OUTDIR/results-$MODE.csv
ENVF=$OUTDIR/environment-$MODE.txt
SUM=$OUTDIR/summary-$MODE.txt
exec > >(tee "$LOG") 2>&1
echo "run,command,matrix,n,nnz,policy,ms,vs_levelset,vs_vendor,check,status,note" > "$RES"

notes=()
note() { notes+=("$*"); echo "gpu-check: $*"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# step NAME SECONDS CMD...: output to WORK/logs/NAME.log, under `timeout`,
# bounded by what is left of the budget. Returns the command's status (124: timed out).
step() {
  local name=$1 want=$2; shift 2
  local rem; rem=$(left)
  if [ "$rem" -lt 10 ]; then note "$name: skipped (budget of ${BUDGET}s spent)"; return 125; fi
  [ "$want" -gt "$rem" ] && want=$rem
  local t0=$SECONDS
  timeout --signal=INT --kill-after=10 "$want" "$@" > "$WORK/logs/$name.log" 2>&1
  local rc=$?
  echo "   $name: rc $rc in $((SECONDS - t0))s (limit ${want}s)"
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then note "$name: stopped at its time limit (${want}s)"; rc=124; fi
  return $rc
}

# ---------------------------------------------------------------- the kit
if [ ! -f "$KIT/MANIFEST" ]; then
  note "no kit at $KIT (MANIFEST missing): run make gpu-kit here first and carry build-gpu-kit; nothing can run"
  KIT_OK=0
else
  KIT=$(cd "$KIT" && pwd); KIT_OK=1
fi
kv() { sed -n "s/^$1=//p" "$KIT/MANIFEST" 2>/dev/null; }
KMODE=$(kv mode)
if [ "$KMODE" = emu32 ]; then RUN=emulated; else RUN=gpu; fi
BIN=$KIT/bin
export ATA_BACKEND_PATH=$KIT/lib ATA_MATRICES=$KIT/matrices ATA_NO_GPU_WARN=1
export PATH="$PATH:/usr/local/cuda/bin"
unset ATA_GPU_TEST_SIZE ATA_GPU_TEST_ONLY ATA_GPU_EPOCH0 ATA_GPU_GROUP ATA_GPU_GRAPH
LDP=$KIT/lib

echo "== gpu-check $MODE: $(date -u +%FT%TZ), kit $KIT ($KMODE, commit $(kv commit)), out $OUTDIR, budget ${BUDGET}s"
[ $RUN = emulated ] && echo "== EMULATED: the kit holds the host SIMT emulator's module; no figure below is a GPU result"

# ---------------------------------------------------------------- environment
# find_lib SONAME: directories holding it, best first: the loader's cache,
# the CUDA toolkit, NVIDIA's pip wheels in every python3 site-packages.
find_lib() {
  local so=$1 d
  {
    ldconfig -p 2>/dev/null | awk -v n="$so" '$1 == n {print $NF}' | xargs -r -n1 dirname
    for d in ${CUDA_HOME:-} /usr/local/cuda /usr/local/cuda-*; do
      for s in lib64 lib targets/x86_64-linux/lib; do [ -e "$d/$s/$so" ] && echo "$d/$s"; done
    done
    python3 - "$so" 2>/dev/null <<'EOF'
import glob, os, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages()]
for d in dirs:
    for p in glob.glob(os.path.join(d, "nvidia", "**", sys.argv[1]), recursive=True):
        print(os.path.dirname(p))
EOF
  } | while read -r d; do realpath "$d"; done | awk '!seen[$0]++'
}
{
  echo "mode: $MODE ($RUN); kit: $(kv mode), commit $(kv commit), built $(kv built)"
  echo "kit nvcc: $(kv nvcc); code: $(kv archs)"
  if command -v nvidia-smi >/dev/null; then
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  else echo "gpu: nvidia-smi NOT FOUND"; fi
  if command -v nvcc >/dev/null; then echo "nvcc here: $(nvcc --version | sed -n 's/.*release \(.*\)/\1/p')"
  else echo "nvcc here: NOT FOUND"; fi
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version | head -1)
  echo "glibc here: $glibc; the kit needs $(kv glibc_needed)"
  need=$(kv glibc_needed); need=${need#GLIBC_}; have=${glibc##* }
  if [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
    echo "PROBLEM: glibc $have is older than the kit's binaries need ($need): they cannot run here"
  fi
  gxx=$(kv glibcxx_needed)
  if [ -n "$gxx" ]; then
    sys_stdcxx=$(ldconfig -p 2>/dev/null | awk '$1 == "libstdc++.so.6" && /x86-64/ {print $NF; exit}')
    if [ -n "$sys_stdcxx" ] && grep -q "$gxx" "$sys_stdcxx" 2>/dev/null; then
      echo "libstdc++ here ($sys_stdcxx) has $gxx"
    else
      echo "libstdc++ here (${sys_stdcxx:-none}) lacks $gxx: the kit's copy (lib/fallback) is used"
      echo "FALLBACK_STDCXX"
    fi
  fi
  sonames=$(readelf -d "$KIT/lib/libata_cuda.so" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(lib\(cusparse\|cudart\)[^]]*\)\].*/\1/p')
  # cuSPARSE 12 (CUDA 13) needs nvJitLink; a cuSPARSE from another directory may need it from there too
  case $sonames in *cusparse*) sonames="$sonames libnvJitLink.so.13" ;; esac
  [ -n "$sonames" ] || echo "GPU runtime libraries: none needed (emulated module)"
  for so in $sonames; do
    [ -e "$KIT/lib/$so" ] && { echo "$so: from the kit ($KIT/lib)"; continue; }
    dirs=$(find_lib "$so")
    if [ -n "$dirs" ]; then
      echo "$so: found in $(echo $dirs | sed 's/ /, /g'); using $(echo "$dirs" | head -1)"
      echo "LIBDIR $(echo "$dirs" | head -1)"
    elif [ $RUN = emulated ]; then echo "$so: not found (emulated module: not needed)"
    else echo "PROBLEM: $so not found (ldconfig, /usr/local/cuda*, python3 site-packages/nvidia): the CUDA module cannot load"; fi
  done
  if command -v compute-sanitizer >/dev/null; then echo "compute-sanitizer: $(compute-sanitizer --version | tail -1)"
  else echo "compute-sanitizer: not found"; fi
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  if [ -n "$NCU" ]; then echo "ncu: $NCU, $("$NCU" --version | tail -1)"; else echo "ncu: not found"; fi
  echo "python3: $(command -v python3) $(python3 --version 2>&1)"
  echo "cupy: $(timeout 60 python3 -c 'import cupy; print(cupy.__version__)' 2>&1 | tail -1)"
  echo "cpus: $(nproc), $(uname -srm)"
} > "$WORK/env.raw" 2>&1
grep -v -E '^(LIBDIR |FALLBACK_STDCXX)' "$WORK/env.raw" | tee "$ENVF"
for d in $(sed -n 's/^LIBDIR //p' "$WORK/env.raw"); do case ":$LDP:" in *":$d:"*) ;; *) LDP=$LDP:$d ;; esac; done
grep -q '^FALLBACK_STDCXX' "$WORK/env.raw" && LDP=$LDP:$KIT/lib/fallback
export LD_LIBRARY_PATH=$LDP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee -a "$ENVF"
while read -r l; do note "$l"; done < <(sed -n 's/^PROBLEM: //p' "$WORK/env.raw")
command -v nvidia-smi >/dev/null && nvidia-smi > "$WORK/logs/nvidia-smi.txt" 2>&1
cp "$KIT/MANIFEST" "$WORK/kit-MANIFEST.txt" 2>/dev/null
# Every library resolved, and the kit's own ones from the kit.
if [ $KIT_OK = 1 ]; then
  for f in "$BIN"/* "$KIT/lib/libata_cuda.so"; do
    ldd "$f" > "$WORK/logs/ldd-$(basename "$f").txt" 2>&1
    nf=$(grep 'not found' "$WORK/logs/ldd-$(basename "$f").txt" | awk '{print $1}' | tr '\n' ' ')
    [ -z "$nf" ] || note "$(basename "$f") cannot load: not found: $nf"
  done
  outside=$(cat "$WORK"/logs/ldd-*.txt | awk -v k="$KIT/lib/" '$2 == "=>" {print $1, $3}' | sort -u |
            while read -r n p; do grep -q "^$n " "$KIT/ORIGINS" && case $p in "$KIT/lib/"*) ;; *) echo "$n->$p" ;; esac; done)
  [ -z "$outside" ] && echo "kit libraries: all $(wc -l < "$KIT/ORIGINS") load from the kit" ||
    note "kit libraries loaded from outside the kit: $outside"
fi
have_tool() { command -v "$1" >/dev/null; }

# ---------------------------------------------------------------- sizes
if [ $TINY = 1 ]; then
  # the rehearsal: the emulator runs every lane on the CPU
  case $MODE in
    main) GEN="lap3d:8 lap3d:10 circuit:2000" ;;
    large) GEN="lap3d:12 circuit:4000" ;;
    ncu) GEN="lap3d:8" ;;
  esac
  REAL=$(ls -S "$ATA_MATRICES"/real/*.mtx 2>/dev/null | tail -3)
  TG_SIZE=tiny SAN_GEN="--gen lap3d:6 --gen circuit:300" SAN_PCG="--gen lap3d:5"
else
  case $MODE in
    main) GEN="lap3d:100 lap3d:128 circuit:1000000" ;;
    large) GEN="lap3d:160 circuit:4000000" ;;
    ncu) GEN="lap3d:100" ;;
  esac
  REAL=$(ls "$ATA_MATRICES"/real/*.mtx* 2>/dev/null)
  TG_SIZE="" SAN_GEN="--gen lap3d:16 --gen circuit:3000" SAN_PCG="--gen lap3d:12"
fi
POL=levelset,syncfree,ca,la,greedy,vendor
POL_ATA=levelset,syncfree,ca,la,greedy
[ -n "$REAL" ] || [ "$MODE" != main ] || note "no real matrices in $KIT/matrices/real: real-matrix runs skipped"

# ---------------------------------------------------------------- results
# to_rows NAME CSV: ata-bench's rows, in results' columns, appended now.
to_rows() {
  local name=$1 csv=$2
  [ -s "$csv" ] || return 0
  awk -F, -v run="$RUN" -v cmd="$name" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    function v(k) { return (k in c) ? $(c[k]) : "" }
    {
      t = v("solve_s") != "" ? v("solve_s") : v("factor_s")
      note = v("message")
      if (v("iterations") != "") note = v("iterations") " its, true relres " v("true_relres") (note == "" ? "" : "; " note)
      gsub(/,/, ";", note)
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", run, cmd, v("matrix"), v("n"), v("nnz"), v("policy"),
             t == "" ? "" : sprintf("%.6f", t * 1000), v("speedup_levelset"), v("speedup_vendor"),
             v("command") == "pcg" ? v("true_relres") : v("check"), v("status"), note
      # ilu0: the numeric phase alone (ata_factor_update_values) as its own row
      r = v("refactor_s")
      if (r != "" && r + 0 > 0)
        printf "%s,%s-refactor,%s,%s,%s,%s,%.6f,,,,%s,\n", run, cmd, v("matrix"), v("n"), v("nnz"), v("policy"),
               r * 1000, v("status")
    }' "$csv" >> "$RES"
}
# bench NAME LABEL LIMIT ARGS...: one ata-bench process (one matrix, every
# policy), its rows appended as soon as it ends; BENCH_ENV (assignments)
# goes into its environment.
BENCH_ENV=
bench_rows() {
  local name=$1 label=$2 lim=$3; shift 3
  local tag; tag=$(echo "$name-$label" | tr -c 'A-Za-z0-9._\n-' '_')
  local csv=$WORK/raw/$tag.csv
  step "$tag" "$lim" env $BENCH_ENV "$BIN/ata-bench" "$@" --backend cuda --csv "$csv" --json "$WORK/raw/$tag.json"
  local rc=$?
  if [ -s "$csv" ]; then to_rows "$name" "$csv"
  else
    local st="error rc $rc"; [ $rc = 124 ] && st=timeout; [ $rc = 125 ] && st=skipped
    echo "$RUN,$name,$label,,,,,,,,$st,see logs/$tag.log" >> "$RES"
  fi
  # rc 1 also when a matrix itself stops a run (missing_diag, zero_pivot...): say so only for real failures
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 125 ]; then
    local bad=""
    [ -s "$csv" ] && bad=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i; next }
        $c ~ /^(wrong_answer|timeout|backend_error|internal_error|bad_argument|out_of_memory|io_error|error)/ {print $c}' "$csv" | sort | uniq -c | tr '\n' ' ')
    if [ ! -s "$csv" ] || [ -n "$bad" ]; then note "$tag: ata-bench rc $rc${bad:+: $bad}: logs/$tag.log"
    else echo "   $tag: rc $rc from the matrices' own statuses only (see the rows)"; fi
  fi
}

run_main_bench() {   # run_main_bench: gen problems, anchors, real matrices
  local g m reps=5
  [ $TINY = 1 ] && reps=1
  [ $RUN = emulated ] && echo "vendor: emulated (ATA's serial reference stands in for cuSPARSE; not a cuSPARSE figure)"
  echo "== benchmark: $GEN; policies $POL"
  for g in $GEN; do
    local lim=90; [ "$MODE" = large ] && lim=150
    bench_rows sptrsv "$g" $lim sptrsv --gen "$g" --policy "$POL" --reps $reps
    bench_rows sptrsv-push "$g" $lim sptrsv --gen "$g" --traversal push --policy "$POL" --reps $reps
    bench_rows ilu0 "$g" $lim ilu0 --gen "$g" --policy "$POL" --reps $reps
    bench_rows pcg "$g" $lim pcg --gen "$g" --policy "$POL" --reps $(( reps > 3 ? 3 : reps ))
    bench_rows pcg-jacobi "$g" 60 pcg --gen "$g" --pc jacobi --policy levelset --reps $(( reps > 3 ? 3 : reps ))
    # The first design side by side (issue 22: a GPU run decides): the wait
    # on done flags, one group width per launch, S_min = warps, PCG driven
    # from the host; rows NAME-first. levelset is each run's ratio base.
    BENCH_ENV="ATA_GPU_WAIT=flag ATA_GPU_MAP=fixed ATA_GPU_PCG=host"
    bench_rows sptrsv-first "$g" $lim sptrsv --gen "$g" --policy levelset,syncfree,ca --reps $reps
    bench_rows ilu0-first "$g" $lim ilu0 --gen "$g" --policy levelset,syncfree,ca --reps $reps
    bench_rows pcg-first "$g" $lim pcg --gen "$g" --policy levelset,syncfree,ca --reps $(( reps > 3 ? 3 : reps ))
    # Circuits have hubs: the hubs on one warp (the elastic map before hubs
    # were split over a block) beside the default; rows sptrsv-warphub.
    if [[ $g == circuit* ]]; then
      BENCH_ENV="ATA_GPU_MAP=elastic-warp"
      bench_rows sptrsv-warphub "$g" $lim sptrsv --gen "$g" --policy levelset,syncfree,ca --reps $reps
    fi
    # How long waiting warps poll before pausing (ATA_GPU_BACKOFF=ROUNDS:NS,
    # default 32:64): the first run saw L2 busy with polls on lap3d (RESULTS,
    # GPU); main mode, the first grid and the first circuit; rows
    # sptrsv-bo-ROUNDS_NS.
    if [ "$MODE" != large ] && { [ "$g" = "${GEN%% *}" ] || [[ $g == circuit* ]]; }; then
      for bo in 0:100 4:250 8:1000; do
        BENCH_ENV="ATA_GPU_BACKOFF=$bo"
        bench_rows "sptrsv-bo-${bo/:/_}" "$g" $lim sptrsv --gen "$g" --policy levelset,syncfree,ca --reps $reps
      done
    fi
    BENCH_ENV=
  done
  cupy_anchor $GEN
  if [ "$MODE" = main ] && [ -n "$REAL" ]; then
    echo "== benchmark: $(echo "$REAL" | wc -l) real matrices"
    # One process per command for all of them (small matrices: one context,
    # one module load); PCG only where the file says symmetric (ILU0-PCG is
    # for SPD matrices).
    local all sym
    all=$(echo $REAL | tr ' ' ,)
    sym=$(for m in $REAL; do head -1 "$m" | grep -qi symmetric && echo "$m"; done | paste -sd, -)
    bench_rows sptrsv real 90 sptrsv --matrix "$all" --policy "$POL" --reps $((reps * 2))
    bench_rows ilu0 real 90 ilu0 --matrix "$all" --policy "$POL" --reps $reps
    [ -n "$sym" ] && bench_rows pcg real-symmetric 90 pcg --matrix "$sym" --policy "$POL" --shift positive-definite --reps 1
    cupy_anchor $REAL
  fi
}

# cupy_anchor SPEC|FILE...: dump each matrix as ATA builds it, then CuPy on all.
cupy_anchor() {
  local args=() s d
  [ $# -gt 0 ] || return 0
  if [ $RUN = emulated ]; then
    echo "CuPy anchor: skipped (emulated rehearsal: no GPU for CuPy here); checking the dump format only"
    step csr-dump-check 30 "$BIN/ata-csr-dump" "$1" "$WORK/check.csr" &&
      python3 bench/cupy_anchor.py --check-dump "$WORK/check.csr" | tee -a "$WORK/logs/csr-dump-check.log" ||
      note "ata-csr-dump / cupy_anchor.py disagree: logs/csr-dump-check.log"
    rm -f "$WORK/check.csr"
    return 0
  fi
  if ! timeout 60 python3 -c 'import cupy, cupyx.scipy.sparse.linalg' > "$WORK/logs/cupy-import.log" 2>&1; then
    note "CuPy anchor NOT RUN: python3 cannot import cupy ($(tail -1 "$WORK/logs/cupy-import.log"))"
    return 0
  fi
  mkdir -p /tmp/ata-csr
  for s in "$@"; do
    d=/tmp/ata-csr/$(basename "$s" | tr -c 'A-Za-z0-9._\n-' '_').csr
    [ -s "$d" ] || step "dump-$(basename "$d" .csr)" 60 "$BIN/ata-csr-dump" "$s" "$d" || { rm -f "$d"; continue; }
    args+=("$(basename "$s")=$d")
  done
  [ ${#args[@]} -gt 0 ] || { note "CuPy anchor: no matrix could be dumped"; return 0; }
  local reps=5; [ "$MODE" = large ] && reps=3
  echo "== CuPy anchor (cupyx.scipy.sparse.linalg: spsolve_triangular, cg): ${#args[@]} matrices"
  PYTHONUNBUFFERED=1 step cupy-anchor-$MODE 150 python3 bench/cupy_anchor.py --csv "$RES" --run "$RUN" --reps $reps "${args[@]}"
  local rc=$?
  [ $rc -eq 0 ] || note "CuPy anchor: rc $rc: logs/cupy-anchor-$MODE.log"
  rm -f /tmp/ata-csr/*.csr
}

# ---------------------------------------------------------------- main mode
if [ $KIT_OK = 1 ] && [ "$MODE" = main ]; then
  echo "== $("$BIN/ata-bench" --version 2>&1 | head -1)"
  echo "== test_gpu (ATA_GPU_TEST_REQUIRE=1${TG_SIZE:+, ATA_GPU_TEST_SIZE=$TG_SIZE})"
  ATA_GPU_TEST_REQUIRE=1 ATA_GPU_TEST_SIZE=$TG_SIZE step test_gpu 120 "$BIN/test_gpu"
  rc=$?
  grep -E "^SKIPPED|^FAILED|^\[  (PASSED|FAILED|  ERROR) " "$WORK/logs/test_gpu.log" | sed 's/^/    /'
  if [ $rc -eq 0 ]; then echo "test_gpu: passed"; echo "$RUN,test_gpu,-,,,,,,,,ok,$(grep -m1 'PASSED' "$WORK/logs/test_gpu.log")" >> "$RES"
  else note "test_gpu FAILED (rc $rc): logs/test_gpu.log"; echo "$RUN,test_gpu,-,,,,,,,,FAILED rc $rc,see logs/test_gpu.log" >> "$RES"; fi

  # compute-sanitizer on a small case of each kernel family (ATA's policies;
  # cuSPARSE's kernels are not ours to check).
  echo "== compute-sanitizer: racecheck, synccheck, then memcheck; SpTS pull, push, ILU0, PCG"
  san_cases=(
    "pull|sptrsv $SAN_GEN --policy $POL_ATA --reps 1"
    "push|sptrsv $SAN_GEN --traversal push --policy $POL_ATA --reps 1"
    "ilu0|ilu0 $SAN_GEN --policy $POL_ATA --reps 1"
    "pcg|pcg $SAN_PCG --policy levelset,syncfree,ca --maxit 20 --reps 1"
  )
  san_ok=1
  if [ $RUN = emulated ]; then
    echo "compute-sanitizer: not run (emulated); each case runs plain, to check its arguments"
  elif ! have_tool compute-sanitizer; then
    note "compute-sanitizer NOT FOUND (PATH, /usr/local/cuda/bin): sanitizer checks skipped"; san_ok=0
  fi
  san_deadline=$((SECONDS + (TINY == 1 ? 60 : 120)))
  for tool in racecheck synccheck memcheck; do
    [ $san_ok = 1 ] || break
    for c in "${san_cases[@]}"; do
      fam=${c%%|*}; args=${c#*|}
      if [ $SECONDS -ge $san_deadline ]; then note "sanitizer $tool $fam: skipped (sanitizer time of the budget spent)"; continue; fi
      if [ $RUN = emulated ]; then
        # shellcheck disable=SC2086
        step "san-$tool-$fam" 40 "$BIN/ata-bench" $args --backend cuda
      else
        # shellcheck disable=SC2086
        step "san-$tool-$fam" 60 compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
             "$BIN/ata-bench" $args --backend cuda
      fi
      rc=$?
      lg=$WORK/logs/san-$tool-$fam.log
      # memcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N hazards"
      errs=$(grep -m1 -E '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$lg" | sed 's/.*SUMMARY: \([0-9]*\).*/\1/')
      if grep -q -E 'Device not supported|Unable to find injection|error 999|CUDA_ERROR_NOT_SUPPORTED' "$lg"; then
        note "compute-sanitizer refuses this device ($(grep -m1 -E 'Device not supported|Unable to find|error 999|NOT_SUPPORTED' "$lg")): sanitizer checks skipped"
        echo "$RUN,sanitizer-$tool,$fam,,,,,,,,refused,logs/san-$tool-$fam.log" >> "$RES"
        san_ok=0; break
      fi
      st=ok; [ $rc -eq 0 ] || st="FAILED rc $rc"; [ $rc -eq 124 ] && st=timeout
      [ "${errs:-0}" -gt 0 ] 2>/dev/null && st="$errs errors"
      [ $RUN = emulated ] && tn="ran plain (emulated)" || tn="${errs:-?} errors"
      echo "$RUN,sanitizer-$tool,$fam,,,${POL_ATA//,/;},,,,,$st,$tn" >> "$RES"
      [ "$st" = ok ] || note "sanitizer $tool $fam: $st: logs/san-$tool-$fam.log"
    done
  done
  run_main_bench
fi

# ---------------------------------------------------------------- large mode
if [ $KIT_OK = 1 ] && [ "$MODE" = large ]; then
  run_main_bench
fi

# ---------------------------------------------------------------- ncu mode
if [ $KIT_OK = 1 ] && [ "$MODE" = ncu ]; then
  step ncu-pick-selftest 30 python3 bench/ncu_pick.py --selftest && cat "$WORK/logs/ncu-pick-selftest.log" ||
    note "ncu_pick.py selftest failed: logs/ncu-pick-selftest.log"
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  g=${GEN%% *}
  if [ $RUN = emulated ]; then
    echo "ncu: not run (emulated); the profiled commands run plain, to check their arguments"
  elif [ -z "$NCU" ]; then
    note "ncu NOT FOUND (PATH, /opt/nvidia/nsight-compute): no profiles"
  fi
  mkdir -p "$WORK/ncu"
  # Plain runs first: the times beside the profiles, and the S-auto probes
  # cached (ATA_PROBE_CACHE), so that the profiled runs build the same plans.
  bench_rows sptrsv "$g" 90 sptrsv --gen "$g" --policy "$POL" --reps 3
  bench_rows ilu0 "$g" 90 ilu0 --gen "$g" --policy "$POL" --reps 3
  # SpTS first (every policy), then ILU0 while the budget lasts. Graphs off,
  # so that each kernel is its own launch; clocks left as they are.
  for cmd in sptrsv ilu0; do
    for p in ${POL//,/ }; do
      tag=$cmd-$p
      args=("$BIN/ata-bench" "$cmd" --gen "$g" --policy "$p" --reps 1 --backend cuda)
      if [ $RUN = emulated ] || [ -z "$NCU" ]; then
        [ $RUN = emulated ] || continue
        step "ncu-$tag" 30 "${args[@]}"
        echo "$RUN,ncu-$cmd,$g,,,$p,,,,,skipped,ncu not run (emulated)" >> "$RES"
        continue
      fi
      ATA_GPU_GRAPH=0 step "ncu-list-$tag" 90 "$NCU" --clock-control none --metrics gpu__time_duration.sum \
          -o "$WORK/ncu/list-$tag" -f "${args[@]}"
      rc=$?
      if [ ! -s "$WORK/ncu/list-$tag.ncu-rep" ]; then
        note "ncu $tag: no kernel list (rc $rc): logs/ncu-list-$tag.log"
        grep -q -E 'ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize' "$WORK/logs/ncu-list-$tag.log" &&
          { note "ncu cannot read the counters here: $(grep -m1 -E 'ERR_NVGPUCTRPERM|LibraryNotLoaded|Failed to initialize' "$WORK/logs/ncu-list-$tag.log")"; break 2; }
        continue
      fi
      "$NCU" --import "$WORK/ncu/list-$tag.ncu-rep" --csv --print-units base --print-kernel-base function \
          > "$WORK/ncu/list-$tag.csv" 2> "$WORK/logs/ncu-import-$tag.log"
      pick=$(python3 bench/ncu_pick.py "$WORK/ncu/list-$tag.csv")   # NAME SKIP NS COUNT TOTAL_NS
      if [ -z "$pick" ]; then note "ncu $tag: no kernel in the list"; continue; fi
      read -r kname kskip kns kcount ktotal <<< "$pick"
      echo "   $tag: $kcount kernels, $ktotal ns in all; slowest $kname (#$kskip of its name), $kns ns"
      ATA_GPU_GRAPH=0 step "ncu-full-$tag" 120 "$NCU" --clock-control none --set full -k "regex:^${kname}\$" \
          --launch-skip "$kskip" --launch-count 1 -o "$WORK/ncu/full-$tag" -f "${args[@]}"
      det=""
      if [ -s "$WORK/ncu/full-$tag.ncu-rep" ]; then
        "$NCU" --import "$WORK/ncu/full-$tag.ncu-rep" --page details --print-units base > "$WORK/ncu/full-$tag.txt" 2>&1
        "$NCU" --import "$WORK/ncu/full-$tag.ncu-rep" --page details --csv --print-units base > "$WORK/ncu/full-$tag.csv" 2>&1
        det=$(python3 bench/ncu_pick.py --details "$WORK/ncu/full-$tag.csv")
      else
        note "ncu $tag: full profile of $kname failed: logs/ncu-full-$tag.log"
      fi
      echo "$RUN,ncu-$cmd,$g,,,$p,$(awk -v n="$kns" 'BEGIN {printf "%.6f", n / 1e6}'),,,,ok,slowest $kname of $kcount kernels ($(awk -v n="$ktotal" 'BEGIN {printf "%.3f", n / 1e6}') ms in all); $det" >> "$RES"
    done
  done
fi

# ---------------------------------------------------------------- summary, tarball, limits
{
  echo "gpu-check $MODE: $RUN, $((SECONDS - START)) s, $(date -u +%FT%TZ)"
  grep -E '^(gpu|mode|glibc here|libcusparse|cupy):' "$ENVF" 2>/dev/null
  [ $RUN = emulated ] && echo "EMULATED: every row below is the host SIMT emulator; none is a GPU result"
  for n in "${notes[@]}"; do echo "  ! $n"; done
  echo "RESULTS (ms: solve or factor time, median; vs: speedup over levelset / vendor; check: error vs the reference, PCG true relres)"
  printf "%-9s %-12s %-22s %-12s %12s %8s %8s %9s  %s\n" run command matrix policy ms "vs lvl" "vs vend" check status
  tail -n +2 "$RES" | awk -F, '{
    printf "%-9s %-12s %-22s %-12s %12s %8s %8s %9s  %s\n", $1, $2, substr($3, 1, 22), $6,
      $7 == "" ? "-" : sprintf("%.4f", $7), $8 == "" ? "-" : sprintf("%.2fx", $8),
      $9 == "" ? "-" : sprintf("%.2fx", $9), $10 == "" ? "-" : sprintf("%.1e", $10), $11 }'
} > "$SUM"
cp "$ENVF" "$WORK/" 2>/dev/null
tar -C "$WORK" -czf "$OUTDIR/gpu-check-$MODE.tar.gz" . 2>/dev/null
tb=$(stat -c %s "$OUTDIR/gpu-check-$MODE.tar.gz")
if [ "$tb" -gt $((15 * 1024 * 1024)) ]; then   # the ncu reports are the large part
  echo "gpu-check: tarball $tb bytes > 15 MiB: ncu reports (.ncu-rep) left out, their text pages kept"
  tar -C "$WORK" -czf "$OUTDIR/gpu-check-$MODE.tar.gz" --exclude='*.ncu-rep' .
fi
rm -rf "$WORK"
nfiles=$(find "$OUTDIR" -type f | wc -l)
[ "$nfiles" -le 8 ] || echo "gpu-check: WARNING: $nfiles files in $OUTDIR; only 8 come back"
echo
echo "== summary ($OUTDIR: $(cd "$OUTDIR" && ls | tr '\n' ' '))"
cat "$SUM"
