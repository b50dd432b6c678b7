#!/usr/bin/env bash
# Ensure the Debian packages the build needs. As root: apt-get installs the
# missing ones. Otherwise: one line naming the exact command, and exit 1.
# Usage: deps.sh [hip]   (hip: also the HIP compiler and hipSPARSE)
#        deps.sh petsc    (also PETSc and OpenMPI, for `make petsc`)
#        deps.sh fuzz    (clang-14 and libFuzzer, for make fuzz)
set -u
need=()
have_hdr() { [ -e "$1" ]; }
have_hdr /usr/include/suitesparse/cholmod.h || need+=(libsuitesparse-dev)
have_hdr /usr/include/suitesparse/RBio.h    || need+=(libsuitesparse-dev)
have_hdr /usr/include/metis.h               || need+=(libmetis-dev)
have_hdr /usr/include/cmocka.h              || need+=(libcmocka-dev)
have_hdr /usr/include/archive.h             || need+=(libarchive-dev)
have_hdr /usr/include/zlib.h                || need+=(zlib1g-dev)
command -v pkg-config >/dev/null            || need+=(pkg-config)
if [ "${1:-}" = hip ]; then
  command -v hipcc >/dev/null               || need+=(hipcc)
  have_hdr /usr/include/hip/hip_runtime.h   || need+=(libamdhip64-dev)
  have_hdr /usr/include/hipsparse/hipsparse.h || have_hdr /usr/include/hipsparse.h || need+=(libhipsparse-dev)
fi
if [ "${1:-}" = petsc ]; then
  [ -n "${PETSC_DIR:-}" ] || pkg-config --exists PETSc 2>/dev/null || have_hdr /usr/lib/petsc/include/petsc.h || need+=(petsc-dev)
  command -v mpirun >/dev/null              || need+=(openmpi-bin)
  pkg-config --exists ompi-c 2>/dev/null || pkg-config --exists mpi 2>/dev/null || need+=(libopenmpi-dev)
fi
if [ "${1:-}" = fuzz ]; then                 # make fuzz: clang-14 with libFuzzer
  command -v clang-14 >/dev/null            || need+=(clang-14)
  ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
    || need+=(libclang-rt-14-dev libfuzzer-14-dev)
fi
[ ${#need[@]} -eq 0 ] && exit 0
# unique, keep order
mapfile -t need < <(printf '%s\n' "${need[@]}" | awk '!seen[$0]++')
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "ata: installing missing packages: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq "${need[@]}" >/tmp/ata-apt.log 2>&1; then
    apt-get update -qq >/tmp/ata-apt.log 2>&1
    apt-get install -y -qq "${need[@]}" >>/tmp/ata-apt.log 2>&1 || {
      echo "ata: apt-get install ${need[*]} failed (log: /tmp/ata-apt.log)" >&2; exit 1; }
  fi
  exit 0
fi
echo "ata: missing packages; run: sudo apt-get install -y ${need[*]}" >&2
exit 1
