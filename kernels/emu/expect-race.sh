#!/usr/bin/env bash
# expect-race.sh TEST_BINARY - passes only if ThreadSanitizer reports a data
# race in the kernels (kernels/ata_exec.cu) when TEST_BINARY runs: the proof
# that make gpu-emu-tsan can fail. Used by make gpu-emu-tsan-bug on
# test_gpu built with an injected ordering bug (ATA_EMU_BUG_*).
set -u
bin=$1
log=${bin}${2:+-$2}.tsan.log   # $2: which injected bug
echo "expect-race: $bin (an ordering bug is injected; ThreadSanitizer must report it)"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" ATA_GPU_TEST_SIZE=tiny timeout 600 "$bin" > "$log" 2>&1
rc=$?
if [ $rc -eq 66 ] && grep -q "WARNING: ThreadSanitizer: data race" "$log" && grep -q "ata_exec.cu" "$log"; then
  echo "expect-race: OK, reported as expected:"
  grep -m1 -A6 "WARNING: ThreadSanitizer: data race" "$log" | sed 's/^/    /'
  exit 0
fi
echo "expect-race: FAILED: no ThreadSanitizer race report in the kernels (rc $rc); last lines of $log:" >&2
tail -20 "$log" >&2
exit 1
