#!/usr/bin/env bash
# gpu-kit.sh BUILD KIT MODE MATRICES - assemble the GPU kit (called by
# `make gpu-kit`, after the binaries were built in BUILD).
#
#   KIT/bin/      ata-bench, test_gpu, ata-csr-dump
#   KIT/lib/      libata_cuda.so (the CUDA module, or the emulated one when
#                 MODE=emu32) and every shared library those load that is
#                 not part of the system everywhere (glibc, libstdc++,
#                 libgcc_s) and not the GPU machine's own (the driver's
#                 libcuda, cuSPARSE and its libnvJitLink: 160 + 99 MiB here,
#                 too large to travel; bench/gpu-check.sh finds them there).
#                 libcudart (0.7 MiB, the runtime the module was built with)
#                 does travel.
#   KIT/lib/fallback/  libstdc++ and libgcc_s from here, when the kit needs
#                 a GLIBCXX_ version: gpu-check.sh puts them on the library
#                 path only when the machine's libstdc++ lacks that version.
#   KIT/matrices/real/  copies of MATRICES/real (the shared folder does not travel).
#   KIT/MANIFEST  what was built, from which commit, with which nvcc; the
#                 newest GLIBC_/GLIBCXX_ symbol versions the binaries need.
#   KIT/ORIGINS   each carried library and the file it was copied from
#                 (the rehearsal hides those files).
# Fails if KIT plus the tracked tree would exceed the 64 MiB that travels.
set -euo pipefail
build=$1 kit=$2 mode=$3 matrices=$4
limit_mib=64
[ -x "$build/ata-bench" ] && [ -x "$build/tests/test_gpu" ] && [ -x "$build/ata-csr-dump" ] &&
  [ -e "$build/libata_cuda.so" ] || { echo "gpu-kit: binaries missing in $build" >&2; exit 1; }
rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib/fallback" "$kit/matrices"
cp "$build/ata-bench" "$build/tests/test_gpu" "$build/ata-csr-dump" "$kit/bin/"
cp "$build/libata_cuda.so" "$kit/lib/"

# Libraries every Linux has (glibc's parts, the loader) or the GPU machine
# must provide itself (driver, cuSPARSE, nvJitLink).
system_re='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s)\.so'
gpu_re='^(libcuda\.so|libcusparse|libnvJitLink|libnvidia)'
: > "$kit/ORIGINS"
missing=0
for f in "$kit/bin/"* "$kit/lib/libata_cuda.so"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [[ $name =~ $system_re ]] || [[ $name =~ $gpu_re ]]; then continue; fi
    if [ "$path" = "not" ]; then echo "gpu-kit: $f needs $name, not found here" >&2; missing=1; continue; fi
    [ -e "$kit/lib/$name" ] && continue
    cp -L "$path" "$kit/lib/$name"
    echo "$name $(realpath "$path")" >> "$kit/ORIGINS"
  done < <(ldd "$f")
done
[ $missing -eq 0 ] || exit 1

if [ -d "$matrices/real" ]; then
  mkdir -p "$kit/matrices/real"
  cp "$matrices"/real/*.mtx* "$kit/matrices/real/"
else
  echo "gpu-kit: WARNING: no $matrices/real (set ATA_MATRICES): the kit has no real matrices" >&2
fi

# The newest symbol versions the kit needs from the machine's glibc/libstdc++.
need_ver() {   # need_ver PREFIX FILES...
  local p=$1; shift
  { objdump -T "$@" 2>/dev/null | grep -o "${p}_[0-9][0-9.]*" || true; } | sort -uV | tail -1
}
glibc_needed=$(need_ver GLIBC "$kit"/bin/* "$kit"/lib/*.so*)
glibcxx_needed=$(need_ver GLIBCXX "$kit"/bin/* "$kit"/lib/*.so*)
if [ -n "$glibcxx_needed" ]; then
  for l in libstdc++.so.6 libgcc_s.so.1; do
    # (awk reads to the end: an early exit would SIGPIPE ldconfig, and
    # pipefail turns that into a failed kit at random - seen in CI, status 141)
    p=$(ldconfig -p | awk -v n="$l" '$1 == n && /x86-64/ && !f {print $NF; f = 1}')
    [ -n "$p" ] && cp -L "$p" "$kit/lib/fallback/$l"
  done
fi
nvcc_ver=none
if [ "$mode" = cuda ]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  nvcc_ver=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 (\2)/p')
fi
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
{
  echo "mode=$mode"
  echo "commit=$commit"
  echo "built=$(date -u +%FT%TZ) on $(uname -n), $(ldd --version 2>&1 | sed -n 1p)"
  echo "nvcc=$nvcc_ver"
  echo "archs=$([ "$mode" = cuda ] && echo 'sm_90 + compute_90 PTX' || echo 'host SIMT emulator, warp 32')"
  echo "glibc_needed=$glibc_needed"
  echo "glibcxx_needed=$glibcxx_needed"
  echo "real_matrices=$(ls "$kit/matrices/real" 2>/dev/null | wc -l)"
} > "$kit/MANIFEST"
(cd "$kit" && find . -type f ! -name MANIFEST -printf '%s %p\n' | sort -k2) >> "$kit/MANIFEST"

kit_b=$(du -sb "$kit" | cut -f1)
tree_b=$( (git ls-files -z 2>/dev/null | xargs -0 -r stat -c %s 2>/dev/null || true) | awk '{s += $1} END {print s + 0}')
echo "gpu-kit: $kit ($mode): $(du -sh "$kit" | cut -f1) ($kit_b bytes; tracked tree $tree_b bytes;" \
     "$(wc -l < "$kit/ORIGINS") carried libraries, $(grep -c . <(ls "$kit/matrices/real" 2>/dev/null)) real matrices)"
if [ $((kit_b + tree_b)) -gt $((limit_mib * 1024 * 1024)) ]; then
  echo "gpu-kit: FAILED: kit + tree = $((kit_b + tree_b)) bytes > $limit_mib MiB, the most that travels" >&2
  exit 1
fi
