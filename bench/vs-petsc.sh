#!/usr/bin/env bash
# vs-petsc.sh - ATA's Krylov solver against PETSc's on one matrix, in one
# run, with interleaved repetitions (issue 9's comparison; issue 23's methods):
#   (a) ATA: build/ata-bench pcg --ksp K --policy P --threads T (one policy per
#       process, so its peak RSS is its own)
#   (b) PETSc, 1 rank:  K + ILU(0)                      (build/ata-mpi-pcg --pc ilu)
#   (c) PETSc, 2 ranks: K + block Jacobi, ILU(0) blocks (--pc bjacobi, contiguous blocks)
# K: --ksp cg (default; KSPCG), bicgstab (KSPBCGS; bcgs accepted) or gmres
# (KSPGMRES, restart --restart M, default 30, classical Gram-Schmidt: PETSc's
# defaults). All: b = 1, x0 = 0, rtol 1e-6. PETSc stops on the
# unpreconditioned residual norm (-ksp_norm_type unpreconditioned), the
# criterion ATA uses (||r|| / ||b||), so both count iterations alike; for cg,
# --petsc-norm preconditioned gives PETSc's own default. BiCGStab and GMRES
# are right-preconditioned on both sides (PETSc: KSPSetPCSide PC_RIGHT), where
# the unpreconditioned norm is the only one.
#
#   bash bench/vs-petsc.sh [SPEC | --matrix FILE]... [--ksp cg|bicgstab|gmres]
#                          [--restart M] [--reps N] [--policy LIST] [--threads T]
#                          [--precision double|mixed]
#                          [--petsc-norm unpreconditioned|preconditioned]
#                          [--build DIR] [--csv FILE] [--petsc-thp]
#   SPEC: an ata-bench generator spec (default lap3d:100), e.g. lap3d:160;
#   --matrix FILE: a matrix file instead (.mtx, .mtx.gz, .rb, .tar.gz), e.g.
#   ../shared/matrices/real/olm1000.mtx (nonsymmetric: use bicgstab or gmres).
#   Several SPECs and --matrix FILEs: one comparison after the other, in the
#   order given, each with its own report (--csv: one file, every row with its
#   matrix); the exit status is the worst of theirs. E.g. the deep DAGs:
#   bash bench/vs-petsc.sh circuit:1000000 circuit:2000000 --policy levelset,ca
#   make vs-petsc [VS_PETSC_ARGS="lap3d:160 --reps 5"]   (builds both programs first)
#   make vs-petsc-deep [VS_PETSC_ARGS="--reps 5"]   (circuit:1000000 and circuit:2000000)
#   --precision mixed: ATA's ILU0 factors stored as float (ata-bench pcg
#   --precision mixed); PETSc's stay double. One precision per run (compare
#   both precisions with ata-bench pcg --precision both).
#
# A run that fails or does not converge is reported, not fatal: each
# configuration's status column gives ATA's status (ok, not_converged,
# breakdown, unsupported, ...) or PETSc's converged reason per repetition
# (one word when every repetition agrees; ERROR_MISSING_DIAGONAL where
# PETSc's ILU(0) stops the program on a missing diagonal entry, as on
# west0479 or bayer10); the ratios need every repetition
# of both sides converged ('-' otherwise), and the times of a run that did
# not iterate (iterations included) are '-'. Exit status: 0 every run converged, 1 one did not (the
# report is printed first), 2 usage error; a program that cannot run at all
# (no CSV row) stops the script with its output.
#
# PETSc's processes run with ATA_HUGEPAGES=0: they generate A with our
# library, whose big blocks on huge pages (own mappings, src/mem.h; from 32
# MiB by default, from 2 MiB with ATA_HUGEPAGES=1) would change glibc's heap
# for PETSc (with every block from 2 MiB, its big blocks were then mapped
# fresh: setup 0.13 against 0.05 s at lap3d:100).
# --petsc-thp gives PETSc huge pages through glibc's own switch
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
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
matrix=
ksp=cg
restart=
precision=double
reps=3
policies=levelset
threads=2
norm=unpreconditioned
build=build
csv_out=
petsc_env=(ATA_HUGEPAGES=0)
in_kind=(); in_val=()   # the inputs in order: gen SPEC or matrix FILE
opts=()                 # every other flag, for one run per input (--csv aside)
while [ $# -gt 0 ]; do
    case "$1" in --reps|--policy|--policies|--threads|--petsc-norm|--build|--csv|--matrix|--ksp|--restart|--precision)
        [ $# -ge 2 ] || { echo "vs-petsc.sh: $1 needs a value (see --help)" >&2; exit 2; } ;;
    esac
    case "$1" in
        --reps|--ksp|--restart|--policy|--policies|--threads|--petsc-norm|--build|--precision) opts+=("$1" "$2") ;;
        --petsc-thp) opts+=("$1") ;;
    esac
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --matrix) matrix=$2; in_kind+=(matrix); in_val+=("$2"); shift 2 ;;
        --ksp) ksp=$2; shift 2 ;;
        --restart) restart=$2; shift 2 ;;
        --precision) precision=$2; shift 2 ;;
        --policy|--policies) policies=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --petsc-norm) norm=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --csv) csv_out=$2; shift 2 ;;
        --petsc-thp) petsc_env+=(GLIBC_TUNABLES=glibc.malloc.hugetlb=1); shift ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "vs-petsc.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
        *) spec=$1; in_kind+=(gen); in_val+=("$1"); shift ;;
    esac
done
case "$reps" in ''|*[!0-9]*|0) echo "vs-petsc.sh: --reps $reps: expected a positive integer" >&2; exit 2 ;; esac
case "$norm" in unpreconditioned|preconditioned) ;; *) echo "vs-petsc.sh: --petsc-norm $norm: expected unpreconditioned or preconditioned" >&2; exit 2 ;; esac
case "$precision" in double|mixed) ;; *) echo "vs-petsc.sh: --precision $precision: expected double or mixed (ATA's factors; PETSc's are double)" >&2; exit 2 ;; esac
# The method under ATA's name (ata-bench --ksp) and PETSc's (ata-mpi-pcg --ksp, KSPType).
case "$ksp" in
    cg|CG) ksp=cg; petsc_ksp=cg; method=CG ;;
    bicgstab|bcgs|BiCGStab) ksp=bicgstab; petsc_ksp=bcgs; method=BiCGStab ;;
    gmres|GMRES) ksp=gmres; petsc_ksp=gmres; method="GMRES(${restart:-30})" ;;
    *) echo "vs-petsc.sh: --ksp $ksp: expected cg, bicgstab (or bcgs) or gmres" >&2; exit 2 ;;
esac
if [ -n "$restart" ]; then
    case "$restart" in *[!0-9]*|0) echo "vs-petsc.sh: --restart $restart: expected a positive integer" >&2; exit 2 ;; esac
    [ "$ksp" = gmres ] || { echo "vs-petsc.sh: --restart applies to --ksp gmres only" >&2; exit 2; }
fi
if [ "$ksp" != cg ] && [ "$norm" != unpreconditioned ]; then
    echo "vs-petsc.sh: --petsc-norm $norm: $ksp is right-preconditioned, its norm is the unpreconditioned one (cg only)" >&2; exit 2
fi
ksp_args=(--ksp "$ksp")
[ "$precision" = double ] || ksp_args+=(--precision "$precision")     # ATA's side only
petsc_ksp_args=(--ksp "$petsc_ksp")
if [ -n "$restart" ]; then ksp_args+=(--restart "$restart"); petsc_ksp_args+=(--restart "$restart"); fi
petsc_norm_args=()
[ "$ksp" = cg ] && petsc_norm_args=(-ksp_norm_type "$norm")   # bicgstab/gmres: ata-mpi-pcg sets it
for ((k = 0; k < ${#in_kind[@]}; k++)); do
    if [ "${in_kind[k]}" = matrix ] && [ ! -r "${in_val[k]}" ]; then
        echo "vs-petsc.sh: --matrix ${in_val[k]}: cannot read the file" >&2; exit 2
    fi
done
if [ ${#in_kind[@]} -gt 1 ]; then
    # Several inputs: this script once per input, in the order given.
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    worst=0
    for ((k = 0; k < ${#in_kind[@]}; k++)); do
        one=("${in_val[k]}")
        [ "${in_kind[k]}" = matrix ] && one=(--matrix "${in_val[k]}")
        [ "$k" -gt 0 ] && echo
        echo "vs-petsc.sh: input $((k + 1))/${#in_kind[@]}: ${in_val[k]}" >&2
        rc=0
        bash "$0" "${one[@]}" ${opts[@]+"${opts[@]}"} ${csv_out:+--csv "$tmp/$k.csv"} || rc=$?
        [ "$rc" -gt "$worst" ] && worst=$rc
    done
    if [ -n "$csv_out" ]; then
        first=1
        for ((k = 0; k < ${#in_kind[@]}; k++)); do
            [ -s "$tmp/$k.csv" ] || continue
            if [ "$first" = 1 ]; then cat "$tmp/$k.csv"; first=0; else tail -n +2 "$tmp/$k.csv"; fi
        done > "$csv_out"
    fi
    exit "$worst"
fi
if [ -n "$matrix" ]; then
    input=(--matrix "$matrix")
    label=$(basename "$matrix")
else
    input=(--gen "$spec")
    label=$spec
fi
bench=$build/ata-bench
mpibench=$build/ata-mpi-pcg
for p in "$bench" "$mpibench"; do
    [ -x "$p" ] || { echo "vs-petsc.sh: $p not built (make -j2 all petsc, or make vs-petsc)" >&2; exit 1; }
done
mpirun=(mpirun -n)
[ "$(id -u)" = 0 ] && mpirun=(mpirun --allow-run-as-root -n)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data.txt      # config rep its setup solve e2e ms_per_it rss wall floor status
: > "$data"

# The value of column $2 of the CSV $1's first data row (fields before any
# quoted free text: ata-bench puts that last, ata-mpi-pcg quotes only the matrix).
col() { awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
                              NR == 2 { if (!c) exit 1; print $c; exit }' "$1"; }
# 0 when the CSV $1 has a data row.
has_row() { [ -s "$1" ] && [ "$(wc -l < "$1")" -ge 2 ]; }
any_failed=0

run_ata() {     # policy rep
    local f=$tmp/ata.csv rc=0
    rm -f "$f"
    # --maxit: ata-mpi-pcg's limit (5000), so a run that does not converge stops where PETSc's does
    "$bench" pcg "${input[@]}" "${ksp_args[@]}" --maxit 5000 --policy "$1" --threads "$threads" --quiet --csv "$f" \
        > "$tmp/out" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] && { [ "$rc" -ne 1 ] || ! has_row "$f"; }; then
        echo "vs-petsc.sh: ata-bench --policy $1 failed (exit $rc):" >&2; cat "$tmp/out" >&2; exit 1
    fi
    local its an fa so msit rss wall fl st
    its=$(col "$f" iterations); an=$(col "$f" analysis_s); fa=$(col "$f" factor_s); so=$(col "$f" solve_s)
    msit=$(col "$f" per_iter_ms); rss=$(col "$f" peak_rss_mb); wall=$(col "$f" wall_s); fl=$(col "$f" floor_ms_per_it)
    st=$(col "$f" status)
    if [ "$st" != ok ]; then
        any_failed=1
        echo "vs-petsc.sh: ATA $1: $st (ata-bench: $(grep -m1 . "$tmp/out" || true))" >&2
    fi
    awk -v c="ata-$1" -v r="$2" -v i="$its" -v a="$an" -v f="$fa" -v s="$so" -v m="$msit" -v x="$rss" -v w="$wall" \
        -v fl="$fl" -v st="$st" 'function num(v, fmt) { return v == "" || v ~ /nan/ ? "nan" : sprintf(fmt, v) }
        BEGIN { ran = i + 0 > 0 || st == "ok"      # a run that did not iterate has no times
                printf "%s %d %s %s %s %s %s %s %s %s %s\n", c, r, ran ? i + 0 : "nan", ran ? num(a + f, "%.6f") : "nan",
                       ran ? num(s, "%.6f") : "nan", ran ? num(a + f + s, "%.6f") : "nan", ran ? num(m, "%.6f") : "nan",
                       num(x, "%.3f"), ran ? num(w, "%.6f") : "nan", ran ? num(fl, "%.4f") : "nan", st }' >> "$data"
}

run_petsc() {   # ranks rep
    local f=$tmp/petsc.csv pc=ilu rc=0
    [ "$1" -gt 1 ] && pc=bjacobi
    rm -f "$f"
    env "${petsc_env[@]}" "${mpirun[@]}" "$1" "$mpibench" "${input[@]}" "${petsc_ksp_args[@]}" --solver petsc --pc $pc \
        --partition block --quiet --csv "$f" "${petsc_norm_args[@]}" > "$tmp/out" 2>&1 || rc=$?
    if ! has_row "$f" && grep -q "no diagonal entry" "$tmp/out"; then
        # PETSc's ILU(0) stops the program on a missing diagonal (an error, not
        # a converged reason): ata-mpi-pcg skips its rows and says so
        any_failed=1
        echo "vs-petsc.sh: PETSc $1 rank(s): $(grep -m1 "no diagonal entry" "$tmp/out")" >&2
        echo "petsc-$1 $2 nan nan nan nan nan nan nan nan ERROR_MISSING_DIAGONAL" >> "$data"
        return
    fi
    if ! has_row "$f"; then
        echo "vs-petsc.sh: ata-mpi-pcg -n $1 gave no result (exit $rc):" >&2; cat "$tmp/out" >&2; exit 1
    fi
    local its su so tpi rss reason
    its=$(col "$f" iterations); su=$(col "$f" setup_s); so=$(col "$f" solve_s); tpi=$(col "$f" time_per_iteration_s)
    rss=$(col "$f" rss_sum_mb); reason=$(col "$f" reason)
    case "$reason" in CONVERGED*) ;; *) any_failed=1; echo "vs-petsc.sh: PETSc $1 rank(s): $reason" >&2 ;; esac
    awk -v c="petsc-$1" -v r="$2" -v i="$its" -v a="$su" -v s="$so" -v m="$tpi" -v x="$rss" -v st="$reason" \
        'BEGIN { ran = i + 0 > 0
                 if (ran) printf "%s %d %d %.6f %.6f %.6f %.6f %.3f nan nan %s\n", c, r, i, a, s, a + s, 1e3 * m, x, st
                 else printf "%s %d nan nan nan nan nan %.3f nan nan %s\n", c, r, x, st }' >> "$data"
}

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
load_before=$(cat /proc/loadavg)
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
IFS=, read -r -a pols <<< "$policies"
for ((rep = 1; rep <= reps; rep++)); do
    for p in "${pols[@]}"; do
        echo "vs-petsc.sh: rep $rep/$reps: ATA $method $p, $threads threads" >&2
        run_ata "$p" "$rep"
    done
    echo "vs-petsc.sh: rep $rep/$reps: PETSc $method 1 rank" >&2
    run_petsc 1 "$rep"
    echo "vs-petsc.sh: rep $rep/$reps: PETSc $method 2 ranks" >&2
    run_petsc 2 "$rep"
done
load_after=$(cat /proc/loadavg)

if [ -n "$csv_out" ]; then
    { echo "config,rep,iterations,setup_s,solve_s,setup_solve_s,ms_per_it,peak_rss_mb,ata_wall_s,ata_floor_ms_per_it,status,ksp,matrix"
      awk -v k="$ksp" -v m="$label" '{ $0 = $0 " " k; gsub(/ /, ","); print $0 ",\"" m "\"" }' "$data"; } > "$csv_out"
fi

if [ "$ksp" = cg ]; then sides="PETSc norm $norm"; else sides="right preconditioning, unpreconditioned norm (both)"; fi
echo "ATA vs PETSc: $method + ILU(0) on $label, b = 1, x0 = 0, rtol 1e-6, $sides; $reps interleaved repetitions"
echo "commit $commit, $start, $(uname -n), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores)"
echo "load before: $load_before"
echo "load after:  $load_after"
echo "ATA: ata-bench pcg ${input[*]} ${ksp_args[*]} --policy P --threads $threads (one policy per process); PETSc: ata-mpi-pcg"
echo "${input[*]} ${petsc_ksp_args[*]} --solver petsc --partition block, 1 rank --pc ilu, 2 ranks --pc bjacobi${petsc_norm_args[*]:+; ${petsc_norm_args[*]}};"
echo "env ${petsc_env[*]}. Cells: median [min .. max] over the repetitions that have the number ('-': none);"
echo "PETSc times are the slowest rank's, its RSS the sum over its ranks; ATA_wall_s: the whole ata_pcg call;"
echo "ATA_floor_ms/it: ata-bench's bandwidth floor (a model: compulsory bytes / triad at $threads threads; CG only)."
echo "status: ATA's (ok, not_converged, unsupported, ...) or PETSc's converged reason; a/b when the repetitions differ."
echo "Peak RSS includes the input matrix each program generates or reads (PETSc: on rank 0, with a relabelled copy to distribute)."
awk -v threads="$threads" -v pols="$policies" '
function med(a, n,   i, j, t) {       # sorts a[1..n] in place
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(c1, c2, q) {     # "-" unless both converged in every repetition and both have the number
    if (!good[c1] || !good[c2] || !((c1, q) in M) || !((c2, q) in M) || !(M[c2, q] > 0)) return "-"
    return sprintf("%.2fx", M[c1, q] / M[c2, q])
}
{
    c = $1; k = ++cnt[c]
    for (q = 3; q <= 10; q++) v[c, q, k] = $q
    if (!(c in seen)) { seen[c] = 1; order[++nc] = c; good[c] = 1 }
    if ($11 != "ok" && $11 !~ /^CONVERGED/) good[c] = 0
    if (index("/" st[c] "/", "/" $11 "/") == 0) st[c] = st[c] (st[c] == "" ? "" : "/") $11
}
END {
    split("its setup_s solve_s setup+solve_s ms/it peak_RSS_MB ATA_wall_s ATA_floor_ms/it", name, " ")
    fmt[3] = "%.0f"; fmt[4] = fmt[5] = fmt[6] = fmt[9] = "%.3f"; fmt[7] = fmt[10] = "%.2f"; fmt[8] = "%.0f"
    printf "%-19s", "config"
    for (q = 3; q <= 10; q++) printf "  %-23s", name[q - 2]
    printf "  status\n"
    for (ci = 1; ci <= nc; ci++) {
        c = order[ci]; n = cnt[c]
        label = c
        if (c ~ /^ata-/) label = "ATA " substr(c, 5) " " threads " thr"
        else if (c == "petsc-1") label = "PETSc 1 rank"
        else label = "PETSc " substr(c, 7) " ranks"
        printf "%-19s", label
        for (q = 3; q <= 10; q++) {
            m = 0
            for (k = 1; k <= n; k++) if (v[c, q, k] != "nan") a[++m] = v[c, q, k] + 0
            if (!m) { printf "  %-23s", "-"; continue }
            M[c, q] = med(a, m)
            cellt = sprintf(fmt[q] " [" fmt[q] " .. " fmt[q] "]", M[c, q], a[1], a[m])
            printf "  %-23s", cellt
        }
        printf "  %s\n", st[c]
    }
    printf "\nratios of the medians (below 1: ATA smaller/faster; - unless both converged every time)\n"
    printf "%-36s  %13s  %8s  %11s  %8s\n", "", "setup+solve", "ms/it", "peak RSS", "its"
    np = split(pols, P, ",")
    for (i = 1; i <= np; i++)
        for (r = 1; r <= 2; r++) {
            a_ = "ata-" P[i]; p_ = "petsc-" r
            printf "%-36s  %13s  %8s  %11s  %8s\n", "ATA " P[i] " / PETSc " r " rank" (r > 1 ? "s" : ""),
                   ratio(a_, p_, 6), ratio(a_, p_, 7), ratio(a_, p_, 8), ratio(a_, p_, 3)
        }
}' "$data"
exit "$any_failed"
