#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD SECONDS - build the libFuzzer targets against
# BUILD/libata.a (compiled with ASan+UBSan+fuzzer-no-link by `make fuzz`),
# seed their corpora in BUILD/fuzz/ (shared matrices read in place and
# copied there, never committed), run each target SECONDS. Any crash, leak,
# UBSan report or reference mismatch fails; the input stays in
# BUILD/fuzz/artifacts/.
set -euo pipefail
B=${1:?build folder}; SECS=${2:-60}
CC=${FUZZ_CC:-clang-14}; LIBS=${FUZZ_LIBS:--lcholmod -lrbio -lsuitesparseconfig -larchive -lmetis -lpthread -lm}
M=${ATA_MATRICES:-../shared/matrices}
F=$B/fuzz
mkdir -p "$F/artifacts" "$F/corpus-read" "$F/corpus-api"
for t in read api; do
  $CC -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -D_GNU_SOURCE \
      -Iinclude -Isrc -Itests/fuzz -o "$F/fuzz_$t" "tests/fuzz/fuzz_$t.c" "$B/libata.a" $LIBS
done

# Seeds for the reader: byte 0 picks extension/options (fuzz_read.c).
seed() { { printf "\\$(printf '%03o' "$1")"; cat; } > "$F/corpus-read/$2"; }
k=0
if [ -d "$M" ]; then
  for f in "$M"/real/*.mtx "$M"/bad/*.mtx; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] || continue
    k=$((k + 1)); b=$(basename "$f" .mtx)
    seed $(( (k * 16) % 256 )) "mm-$b" < "$f"
    seed $(( (k * 16 + 3) % 256 )) "gz-$b" < <(gzip -c "$f")
  done
else
  echo "fuzz: $M not found: seeding without the shared matrices"
fi
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n' | seed 0 mm-small
# a collection archive: NAME/NAME.mtx beside NAME/NAME_b.mtx
mkdir -p "$F/tar/small"
tail -c +2 "$F/corpus-read/mm-small" > "$F/tar/small/small_b.mtx"
tail -c +2 "$F/corpus-read/mm-small" > "$F/tar/small/small.mtx"
tar czf - -C "$F/tar" small | seed 4 tar-small
printf '%-72s%-8s\n%14d%14d%14d%14d\n%-3s%11s%14d%14d%14d%14d\n%-16s%-16s%-20s\n 1 3 4 5\n 1 3 2 3\n 4 1 5 6\n' \
  seed key 4 1 1 1 iua "" 3 3 4 0 '(40I2)' '(40I2)' '(40I2)' | seed 1 rb-small
# regression seed: line 2's card counts at LLONG_MAX made rb_where sum past it (UB, 9e7c5bd)
printf '%-72s%-8s\n%14s%20s%20s%14d\n%-3s%11s%14d%14d%14d%14d\n%-16s%-16s%-20s\n 1 x 4 5\n 1 3 2 3\n 4 1 5 6\n' \
  seed key 99999999999999999999 9223372036854775807 9223372036854775807 1 iua "" 3 3 4 0 '(40I2)' '(40I2)' '(40I2)' \
  | seed 1 rb-huge-counts
tail -c +2 "$F/corpus-read/rb-small" > "$F/tar/small/small.rua"
rm "$F/tar/small/small.mtx"
tar czf - -C "$F/tar" small | seed 4 tar-rb-small
# Seeds for the API: n, options, mode, S, then row lengths / columns / values.
printf '\x08\x00\x0c\x04\x02\x02\x02\x02\x02\x02\x02\x02\x00\x10\x01\x08\x01\x10\x02\x08\x02\x10\x03\x08\x03\x10\x04\x08\x04\x10' > "$F/corpus-api/tridiag"
printf '\x05\x07\x03\x01\x01\xff\x02\x03\x01\xfb\x08\x07\x01\x09' > "$F/corpus-api/raw"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
fail=0
for t in read api; do
  echo "fuzz: $t for ${SECS} s"
  # the API target reads at most ~1 KB (n <= 48, rows <= 8 entries): no longer inputs
  len=65536; [ $t = api ] && len=1024
  if ! "$F/fuzz_$t" -max_total_time="$SECS" -max_len=$len -timeout=30 -rss_limit_mb=2560 \
        -artifact_prefix="$F/artifacts/$t-" -print_final_stats=1 "$F/corpus-$t" > "$F/$t.log" 2>&1; then
    fail=1
    echo "fuzz: $t FAILED; input kept in $F/artifacts/, log $F/$t.log"
    grep -E "ERROR|mismatch|runtime error|SUMMARY" "$F/$t.log" | head -20 || true
  else
    grep -E "stat::number_of_executed_units|cov:" "$F/$t.log" | tail -2 || true
  fi
done
exit $fail
