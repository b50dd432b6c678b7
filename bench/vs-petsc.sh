#!/usr/bin/env bash
# vs-petsc.sh - ATA's PCG against PETSc's on one matrix, in one run, with
# interleaved repetitions (issue 9's comparison):
#   (a) ATA: build/ata-bench pcg --policy P --threads T (one policy per process,
#       so its peak RSS is its own)
#   (b) PETSc, 1 rank:  CG + ILU(0)                      (build/ata-mpi-pcg --pc ilu)
#   (c) PETSc, 2 ranks: CG + block Jacobi, ILU(0) blocks (--pc bjacobi, contiguous blocks)
# All: b = 1, x0 = 0, rtol 1e-6. PETSc stops on the unpreconditioned residual
# norm by default here (-ksp_norm_type unpreconditioned), the criterion ATA
# uses (||r|| / ||b||), so both count iterations alike; --petsc-norm
# preconditioned gives PETSc's own default.
#
#   bash bench/vs-petsc.sh [SPEC] [--reps N] [--policy LIST] [--threads T]
#                          [--petsc-norm unpreconditioned|preconditioned]
#                          [--build DIR] [--csv FILE] [--petsc-thp]
#   SPEC: an ata-bench generator spec (default lap3d:100), e.g. lap3d:160.
#   make vs-petsc [VS_PETSC_ARGS="lap3d:160 --reps 5"]   (builds both programs first)
#
# PETSc's processes run with ATA_HUGEPAGES=0: they generate A with our
# library, whose big blocks (own mappings on huge pages, src/mem.h) would
# otherwise change glibc's heap for PETSc (its big blocks then mapped fresh:
# setup 0.13 against 0.05 s at lap3d:100). --petsc-thp gives PETSc huge pages
# too, through glibc's own switch (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
#
# Per configuration: iterations, setup s (ATA: analysis + factorisation as
# ata_pcg reports them; PETSc: KSPSetUp + KSPSetUpOnBlocks, slowest rank),
# solve s, setup+solve s, ms/it, and peak RSS MB (ru_maxrss; PETSc 2 ranks:
# the sum over the ranks). Medians with [min .. max] over the repetitions, and
# ATA / PETSc ratios of the medians. ATA's "wall s" is the whole ata_pcg call
# (also the copy of A, the b/x permutation and the teardown): a bound on its
# end-to-end time. The input matrix the bench generates is in every program's
# RSS (PETSc: on rank 0).
set -euo pipefail

spec=lap3d:100
reps=3
policies=levelset
threads=2
norm=unpreconditioned
build=build
csv_out=
petsc_env=(ATA_HUGEPAGES=0)
while [ $# -gt 0 ]; do
    case "$1" in --reps|--policy|--policies|--threads|--petsc-norm|--build|--csv)
        [ $# -ge 2 ] || { echo "vs-petsc.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;
    esac
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --policy|--policies) policies=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --petsc-norm) norm=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --csv) csv_out=$2; shift 2 ;;
        --petsc-thp) petsc_env+=(GLIBC_TUNABLES=glibc.malloc.hugetlb=1); shift ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "vs-petsc.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
        *) spec=$1; shift ;;
    esac
done
case "$reps" in ''|*[!0-9]*|0) echo "vs-petsc.sh: --reps $reps: expected a positive integer" >&2; exit 2 ;; esac
case "$norm" in unpreconditioned|preconditioned) ;; *) echo "vs-petsc.sh: --petsc-norm $norm: expected unpreconditioned or preconditioned" >&2; exit 2 ;; esac
bench=$build/ata-bench
mpibench=$build/ata-mpi-pcg
for p in "$bench" "$mpibench"; do
    [ -x "$p" ] || { echo "vs-petsc.sh: $p not built (make -j2 all petsc, or make vs-petsc)" >&2; exit 1; }
done
mpirun=(mpirun -n)
[ "$(id -u)" = 0 ] && mpirun=(mpirun --allow-run-as-root -n)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data.txt      # config rep its setup solve e2e ms_per_it rss wall floor
: > "$data"

# The value of column $2 of the CSV $1's first data row (fields before any
# quoted free text: ata-bench puts that last, ata-mpi-pcg quotes only the matrix).
col() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
                              NR == 2 { if (!c) exit 1; print $c; exit }' "$1"; }

run_ata() {     # policy rep
    local f=$tmp/ata.csv
    if ! "$bench" pcg --gen "$spec" --policy "$1" --threads "$threads" --quiet --csv "$f" > "$tmp/out" 2>&1; then
        echo "vs-petsc.sh: ata-bench --policy $1 failed:" >&2; cat "$tmp/out" >&2; exit 1
    fi
    local its an fa so msit rss wall fl
    its=$(col "$f" iterations); an=$(col "$f" analysis_s); fa=$(col "$f" factor_s); so=$(col "$f" solve_s)
    msit=$(col "$f" per_iter_ms); rss=$(col "$f" peak_rss_mb); wall=$(col "$f" wall_s); fl=$(col "$f" floor_ms_per_it)
    awk -v c="ata-$1" -v r="$2" -v i="$its" -v a="$an" -v f="$fa" -v s="$so" -v m="$msit" -v x="$rss" -v w="$wall" \
        -v fl="$fl" 'BEGIN { printf "%s %d %d %.6f %.6f %.6f %.6f %.3f %.6f %s\n", c, r, i, a + f, s, a + f + s, m, x, w,
                             fl == "" ? "nan" : sprintf("%.4f", fl) }' >> "$data"
}

run_petsc() {   # ranks rep
    local f=$tmp/petsc.csv pc=ilu
    [ "$1" -gt 1 ] && pc=bjacobi
    if ! env "${petsc_env[@]}" "${mpirun[@]}" "$1" "$mpibench" --gen "$spec" --solver petsc --pc $pc --partition block --quiet \
            --csv "$f" -ksp_norm_type "$norm" > "$tmp/out" 2>&1; then
        echo "vs-petsc.sh: ata-mpi-pcg -n $1 failed:" >&2; cat "$tmp/out" >&2; exit 1
    fi
    local its su so tpi rss reason
    its=$(col "$f" iterations); su=$(col "$f" setup_s); so=$(col "$f" solve_s); tpi=$(col "$f" time_per_iteration_s)
    rss=$(col "$f" rss_sum_mb); reason=$(col "$f" reason)
    case "$reason" in CONVERGED*) ;; *) echo "vs-petsc.sh: PETSc $1 rank(s): $reason" >&2; exit 1 ;; esac
    awk -v c="petsc-$1" -v r="$2" -v i="$its" -v a="$su" -v s="$so" -v m="$tpi" -v x="$rss" \
        'BEGIN { printf "%s %d %d %.6f %.6f %.6f %.6f %.3f nan nan\n", c, r, i, a, s, a + s, 1e3 * m, x }' >> "$data"
}

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
load_before=$(cat /proc/loadavg)
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
IFS=, read -r -a pols <<< "$policies"
for ((rep = 1; rep <= reps; rep++)); do
    for p in "${pols[@]}"; do
        echo "vs-petsc.sh: rep $rep/$reps: ATA $p, $threads threads" >&2
        run_ata "$p" "$rep"
    done
    echo "vs-petsc.sh: rep $rep/$reps: PETSc 1 rank" >&2
    run_petsc 1 "$rep"
    echo "vs-petsc.sh: rep $rep/$reps: PETSc 2 ranks" >&2
    run_petsc 2 "$rep"
done
load_after=$(cat /proc/loadavg)

if [ -n "$csv_out" ]; then
    { echo "config,rep,iterations,setup_s,solve_s,setup_solve_s,ms_per_it,peak_rss_mb,ata_wall_s,ata_floor_ms_per_it"; tr ' ' ',' < "$data"; } > "$csv_out"
fi

echo "ATA vs PETSc: PCG on $spec, b = 1, x0 = 0, rtol 1e-6, PETSc norm $norm; $reps interleaved repetitions"
echo "commit $commit, $start, $(uname -n), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores)"
echo "load before: $load_before"
echo "load after:  $load_after"
echo "ATA: ata-bench pcg --gen $spec --policy P --threads $threads (one policy per process); PETSc: ata-mpi-pcg --solver petsc"
echo "--partition block, 1 rank --pc ilu, 2 ranks --pc bjacobi; -ksp_norm_type $norm; env ${petsc_env[*]}. Cells: median [min .. max];"
echo "PETSc times are the slowest rank's, its RSS the sum over its ranks; ATA_wall_s: the whole ata_pcg call;"
echo "ATA_floor_ms/it: ata-bench's bandwidth floor (a model: compulsory bytes / triad at $threads threads)."
echo "Peak RSS includes the input matrix each program generates (PETSc: on rank 0, with a relabelled copy to distribute)."
awk -v threads="$threads" -v pols="$policies" '
function med(a, n,   i, j, t) {       # sorts a[1..n] in place
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    c = $1; k = ++cnt[c]
    for (q = 3; q <= 10; q++) v[c, q, k] = $q
    if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
}
END {
    split("its setup_s solve_s setup+solve_s ms/it peak_RSS_MB ATA_wall_s ATA_floor_ms/it", name, " ")
    fmt[3] = "%.0f"; fmt[4] = fmt[5] = fmt[6] = fmt[9] = "%.3f"; fmt[7] = fmt[10] = "%.2f"; fmt[8] = "%.0f"
    printf "%-19s", "config"
    for (q = 3; q <= 10; q++) printf "  %-23s", name[q - 2]
    printf "\n"
    for (ci = 1; ci <= nc; ci++) {
        c = order[ci]; n = cnt[c]
        label = c
        if (c ~ /^ata-/) label = "ATA " substr(c, 5) " " threads " thr"
        else if (c == "petsc-1") label = "PETSc 1 rank"
        else label = "PETSc " substr(c, 7) " ranks"
        printf "%-19s", label
        for (q = 3; q <= 10; q++) {
            if (v[c, q, 1] == "nan") { printf "  %-23s", "-"; continue }
            for (k = 1; k <= n; k++) a[k] = v[c, q, k] + 0
            m = med(a, n); M[c, q] = m
            cellt = sprintf(fmt[q] " [" fmt[q] " .. " fmt[q] "]", m, a[1], a[n])
            printf "  %-23s", cellt
        }
        printf "\n"
    }
    printf "\nratios of the medians (below 1: ATA smaller/faster)\n"
    printf "%-36s  %13s  %8s  %11s  %8s\n", "", "setup+solve", "ms/it", "peak RSS", "its"
    np = split(pols, P, ",")
    for (i = 1; i <= np; i++)
        for (r = 1; r <= 2; r++) {
            a_ = "ata-" P[i]; p_ = "petsc-" r
            printf "%-36s  %12.2fx  %7.2fx  %10.2fx  %7.2fx\n", "ATA " P[i] " / PETSc " r " rank" (r > 1 ? "s" : ""),
                   M[a_, 6] / M[p_, 6], M[a_, 7] / M[p_, 7], M[a_, 8] / M[p_, 8], M[a_, 3] / M[p_, 3]
        }
}' "$data"
