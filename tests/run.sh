#!/usr/bin/env bash
# Run every test binary given, keep going after a failure, print one summary.
# ATA_TEST_FILTER="word ..." runs only binaries whose name contains a word.
set -u
pass=0; fail=0; failed=()
for t in "$@"; do
  if [ -n "${ATA_TEST_FILTER:-}" ]; then
    keep=0
    for w in $ATA_TEST_FILTER; do case "$(basename "$t")" in *"$w"*) keep=1 ;; esac; done
    [ $keep = 1 ] || continue
  fi
  echo "=== $(basename "$t")"
  if "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed+=("$(basename "$t")"); fi
done
echo
echo "programs: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || echo "failed: ${failed[*]}"
[ "$fail" -eq 0 ]
