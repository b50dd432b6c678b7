#!/usr/bin/env bash
# Run every test binary given, keep going after a failure, print one summary.
# ATA_TEST_FILTER=word runs only binaries whose name contains it.
set -u
pass=0; fail=0; failed=()
for t in "$@"; do
  case "$(basename "$t")" in *"${ATA_TEST_FILTER:-}"*) ;; *) continue ;; esac
  echo "=== $(basename "$t")"
  if "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed+=("$(basename "$t")"); fi
done
echo
echo "test programs: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ "$fail" -eq 0 ]
