#!/bin/sh
# Compiler and linker flags for PETSc and its MPI: `petsc-flags.sh cflags|libs`.
# Order of search: PETSC_DIR (and PETSC_ARCH), pkg-config PETSc / petsc,
# Debian's /usr/lib/petsc. MPI from pkg-config (ompi-c, mpi), else mpicc.
# Prints nothing and exits 1 when PETSc is not found.
what=${1:-cflags}
pc=""
for p in PETSc petsc; do pkg-config --exists "$p" 2>/dev/null && { pc=$p; break; }; done
inc=""; lib=""
if [ -n "${PETSC_DIR:-}" ]; then
  d=$PETSC_DIR${PETSC_ARCH:+/$PETSC_ARCH}
  inc="-isystem $PETSC_DIR/include -isystem $d/include"; lib="-L$d/lib -Wl,-rpath,$d/lib -lpetsc"
elif [ -n "$pc" ]; then
  inc=$(pkg-config --cflags-only-I "$pc" | sed 's/-I/-isystem /g')
  ldir=$(pkg-config --variable=libdir "$pc")
  lib="$(pkg-config --libs "$pc") -Wl,-rpath,$ldir"
elif [ -e /usr/lib/petsc/include/petsc.h ]; then
  inc="-isystem /usr/lib/petsc/include"
  for l in petsc_real petsc; do [ -e /usr/lib/petsc/lib/lib$l.so ] && { lib="-L/usr/lib/petsc/lib -Wl,-rpath,/usr/lib/petsc/lib -l$l"; break; }; done
fi
[ -n "$inc" ] && [ -n "$lib" ] || exit 1
mpi=""
for p in ompi-c mpi-c mpi; do pkg-config --exists "$p" 2>/dev/null && { mpi=$p; break; }; done
if [ -n "$mpi" ]; then
  minc=$(pkg-config --cflags-only-I "$mpi" | sed 's/-I/-isystem /g'); mlib=$(pkg-config --libs "$mpi")
elif command -v mpicc >/dev/null 2>&1; then
  minc=$(mpicc --showme:compile 2>/dev/null); mlib=$(mpicc --showme:link 2>/dev/null)
fi
case $what in
  cflags) echo "$inc $minc" ;;
  libs)   echo "$lib $mlib" ;;
  *) echo "usage: $0 cflags|libs" >&2; exit 2 ;;
esac
