#!/usr/bin/env bash
# make install into a temporary prefix, then build README's example against
# the installed copy exactly as README says (pkg-config, run path), run it and
# check its answer. Then the packaging promises:
#   - libata.so has a SONAME and exports only ata_* symbols; the GPU module
#     exports only its entry point; libata.so and ata-bench need no GPU runtime;
#   - a static link (libata.a + static_libs from ata.pc) works;
#   - a CUDA/HIP-built install runs on the CPU where the GPU module or its
#     runtime cannot load, and asking for that backend says "backend
#     unavailable: ..." (a private copy without the module; and, where
#     `unshare -m` is allowed, the GPU runtime's directories hidden).
set -u
build=${ATA_BUILD:-build}
prefix=$(mktemp -d /tmp/ata-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
unset ATA_BACKEND_PATH      # the installed copy must find its module alone
fail() { echo "[  FAILED  ] $*"; exit 1; }
echo "[ RUN      ] install_check (make install PREFIX=$prefix)"
if ! make -s install BUILD="$build" PREFIX="$prefix" >"$prefix/install.log" 2>&1; then
  cat "$prefix/install.log"; fail "make install"; fi
lib=$prefix/lib
for f in lib/libata.a lib/libata.so lib/libata.so.2 lib/libata.so.2.0.0 include/ata.h bin/ata-bench lib/pkgconfig/ata.pc; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done

# --- exports, SONAME, no GPU runtime in the core
soname=$(readelf -d "$lib/libata.so.2.0.0" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libata.so.2 ] || fail "SONAME is '$soname', expected libata.so.2"
bad=$(nm -D --defined-only "$lib/libata.so" | awk '{print $3}' | grep -v '^ata_')
[ -z "$bad" ] || fail "libata.so exports symbols without the ata_ prefix: $(echo $bad)"
n_ata=$(nm -D --defined-only "$lib/libata.so" | grep -c ' ata_')
for f in "$lib/libata.so.2.0.0" "$prefix/bin/ata-bench"; do
  if readelf -d "$f" | grep -E 'NEEDED.*(cuda|cusparse|amdhip|hipsparse)'; then fail "$f links a GPU runtime"; fi
done
modules=$(cd "$lib" && ls libata_*.so 2>/dev/null)
for m in $modules; do
  exp=$(nm -D --defined-only "$lib/$m" | awk '{print $3}')
  [ "$exp" = ata_backend_module ] || fail "$m exports more than ata_backend_module: $(echo $exp)"
done
echo "libata.so: SONAME $soname, exports $n_ata ata_* symbols and nothing else; GPU modules: ${modules:-none}"

# --- README's link line: pkg-config, and the run path of the install's libdir
export PKG_CONFIG_PATH="$lib/pkgconfig"
cflags=$(pkg-config --cflags ata) && libs=$(pkg-config --libs ata) && libdir=$(pkg-config --variable=libdir ata) \
  && static_libs=$(pkg-config --variable=static_libs ata) || fail "pkg-config ata"
if ! cc -std=c11 $cflags -o "$prefix/example" tests/example_sptrsv.c $libs -Wl,-rpath,"$libdir"; then
  fail "example does not build against the installed copy"; fi
readelf -d "$prefix/example" | grep -q 'NEEDED.*libata.so.2' || fail "example does not record libata.so.2"
out=$(ATA_NO_GPU_WARN=1 "$prefix/example") || { echo "$out"; fail "example run"; }
echo "$out"
# x = L \ 1 for the 2D Laplacian's lower triangle: x[0] = 1/4.
case "$out" in "success: x[0] = 0.250000"*) ;; *) fail "unexpected answer";; esac
# The split-API example (README's library example): setup once, solve 6 steps, 1 value update.
if ! cc -std=c11 $cflags -o "$prefix/example_pcg" tests/example_pcg.c $libs -Wl,-rpath,"$libdir"; then
  fail "example_pcg does not build against the installed copy"; fi
out=$(ATA_NO_GPU_WARN=1 OMP_NUM_THREADS=2 "$prefix/example_pcg" lap3d:16 6 1) || { echo "$out"; fail "example_pcg run"; }
echo "$out"
case "$out" in "lap3d:16: success, 6 steps, 1 updates"*) ;; *) fail "example_pcg: unexpected answer";; esac
# Static: libata.a and the libraries ata.pc lists as static_libs.
if ! cc -std=c11 $cflags -o "$prefix/example_static" tests/example_sptrsv.c "$libdir/libata.a" $static_libs; then
  fail "example does not link statically (libata.a + static_libs)"; fi
out=$("$prefix/example_static") || { echo "$out"; fail "static example run"; }
case "$out" in "success: x[0] = 0.250000"*) ;; *) fail "static example: unexpected answer: $out";; esac
"$prefix/bin/ata-bench" --help >/dev/null || fail "installed ata-bench --help"

# --- a GPU-built install where the GPU cannot load: CPU under auto, a clear
# message when the GPU backend is asked for by name.
cat > "$prefix/probe.c" <<'EOF'
#include <stdio.h>
#include "ata.h"
int main(int argc, char **argv)
{
    ata_context_options o = ata_context_defaults();
    if (argc > 1 && ata_backend_from_name(argv[1], &o.backend) != ATA_OK) return 2;
    ata_context *ctx;
    if (ata_context_create(&o, &ctx) != ATA_OK) { printf("error: %s\n", ata_last_error()); return 1; }
    printf("backend %s\n", ata_backend_name(ata_context_backend(ctx)));
    ata_context_destroy(ctx);
    return 0;
}
EOF
# probe_in PREFIX API WHAT: the probe linked against PREFIX/lib: auto must
# give cpu, and API by name the "backend unavailable" message.
probe_in() {
  local p=$1 api=$2 what=$3
  cc -std=c11 -I"$p/include" -o "$p/probe" "$prefix/probe.c" -L"$p/lib" -lata -Wl,-rpath,"$p/lib" || fail "probe build"
  local auto named
  auto=$("$p/probe" auto); named=$("$p/probe" "$api")
  [ "$auto" = "backend cpu" ] || fail "$what: auto gave '$auto', expected the cpu backend"
  case "$named" in "error: backend unavailable: $api: "*) ;; *) fail "$what: asking for $api gave '$named'";; esac
  echo "$what: auto -> cpu; $api -> $named"
}
for m in $modules; do
  api=${m#libata_}; api=${api%.so}
  priv=$prefix/no-$api
  mkdir -p "$priv" && cp -a "$prefix/lib" "$prefix/include" "$priv/" && rm -f "$priv/lib/$m"
  probe_in "$priv" "$api" "install without $m"
  # Hide the GPU runtime libraries the module needs (a machine without the toolkit).
  if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
    dirs=$(ldd "$lib/$m" | awk '/=> \// {print $3}' | grep -E 'cuda|cusparse|cublas|amdhip|hipsparse|rocm' \
           | xargs -r -n1 realpath | xargs -r -n1 dirname | sort -u)
    [ -n "$dirs" ] || { echo "install_check: $m: no GPU runtime found by ldd (nothing to hide)"; continue; }
    hide=$(for d in $dirs; do printf 'mount -t tmpfs none %q && ' "$d"; done)
    cat > "$prefix/hidden.sh" <<EOF
${hide}true || { echo "cannot-mount"; exit 0; }
set -e
cc -std=c11 -I"$prefix/include" -o "$prefix/probe_full" "$prefix/probe.c" -L"$lib" -lata -Wl,-rpath,"$lib"
echo "auto=\$("$prefix/probe_full" auto)"
echo "named=\$("$prefix/probe_full" "$api")"
EOF
    res=$(unshare -m --propagation private bash "$prefix/hidden.sh" 2>&1) || { echo "$res"; fail "hidden-runtime run"; }
    if [ "$res" = cannot-mount ] || echo "$res" | grep -qx cannot-mount; then
      echo "install_check: no mount in a private namespace here: GPU runtime not hidden (only the copy without $m checked)"
      continue
    fi
    echo "$res" | grep -qx "auto=backend cpu" || { echo "$res"; fail "$m with its runtime hidden: auto is not cpu"; }
    echo "$res" | grep -q "^named=error: backend unavailable: $api: $m does not load: " \
      || { echo "$res"; fail "$m with its runtime hidden: no clear message"; }
    echo "full install, GPU runtime hidden ($(echo $dirs)): $(echo "$res" | tr '\n' ' ')"
  else
    echo "install_check: unshare -m not permitted here: GPU runtime not hidden (only the copy without $m checked)"
  fi
done
echo "[  PASSED  ] 1 test(s)."
