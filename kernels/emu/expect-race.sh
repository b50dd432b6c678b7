#!/usr/bin/env bash
# expect-race.sh TEST_BINARY BUG [TESTS [WHERE [ENV,..]]] - passes only if
# ThreadSanitizer reports a data race in the kernels (kernels/ata_exec.cu,
# in a frame matching WHERE when given) when TEST_BINARY runs: the proof
# that make gpu-emu-tsan can fail. Used by make gpu-emu-tsan-bug on test_gpu
# built with an injected ordering bug (ATA_EMU_BUG_BUG), running only the
# tests matching TESTS (ATA_GPU_TEST_ONLY), with the environment ENV (e.g.
# ATA_GPU_WAIT=flag,ATA_GPU_MAP=fixed).
set -u
bin=$1 bug=$2 tests=${3:-} where=${4:-} envs=${5:-}
log=${bin}-${bug}${envs:+-$(tr -c 'A-Za-z0-9\n' _ <<< "$envs")}.tsan.log
echo "expect-race: $bin, bug $bug${tests:+, $tests}${envs:+, $envs} (an ordering bug is injected; ThreadSanitizer must report it${where:+ in $where})"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" ATA_GPU_TEST_SIZE=tiny ATA_GPU_TEST_ONLY=$tests \
  env ${envs//,/ } timeout 600 "$bin" > "$log" 2>&1
rc=$?
report=$(sed -n '/WARNING: ThreadSanitizer: data race/,/^SUMMARY/p' "$log")
if [ $rc -eq 66 ] && [ -n "$report" ] && grep -q "ata_exec.cu" <<< "$report" &&
   { [ -z "$where" ] || grep -q "$where" <<< "$report"; }; then
  echo "expect-race: OK, reported as expected:"
  grep -m1 -A6 "WARNING: ThreadSanitizer: data race" "$log" | sed 's/^/    /'
  exit 0
fi
echo "expect-race: FAILED: no ThreadSanitizer race report in the kernels${where:+ (in $where)} (rc $rc); last lines of $log:" >&2
tail -20 "$log" >&2
exit 1
