#!/usr/bin/env bash
# suite.sh - the benchmark suite behind `make bench`.
#
#   bash bench/suite.sh [ATA_BENCH] [OUT]     (defaults: build/ata-bench, bench/out)
#
# Runs ata-bench over the real matrices in $ATA_MATRICES/real (default
# ../shared/matrices/real; skipped with a note when absent) and generated
# 2D/3D Laplacians up to 10^6 unknowns and circuit-like matrices, every
# policy plus the serial reference, and writes for every step
# OUT/STEP.txt (the table), .csv, .json, .svg and .log (stderr), then
# OUT/summary.txt. Sized to finish in about 10 minutes on 2 cores.
#
# Known failures are expected and reported, not fatal: PCG breaks down on
# bcsstk13 and LFAT5 (ILU0 is indefinite there), hangGlider_2 and several
# unsymmetric matrices miss diagonal entries, and any failure that the
# serial reference shares on the same matrix is the matrix's. Any other
# failure (or a wrong answer) makes the suite exit 1.
#
# Environment: ATA_BENCH_BACKEND (auto), ATA_BENCH_THREADS (core count),
# ATA_BENCH_SIZE=small (quick run on smaller generated problems) or large
# (adds PCG on the 10^6-unknown 2D Laplacian; over the 10-minute budget
# on a loaded machine),
# ATA_MATRICES (folder holding real/).
set -u
BENCH=${1:-build/ata-bench}
OUT=${2:-bench/out}
BACKEND=${ATA_BENCH_BACKEND:-auto}
THREADS=${ATA_BENCH_THREADS:-$(nproc 2>/dev/null || echo 2)}
REAL=${ATA_MATRICES:-../shared/matrices}/real

if [ ! -x "$BENCH" ]; then
  echo "suite.sh: $BENCH not found or not executable (run make first)" >&2
  exit 2
fi
mkdir -p "$OUT" || exit 1
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

if [ "${ATA_BENCH_SIZE:-}" = small ]; then
  LAP2D=lap2d:200; LAP3D=lap3d:40; LAP3D27=lap3d27:20; CIRC=circuit:100000; CIRC_SMALL=circuit:20000
  PCG_2D=lap2d:100; PCG_27=lap3d27:15; PCG_PERM=lap3d:20,perm=1
else
  LAP2D=lap2d:1000; LAP3D=lap3d:100; LAP3D27=lap3d27:50; CIRC=circuit:1000000; CIRC_SMALL=circuit:100000
  # PCG iterates: the 10^6 2D Laplacian needs ~540 iterations per policy,
  # too long for the budget, so PCG takes smaller companions of the 3D one.
  PCG_2D=lap2d:500; PCG_27=lap3d27:40; PCG_PERM=lap3d:60,perm=1
  # ATA_BENCH_SIZE=large: PCG on the 10^6 2D Laplacian too (~2-4 min more).
  [ "${ATA_BENCH_SIZE:-}" = large ] && PCG_2D=lap2d:1000
fi

# Real matrices, when present.
SPD=(); UNSYM=()
if [ -d "$REAL" ]; then
  for m in 494_bus 1138_bus bcsstk13 LFAT5 hangGlider_2; do
    [ -r "$REAL/$m.mtx" ] && SPD+=("$REAL/$m.mtx")
  done
  for f in "$REAL"/*.mtx; do
    b=$(basename "$f" .mtx)
    case " 494_bus 1138_bus bcsstk13 LFAT5 hangGlider_2 " in *" $b "*) continue ;; esac
    UNSYM+=("$f")
  done
else
  say "note: $REAL not found: real matrices skipped (set ATA_MATRICES)"
fi
join() { local IFS=,; echo "$*"; }

# Failures that are the matrices' doing, not the library's: "matrix status".
# Missing diagonals are taken from the info step (diagonal column).
EXPECTED="bcsstk13 indefinite_pc
bcsstk13 breakdown
LFAT5 indefinite_pc
LFAT5 breakdown
hangGlider_2 missing_diag"

unexpected=0
start_all=$(date +%s.%N)

# step NAME ARGS... : one ata-bench run, its files, and the check of its
# failures against the expected list.
step() {
  local name=$1; shift
  local t0 t1 rc
  say ""
  say "== $name: ata-bench $*"
  t0=$(date +%s.%N)
  "$BENCH" "$@" --csv "$OUT/$name.csv" --json "$OUT/$name.json" --plot "$OUT/$name.svg" \
      >"$OUT/$name.txt" 2> >(tee "$OUT/$name.log" >&2)
  rc=$?
  t1=$(date +%s.%N)
  wait  # for tee
  cat "$OUT/$name.txt"
  local secs
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" -eq 2 ] || [ ! -s "$OUT/$name.csv" ]; then
    say "$name: ata-bench failed to run (exit $rc, see $OUT/$name.log)"
    unexpected=$((unexpected + 1))
    return
  fi
  # Columns by name, so the CSV's order may change without breaking this.
  local bad
  # Two passes: the first notes how the serial reference fared on every
  # matrix; a policy failing exactly as the reference does is the matrix's
  # doing (e.g. olm1000's lower triangle overflows to Inf), not the runtime's.
  bad=$(awk -F, -v expected="$EXPECTED" -v nodiag="$NODIAG" '
    BEGIN { n = split(expected, e, "\n"); for (i = 1; i <= n; i++) ok[e[i]] = 1
            m = split(nodiag, d, " "); for (i = 1; i <= m; i++) if (d[i] != "") nd[d[i]] = 1 }
    FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; if (!("status" in col)) exit; next }
    NR == FNR { if ($col["policy"] == "serial") ref[$col["matrix"]] = $col["status"]; next }
    {
      mat = $col["matrix"]; st = $col["status"]; pol = $col["policy"]
      if (st == "ok") next
      if (ok[mat " " st]) next
      if ((mat in ref) && ref[mat] == st && st != "wrong_answer") next
      if ((st == "missing_diag" || st == "zero_pivot") && nd[mat]) next
      if (st == "zero_pivot" && $col["command"] == "ilu0" && mat !~ /^(lap|circuit)/) next
      print mat " " pol " " st
    }' "$OUT/$name.csv" "$OUT/$name.csv")
  local nexp
  nexp=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } ("status" in col) && $col["status"] != "ok" { n++ } END { print n + 0 }' "$OUT/$name.csv")
  if [ -n "$bad" ]; then
    say "$name: ${secs} s, UNEXPECTED failures:"
    say "$bad"
    unexpected=$((unexpected + $(echo "$bad" | wc -l)))
  else
    say "$name: ${secs} s, exit $rc, $nexp expected failure(s) reported"
  fi
}

say "ATA benchmark suite: $("$BENCH" --version), backend $BACKEND, $THREADS threads, $(date -u '+%Y-%m-%d %H:%M UTC')"
say "machine: $(nproc 2>/dev/null) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"

# DAG shapes first: the info step also tells which real matrices lack a
# stored diagonal (their triangular solves and ILU0 are expected to fail).
NODIAG=""
INFO_INPUTS=(--gen "$LAP2D,$LAP3D,$LAP3D27,$LAP3D,perm=1,$CIRC_SMALL")
[ ${#SPD[@]} -gt 0 ] && INFO_INPUTS+=(--matrix "$(join "${SPD[@]}")")
[ ${#UNSYM[@]} -gt 0 ] && INFO_INPUTS+=(--matrix "$(join "${UNSYM[@]}")")
step info info "${INFO_INPUTS[@]}"
NODIAG=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                  $col["diagonal"] != "ok" { print $col["matrix"] }' "$OUT/info.csv" 2>/dev/null | sort -u | tr '\n' ' ')
[ -n "$NODIAG" ] && say "matrices without a full stored diagonal: $NODIAG"

COMMON=(--policy all,serial --backend "$BACKEND" --threads "$THREADS")

# PCG on the SPD real matrices (the paper's Figure 5.11 set at this scale).
[ ${#SPD[@]} -gt 0 ] && step pcg-real pcg --matrix "$(join "${SPD[@]}")" "${COMMON[@]}"

# PCG on generated problems up to 10^6 unknowns (3D 7-point, the issue's
# reference problem: PETSc needs 79 iterations at ~27 ms each on one core).
step pcg-gen pcg --gen "$LAP3D,$PCG_2D,$PCG_27,$PCG_PERM" "${COMMON[@]}"

# Triangular solves: wide (Laplacians), L-shaped (circuit-like), parallel
# (permuted), and the real matrices; lower/pull, then upper/push.
SPTRSV_INPUTS=(--gen "$LAP3D,$LAP2D,$LAP3D27,$LAP3D,perm=1,$CIRC,$CIRC_SMALL")
[ ${#UNSYM[@]} -gt 0 ] && SPTRSV_INPUTS+=(--matrix "$(join "${UNSYM[@]}")")
[ ${#SPD[@]} -gt 0 ] && SPTRSV_INPUTS+=(--matrix "$(join "${SPD[@]}")")
step sptrsv-lower sptrsv "${SPTRSV_INPUTS[@]}" "${COMMON[@]}" --reps 10
step sptrsv-upper-push sptrsv --gen "$LAP3D,$CIRC_SMALL" "${COMMON[@]}" --uplo upper --traversal push --reps 10

# ILU0 through the runtime.
ILU_INPUTS=(--gen "$LAP3D,$LAP2D,$CIRC")
[ ${#UNSYM[@]} -gt 0 ] && ILU_INPUTS+=(--matrix "$(join "${UNSYM[@]}")")
step ilu0 ilu0 "${ILU_INPUTS[@]}" "${COMMON[@]}" --reps 3

end_all=$(date +%s.%N)
total=$(awk -v a="$start_all" -v b="$end_all" 'BEGIN { printf "%.0f", b - a }')
say ""
say "suite: ${total} s in all; outputs in $OUT/ (STEP.txt tables, .csv, .json, .svg plots, .log)"
[ "$total" -gt 600 ] && say "note: the suite took longer than its 10-minute budget"
if [ "$unexpected" -gt 0 ]; then
  say "suite: $unexpected unexpected failure(s)"
  exit 1
fi
say "suite: every failure was an expected one"
exit 0
