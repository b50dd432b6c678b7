#!/usr/bin/env python3
"""cupy_anchor.py - CuPy (cupyx.scipy.sparse, cuSPARSE underneath) on the
same matrices as ata-bench: the second, independent anchor of
bench/gpu-check.sh beside ATA's `vendor` policy.

  cupy_anchor.py --csv RESULTS.csv --run TAG [--reps N] NAME=FILE.csr ...
  cupy_anchor.py --check-dump FILE.csr      (header and sizes only; no numpy)

FILE.csr comes from ata-csr-dump (bench/kit/csr_dump.c): the matrix exactly
as ATA builds it. Per matrix, appended to RESULTS.csv the moment it exists
(bench/gpu-check.sh's columns):

  sptrsv  L = tril(A), b = L * ones, x = spsolve_triangular(L, b, lower=True);
          CuPy has no separate analysis call, so each timed call includes
          cuSPARSE's analysis (ATA's and vendor's times do not). check =
          max |x - 1| / 1 beside ATA's check against its serial reference.
  pcg     cg(A, b = ones, x0 = 0, rtol 1e-6, maxit 2000), no preconditioner
          and Jacobi (CuPy has no GPU ILU0/IC0): compare with ATA's
          pcg --pc jacobi row, not with its ILU0 rows. Only for symmetric A.
  ilu0    none: cupyx.scipy.sparse.linalg has no GPU incomplete LU.

Times: median of --reps, each between device synchronisations, after one
untimed warm-up call.
"""
import argparse
import os
import struct
import sys
import time

MAGIC = b"ATACSR1\n"


def read_header(path):
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) != 20 or head[:8] != MAGIC:
        raise ValueError(f"{path}: not an ata-csr-dump file")
    n, m, nnz = struct.unpack("<3i", head[8:])
    want = 20 + 4 * (n + 1) + 4 * nnz + 8 * nnz
    have = os.path.getsize(path)
    if have != want:
        raise ValueError(f"{path}: {have} bytes, header says {want}")
    return n, m, nnz


def row(f, run, command, matrix, n, nnz, policy, ms, check, status, extra=""):
    ms_s = "" if ms is None else f"{ms:.6f}"
    ck_s = "" if check is None else f"{check:.3e}"
    extra = extra.replace(",", ";")
    f.write(f"{run},{command},{matrix},{n},{nnz},{policy},{ms_s},,,{ck_s},{status},{extra}\n")
    f.flush()
    print(f"  {command:7s} {matrix:24s} {policy:12s} {ms_s:>12s} ms  {ck_s:>10s}  {status}  {extra}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--run", default="gpu")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--check-dump")
    ap.add_argument("mats", nargs="*")
    a = ap.parse_args()
    if a.check_dump:
        n, m, nnz = read_header(a.check_dump)
        print(f"cupy_anchor: {a.check_dump}: {n} x {m}, {nnz} entries: format agrees with ata-csr-dump")
        return 0

    import inspect
    import numpy as np
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as csl

    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    print(f"cupy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
          f"device {props['name'].decode() if isinstance(props['name'], bytes) else props['name']}", flush=True)
    cg_params = inspect.signature(csl.cg).parameters
    tolkw = "rtol" if "rtol" in cg_params else "tol"

    def timed(fn):
        fn()
        dev.synchronize()
        ts = []
        out = None
        for _ in range(max(1, a.reps)):
            dev.synchronize()
            t0 = time.perf_counter()
            out = fn()
            dev.synchronize()
            ts.append(time.perf_counter() - t0)
        return sorted(ts)[len(ts) // 2] * 1e3, out

    f = open(a.csv, "a")
    rc = 0
    for spec in a.mats:
        name, path = spec.split("=", 1)
        try:
            n, m, nnz = read_header(path)
            off = 20
            rp = np.fromfile(path, dtype="<i4", count=n + 1, offset=off)
            off += 4 * (n + 1)
            ci = np.fromfile(path, dtype="<i4", count=nnz, offset=off)
            off += 4 * nnz
            va = np.fromfile(path, dtype="<f8", count=nnz, offset=off)
            A = csp.csr_matrix((cp.asarray(va), cp.asarray(ci), cp.asarray(rp)), shape=(n, m))
        except Exception as e:  # noqa: BLE001 - say what and go on
            row(f, a.run, "sptrsv", name, "", "", "cupy", None, None, "error", f"load: {e}")
            rc = 1
            continue
        # SpTS
        try:
            L = csp.tril(A).tocsr()
            L.sort_indices()
            b = L @ cp.ones(n)
            ms, x = timed(lambda: csl.spsolve_triangular(L, b, lower=True))
            err = float(cp.max(cp.abs(x - 1.0)))
            row(f, a.run, "sptrsv", name, n, int(L.nnz), "cupy", ms, err, "ok",
                "spsolve_triangular incl. analysis")
        except Exception as e:  # noqa: BLE001
            row(f, a.run, "sptrsv", name, n, nnz, "cupy", None, None, "error", str(e)[:200])
            rc = 1
        # CG, symmetric matrices only
        try:
            D = (A - A.T.tocsr()).tocsr() if n == m else None
            sym = D is not None and (D.nnz == 0 or float(cp.abs(D.data).max()) == 0.0)
        except Exception:  # noqa: BLE001
            sym = False
        if not sym:
            row(f, a.run, "pcg", name, n, nnz, "cupy-cg", None, None, "skipped", "A not symmetric")
            continue
        bb = cp.ones(n)
        dinv = 1.0 / A.diagonal()
        M = csl.LinearOperator((n, n), matvec=lambda v: dinv * v, dtype=cp.float64)
        for label, pre in (("cupy-cg", None), ("cupy-cg-jac", M)):
            try:
                its = [0]

                def cb(_xk):
                    its[0] += 1

                def solve():
                    its[0] = 0
                    return csl.cg(A, bb, maxiter=2000, M=pre, callback=cb, **{tolkw: 1e-6})

                ms, (x, info) = timed(solve)
                rel = float(cp.linalg.norm(bb - A @ x) / cp.linalg.norm(bb))
                row(f, a.run, "pcg", name, n, nnz, label, ms, rel, "ok" if info == 0 else f"info={info}",
                    f"{its[0]} iterations")
            except Exception as e:  # noqa: BLE001
                row(f, a.run, "pcg", name, n, nnz, label, None, None, "error", str(e)[:200])
                rc = 1
        del A
        cp.get_default_memory_pool().free_all_blocks()
    f.close()
    return rc


if __name__ == "__main__":
    sys.exit(main())
