#!/usr/bin/env bash
# The PETSc plugin and the MPI benchmark under mpirun (P = 1, 2, 4), run by
# `make test` once `make petsc` has built them. Each check compares ATA's
# sub-ILU(0) with PETSc's own in one run: same iterations, same converged
# reason, solutions within 1e-10 (xdiff, relative to the largest entry).
set -u
build=${ATA_BUILD:-build}
mats=${ATA_MATRICES:-../shared/matrices}/real
plugin=$(cd "$build" && pwd)/libata_petsc.so
bench=$build/ata-mpi-pcg
ex2=$build/tests/petsc/ksp_ex2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp=$(mktemp -d /tmp/ata-petsc-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; skip=0

mpi() { local p=$1; shift; timeout 120 mpirun --allow-run-as-root --oversubscribe -n "$p" "$@"; }
ok() { echo "[       OK ] $1"; pass=$((pass+1)); }
bad() { echo "[  FAILED  ] $1"; [ -n "${2:-}" ] && echo "$2"; fail=$((fail+1)); }

# The CSV of one benchmark run: within every matrix x partition, all rows
# have the first row's iterations and reason; xdiff <= tol; with `converged`
# every reason is CONVERGED_*.
csv_agree() { # file tol [converged]
  awk -F, -v tol="$2" -v conv="${3:-}" 'NR > 1 {
      key = $1 "/" $5 "/" $6
      if (!(key in its)) { its[key] = $10; why[key] = $11 }
      else if ($10 != its[key] || $11 != why[key]) { print "  " key ": " $9 " " $10 " " $11 " vs " its[key] " " why[key]; bad = 1 }
      if ($16 == "nan" || $16 == "-nan" || $16 + 0 > tol) { print "  " key ": " $9 " xdiff " $16 " > " tol; bad = 1 }
      if (conv != "" && $11 !~ /^CONVERGED/) { print "  " key ": " $9 " " $11; bad = 1 }
      rows++
    } END { if (!rows) { print "  no rows"; bad = 1 } exit bad }' "$1"
}

# 1. The plugin loaded into a plain PETSc program by -dll_append (P = 1, 2).
run_ex2() { # name P expected-reason options...
  local name=$1 p=$2 want=$3; shift 3
  local a b base=() x
  for x in "$@"; do [ "$x" = ata ] && base+=(petsc) || base+=("$x"); done # the baseline: PETSc's own
  a=$(mpi "$p" "$ex2" "$@" -dll_append "$plugin" -mat_ata_threads 1 -ksp_type cg 2>&1 | tail -1)
  b=$(mpi "$p" "$ex2" "${base[@]}" -ksp_type cg 2>&1 | tail -1)
  local ra=${a#*reason }; ra=${ra%% *}
  if [ "$a" = "${a#ksp_ex2: }" ] || [ "${a% error*}" != "$(echo "$b" | sed 's/ error.*//')" ] || [ "$ra" != "$want" ]; then
    bad "ksp_ex2 $name (P=$p)" "  ata:   $a
  petsc: $b
  expected reason $want"
  else ok "ksp_ex2 $name (P=$p): ${a#ksp_ex2: }"; fi
}
echo "[ RUN      ] petsc plugin and ata-mpi-pcg"
run_ex2 "ilu" 1 CONVERGED_RTOL -pc_type ilu -pc_factor_mat_solver_type ata
run_ex2 "icc" 1 CONVERGED_RTOL -pc_type icc -pc_factor_mat_solver_type ata
run_ex2 "bjacobi" 2 CONVERGED_RTOL -m 40 -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata
run_ex2 "asm icc" 2 CONVERGED_RTOL -pc_type asm -sub_pc_type icc -sub_pc_factor_mat_solver_type ata
run_ex2 "refactor on new values" 2 CONVERGED_RTOL -resolve -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata
run_ex2 "ranks without rows" 4 CONVERGED_RTOL -m 1 -n 3 -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata
run_ex2 "zero pivot" 1 DIVERGED_PC_FAILED -zero_pivot -pc_type ilu -pc_factor_mat_solver_type ata
run_ex2 "zero pivot bjacobi" 2 DIVERGED_PC_FAILED -zero_pivot -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata
run_ex2 "indefinite" 1 DIVERGED_INDEFINITE_MAT -indefinite -pc_type ilu -pc_factor_mat_solver_type ata
# MatMatSolve (ATA's several-right-hand-side solve) against MatSolve column by column.
for pc in ilu icc; do
  out=$(mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type $pc -pc_factor_mat_solver_type ata -mat_ata_threads 2 -matsolve 2>&1 | tail -1)
  if echo "$out" | awk '/matsolve difference/ {d = $NF} END {exit !(d != "" && d + 0 <= 1e-12)}'; then ok "MatMatSolve, 3 columns ($pc): ${out#ksp_ex2: }"
  else bad "MatMatSolve ($pc)" "$out"; fi
done
# KSPSolveTranspose through the plugin's MatSolveTranspose (U^T then L^T on
# ATA's factors), nonsymmetric A: ATA's and PETSc's ILU(0) give the same
# iterations, and the solution is the exact one.
for p in 1 2; do
  pcs=(-pc_type ilu -pc_factor_mat_solver_type); [ $p = 2 ] && pcs=(-pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type)
  a=$(mpi $p "$ex2" -dll_append "$plugin" -convect -transpose -ksp_type gmres "${pcs[@]}" ata -mat_ata_threads 1 2>&1 | tail -1)
  b=$(mpi $p "$ex2" -convect -transpose -ksp_type gmres "${pcs[@]}" petsc 2>&1 | tail -1)
  if [ "${a% error*}" = "${b% error*}" ] && echo "$a" | awk '/CONVERGED/ {e = $NF} END {exit !(e != "" && e + 0 < 1e-5)}'; then
    ok "KSPSolveTranspose, nonsymmetric A (P=$p): ${a#ksp_ex2: }"
  else bad "KSPSolveTranspose (P=$p)" "  ata:   $a
  petsc: $b"; fi
done
# -ksp_view and -help show the factor and the options.
out=$(mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type ilu -pc_factor_mat_solver_type ata -mat_ata_policy levelset -mat_ata_threads 1 -resolve -ksp_view 2>&1)
if echo "$out" | grep -q "package used to perform factorization: ata" && echo "$out" | grep -q "ATA L solve: policy levelset" && \
   echo "$out" | grep -q "factorisations 2,.*refactorisations [0-9.e-]* s, context [0-9.e-]* s" && \
   echo "$out" | grep -q "wait policy default"; then
  ok "-ksp_view shows the ata factor, its plans, and the refactorisation"
else bad "-ksp_view" "$out"; fi
# -mat_ata_wait_policy reaches the context (and -ksp_view says so); the
# iterations stay PETSc's.
for w in active passive; do
  out=$(mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type ilu -pc_factor_mat_solver_type ata -mat_ata_threads 2 -mat_ata_wait_policy $w -ksp_view 2>&1)
  b=$(mpi 1 "$ex2" -ksp_type cg -pc_type ilu 2>&1 | tail -1)
  if echo "$out" | grep -q "backend cpu, 2 threads, wait policy $w" && [ "$(echo "$out" | tail -1 | sed 's/ error.*//')" = "$(echo "$b" | sed 's/ error.*//')" ]; then
    ok "-mat_ata_wait_policy $w: $(echo "$out" | tail -1 | sed 's/^ksp_ex2: //')"
  else bad "-mat_ata_wait_policy $w" "$(echo "$out" | grep -E "ATA|ksp_ex2")
  petsc: $b"; fi
done
# -mat_ata_precision mixed: float factors (-ksp_view says so), converged, the
# solution still to rtol (checked by ksp_ex2's error line); refactorisation on
# new values (-resolve) and a transposed solve through them; the ICC factor
# (not built in float) refused with the reason, not a silent double factor.
for args in "-ksp_type cg -resolve" "-ksp_type gmres -convect -transpose"; do
  out=$(mpi 1 "$ex2" -dll_append "$plugin" $args -pc_type ilu -pc_factor_mat_solver_type ata -mat_ata_threads 2 -mat_ata_precision mixed -ksp_view 2>&1)
  if echo "$out" | grep -q "wait policy default, factors float (precision mixed)" && \
     echo "$out" | grep -q "ATA L solve: .*values read as float" && echo "$out" | grep -q "ATA U solve: .*values read as float" && \
     echo "$out" | tail -1 | awk '/CONVERGED/ {e = $NF} END {exit !(e != "" && e + 0 < 1e-4)}'; then
    ok "-mat_ata_precision mixed ($args): $(echo "$out" | tail -1 | sed 's/^ksp_ex2: //')"
  else bad "-mat_ata_precision mixed ($args)" "$(echo "$out" | grep -E "ATA|ksp_ex2|rror" | head -8)"; fi
done
out=$(mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type icc -pc_factor_mat_solver_type ata -mat_ata_threads 1 -mat_ata_precision mixed 2>&1)
if echo "$out" | grep -q "ata: factorisation: .*mixed"; then ok "-mat_ata_precision mixed with ICC: refused, the reason named"
else bad "-mat_ata_precision mixed with ICC" "$(echo "$out" | grep -iE "ata|error" | head -5)"; fi
out=$(mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type ilu -pc_factor_mat_solver_type ata -mat_ata_precision single 2>&1)
if echo "$out" | grep -q "Unknown option single for -mat_ata_precision"; then ok "-mat_ata_precision single: refused"
else bad "-mat_ata_precision single" "$(echo "$out" | tail -5)"; fi
# -mat_ata_backend auto without a GPU driver's device node: the CPU, and the
# GPU modules (with the vendor's libraries behind them) never loaded.
if [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ] || [ -e /dev/dxg ] || [ -e /dev/kfd ]; then
  echo "SKIPPED: auto backend without a GPU device node (this machine has one)"; skip=$((skip+1))
else
  out=$(LD_DEBUG=files mpi 1 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type ilu -pc_factor_mat_solver_type ata -mat_ata_threads 1 -ksp_view 2>&1)
  if ! echo "$out" | grep -q "file=.*libata_\(cuda\|hip\)\.so" && echo "$out" | grep -q "ATA ILU(0): backend cpu"; then
    ok "-mat_ata_backend auto, no GPU device node: cpu, no GPU module loaded"
  else bad "-mat_ata_backend auto without a GPU device node" "$(echo "$out" | grep -E "libata_(cuda|hip)|ATA ILU")"; fi
fi
out=$(mpi 2 "$ex2" -dll_append "$plugin" -ksp_type cg -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata -help 2>&1)
if echo "$out" | grep -q -- "-sub_mat_ata_policy" && echo "$out" | grep -q -- "-sub_mat_ata_threads" && \
   echo "$out" | grep -q -- "-sub_mat_ata_wait_policy" && echo "$out" | grep -q -- "-sub_mat_ata_precision"; then
  ok "-help lists -sub_mat_ata_* under block Jacobi"
else bad "-help" "$(echo "$out" | tail -5)"; fi

# 2. ata-mpi-pcg: ATA vs PETSc sub-ILU(0), one run each.
bench_check() { # name P tol converged? flags...
  local name=$1 p=$2 tol=$3 conv=$4; shift 4
  local csv=$tmp/b.csv out
  rm -f "$csv"
  if ! out=$(mpi "$p" "$bench" --quiet --csv "$csv" "$@" -mat_ata_threads 1 2>&1) && [ "$conv" = converged ]; then
    bad "ata-mpi-pcg $name (P=$p)" "$out"; return; fi
  if [ ! -s "$csv" ]; then bad "ata-mpi-pcg $name (P=$p): no CSV" "$out"; return; fi
  if out=$(csv_agree "$csv" "$tol" "$([ "$conv" = converged ] && echo 1)"); then
    ok "ata-mpi-pcg $name (P=$p): $(awk -F, 'NR > 1 {printf "%s %s/%s %s; ", $1, $5, $9, $10}' "$csv")"
  else bad "ata-mpi-pcg $name (P=$p)" "$out"; fi
}
bench_check "lap3d ilu" 1 1e-10 converged --pc ilu --partition block --gen lap3d:16
bench_check "lap3d bjacobi" 2 1e-10 converged --partition block --gen lap3d:16
bench_check "lap3d bjacobi" 4 1e-10 converged --gen lap3d:12 --partition metis
bench_check "lap3d bjacobi, level order" 2 1e-10 converged --partition block --order level --gen lap3d:16
# --ksp: KSPBCGS / KSPGMRES, right-preconditioned, as the CSV's ksp and
# restart columns (the method PETSc ran, from KSPGetType) say.
ksp_cols() { # want-ksp want-restart: every row of the last bench_check's CSV
  awk -F, -v k="$1" -v m="$2" 'NR > 1 { rows++; if ($(NF - 1) != k || $NF != m) { print "  ksp " $(NF - 1) " restart " $NF; bad = 1 } }
      END { if (!rows) print "  no rows"; exit bad || !rows }' "$tmp/b.csv"
}
bench_check "lap3d bcgs ilu" 1 1e-10 converged --ksp bcgs --pc ilu --partition block --gen lap3d:16
if out=$(ksp_cols bcgs 0); then ok "ata-mpi-pcg --ksp bcgs: ksp column bcgs"; else bad "ata-mpi-pcg --ksp bcgs: ksp column" "$out"; fi
bench_check "lap3d gmres(20) bjacobi" 2 1e-10 converged --ksp gmres --restart 20 --partition block --gen lap3d:16
if out=$(ksp_cols gmres 20); then ok "ata-mpi-pcg --ksp gmres --restart 20: ksp column gmres, restart 20"
else bad "ata-mpi-pcg --ksp gmres --restart 20: ksp, restart columns" "$out"; fi
out=$(mpi 1 "$bench" --quiet --solver petsc --pc ilu --partition block --gen lap3d:6 --ksp gmres --restart 12 -ksp_view 2>&1)
if echo "$out" | grep -q "restart=12" && echo "$out" | grep -q "right preconditioning" && \
   echo "$out" | grep -q "UNPRECONDITIONED norm"; then ok "ata-mpi-pcg --ksp gmres: restart 12, right preconditioning, unpreconditioned norm"
else bad "ata-mpi-pcg --ksp gmres -ksp_view" "$out"; fi
for a in "--ksp nonsense" "--restart 0"; do
  out=$("$bench" $a 2>&1); rc=$?
  if [ $rc -eq 2 ] && echo "$out" | grep -q -- "${a% *}"; then ok "ata-mpi-pcg $a: usage error"
  else bad "ata-mpi-pcg $a: expected exit 2 naming ${a% *}, got $rc" "$out"; fi
done
if [ -d "$mats" ]; then
  bench_check "SPD ilu" 1 1e-10 converged --pc ilu --partition block --matrix "$mats/494_bus.mtx" --matrix "$mats/1138_bus.mtx" --matrix "$mats/pts5ldd03.mtx"
  bench_check "SPD bjacobi" 2 1e-10 converged --partition metis --matrix "$mats/494_bus.mtx" --matrix "$mats/1138_bus.mtx"
  # an indefinite ILU(0): both stop on it after the same iterations
  bench_check "indefinite ilu" 1 1e-8 any --pc ilu --partition block --matrix "$mats/bcsstk13.mtx" --matrix "$mats/LFAT5.mtx"
  bench_check "indefinite bjacobi" 2 1e-8 any --partition metis --matrix "$mats/bcsstk13.mtx"
  # nonsymmetric, taken as it is (not refused, not symmetrised): GMRES with
  # ATA's ILU(0) and PETSc's, the same iterations
  bench_check "nonsymmetric gmres ilu" 1 1e-8 converged --ksp gmres --pc ilu --partition block --matrix "$mats/olm1000.mtx"
  # a missing diagonal: PETSc's ILU(0) is an error; ATA's a failed PC
  out=$(mpi 1 "$bench" --solver ata --pc ilu --partition block --matrix "$mats/adder_dcop_05.mtx" -mat_ata_threads 1 2>&1)
  if echo "$out" | grep -q "DIVERGED_PC_FAILED"; then ok "missing diagonal: DIVERGED_PC_FAILED"
  else bad "missing diagonal" "$out"; fi
else
  echo "SKIPPED: matrix folder $mats not found (set ATA_MATRICES)"; skip=$((skip+1))
fi

# 3. METIS: partition-independent point Jacobi gives the P = 1 answer for
#    every partition and P (rows owned once, relabelling undone exactly).
ref=$(mpi 1 "$bench" --quiet --csv "$tmp/p1.csv" --pc jacobi --partition block --gen circuit:4000 >/dev/null 2>&1; awk -F, 'NR == 2 {print $10}' "$tmp/p1.csv")
for p in 2 4; do
  rm -f "$tmp/pj.csv"
  mpi "$p" "$bench" --quiet --csv "$tmp/pj.csv" --pc jacobi --partition metis,block --gen circuit:4000 >/dev/null 2>&1
  if [ -n "$ref" ] && [ -s "$tmp/pj.csv" ] && out=$(csv_agree "$tmp/pj.csv" 1e-10 1) && \
     awk -F, -v r="$ref" 'NR > 1 && $10 != r {exit 1}' "$tmp/pj.csv" && \
     awk -F, 'NR > 1 && $5 == "metis" && $7 + 0 >= 0 {m = $7} NR > 1 && $5 == "block" {b = $7} END {exit !(m < b)}' "$tmp/pj.csv"; then
    ok "METIS relabelling (P=$p): $ref iterations as P=1, xdiff <= 1e-10, cut $(awk -F, 'NR > 1 {printf "%s %s ", $5, $7}' "$tmp/pj.csv")"
  else bad "METIS relabelling (P=$p)" "$(cat "$tmp/pj.csv" 2>/dev/null) ${out:-} (P=1: $ref iterations)"; fi
done

echo "[==========] petsc: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && echo "[  PASSED  ] $pass test(s)."
[ "$fail" -eq 0 ]
