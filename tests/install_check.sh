#!/usr/bin/env bash
# make install into a temporary prefix, then build README's example against
# the installed copy through pkg-config, run it and check its answer.
set -u
build=${ATA_BUILD:-build}
prefix=$(mktemp -d /tmp/ata-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
echo "[ RUN      ] install_check (make install PREFIX=$prefix)"
if ! make -s install BUILD="$build" PREFIX="$prefix" >"$prefix/install.log" 2>&1; then
  cat "$prefix/install.log"; echo "[  FAILED  ] make install"; exit 1; fi
for f in lib/libata.a lib/libata.so include/ata.h bin/ata-bench lib/pkgconfig/ata.pc; do
  [ -e "$prefix/$f" ] || { echo "[  FAILED  ] $f not installed"; exit 1; }
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags=$(pkg-config --cflags ata) && libs=$(pkg-config --libs ata) || { echo "[  FAILED  ] pkg-config ata"; exit 1; }
if ! cc -std=c11 $cflags -o "$prefix/example" tests/example_sptrsv.c $libs -Wl,-rpath,"$prefix/lib"; then
  echo "[  FAILED  ] example does not build against the installed copy"; exit 1; fi
out=$(ATA_NO_GPU_WARN=1 "$prefix/example") || { echo "$out"; echo "[  FAILED  ] example run"; exit 1; }
echo "$out"
# x = L \ 1 for the 2D Laplacian's lower triangle: x[0] = 1/4.
case "$out" in "success: x[0] = 0.250000"*) ;; *) echo "[  FAILED  ] unexpected answer"; exit 1;; esac
# The split-API example: setup once, solve 6 steps, 1 value update.
if ! cc -std=c11 $cflags -o "$prefix/example_pcg" tests/example_pcg.c $libs -Wl,-rpath,"$prefix/lib"; then
  echo "[  FAILED  ] example_pcg does not build against the installed copy"; exit 1; fi
out=$(ATA_NO_GPU_WARN=1 OMP_NUM_THREADS=2 "$prefix/example_pcg" lap3d:16 6 1) || { echo "$out"; echo "[  FAILED  ] example_pcg run"; exit 1; }
echo "$out"
case "$out" in "lap3d:16: success, 6 steps, 1 updates"*) ;; *) echo "[  FAILED  ] example_pcg: unexpected answer"; exit 1;; esac
"$prefix/bin/ata-bench" --help >/dev/null || { echo "[  FAILED  ] installed ata-bench --help"; exit 1; }
echo "[  PASSED  ] 1 test(s)."
