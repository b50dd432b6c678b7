#!/usr/bin/env bash
# emu-counts.sh [OUTDIR] - the work the GPU kernels do, counted on the host
# SIMT emulator with the device reporting an H100's shape (ATA_EMU_SHAPE=h100:
# 132 SMs x 4 resident blocks): issue 22's goal counts, per policy, and
# whether each goal is met. Counts on the emulator, never times (README,
# "GPU emulator (CI)": counted work). Builds build-emu32/ (make ATA_GPU=emu32)
# when needed; writes OUTDIR (default bench/out/emu-counts): one .txt and
# one .csv per case, and goals.txt. ATA_GPU_WAIT, ATA_GPU_MAP and
# ATA_GPU_PCG pass through (compare the first design and the new one).
# ~1.5 min on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${EMU_BUILD:-build-emu32}
OUT=${1:-bench/out/emu-counts}
nice -n 19 make -s -j2 BUILD="$B" ATA_GPU=emu32 "$B/ata-bench" "$B/libata_cuda.so"
export ATA_EMU_SHAPE=h100 ATA_BACKEND_PATH="$PWD/$B"
mkdir -p "$OUT"
run() {
  local name=$1; shift
  nice -n 19 "$B/ata-bench" "$@" --backend cuda --reps 1 --csv "$OUT/$name.csv" > "$OUT/$name.txt" 2>&1 || true
  sed -n '/work counted on the emulator/,$p' "$OUT/$name.txt" | grep -v '^setup s\|^  ms/it\|^$' | sed 's/^/  /'
}
echo "emu-counts: wait=${ATA_GPU_WAIT:-default} map=${ATA_GPU_MAP:-default} pcg=${ATA_GPU_PCG:-default}, device ATA_EMU_SHAPE=h100"
run sptrsv-lap3d48 sptrsv --gen lap3d:48 --policy levelset,syncfree,ca,la,greedy
run sptrsv-lap3d64 sptrsv --gen lap3d:64 --policy ca
run sptrsv-circuit sptrsv --gen circuit:20000 --policy syncfree,ca
run sptrsv-circuit-hubs sptrsv --gen circuit:1000000 --policy syncfree,ca   # hubs of up to 24681 entries
run ilu0-lap3d32 ilu0 --gen lap3d:32 --policy syncfree,ca
run pcg-lap3d32 pcg --gen lap3d:32 --policy ca
# The goals, read back from the CSVs by column name.
col() {  # FILE POLICY COLUMN
  awk -F, -v p="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
    $k["policy"] == p { print $k[c]; exit }' "$1"
}
goal() {  # LABEL VALUE OP LIMIT
  local ok
  ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN { if (v == "" || v == "nan") print "n/a";
    else if (op == "<=" ? v + 0 <= l + 0 : v + 0 >= l + 0) print "met"; else print "NOT met" }')
  printf "  %-58s %10.4g %s %-6s %s\n" "$1" "${2:-nan}" "$3" "$4" "$ok"
}
{
  echo "goals (issue 22), emulator, H100 shape, wait=${ATA_GPU_WAIT:-default} map=${ATA_GPU_MAP:-default}:"
  goal "syncfree lap3d:48: dependent round trips per level" "$(col "$OUT/sptrsv-lap3d48.csv" syncfree emu_rtt_per_level)" "<=" 1.5
  goal "syncfree lap3d:48: GPU-scope fences per row" "$(col "$OUT/sptrsv-lap3d48.csv" syncfree emu_fences_per_row)" "<=" 0.1
  goal "ca lap3d:64: launches per solve" "$(col "$OUT/sptrsv-lap3d64.csv" ca emu_launches)" "<=" 16
  goal "pcg (ca) lap3d:32: host synchronisations per iteration" "$(col "$OUT/pcg-lap3d32.csv" ca emu_host_syncs_per_it)" "<=" 0.25
} | tee "$OUT/goals.txt"
