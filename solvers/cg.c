/* cg.c - preconditioned conjugate gradient (Saad, Alg. 9.1) for SPD A, on
 * the Krylov operations of a backend (krylov_ops.h). The fused forms
 * (q = A p with p'q; x += a p, r -= a q with r'r) save passes over memory
 * where the backend has them. */
#include <math.h>
#include "error.h"
#include "krylov_methods.h"

ata_status cg_iterate(krylov_state *k, int *converged)
{
    krylov_ops *o = k->o;
    const ata_pcg_options *opt = k->opt;
    double *x = k->x, *r = k->r, *z = k->w[0], *p = k->w[1], *q = k->w[2];
    double rr, rz, pq, rz_new;
    ata_status st;
#define CHECK(e) do { if ((st = (e)) != ATA_OK) return st; } while (0)
    *converged = 0;
    CHECK(krylov_precond(o, r, z));
    CHECK(krylov_axpby(o, 1.0, z, 0.0, p));
    CHECK(krylov_dot(o, r, z, &rz));
    if (!isfinite(rz)) return ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration 0");
    if (rz <= 0)
        return ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration 0: the preconditioner is "
                        "indefinite (try the shift option, CLI --shift positive-definite)", rz);
    for (int it = 1; it <= opt->maxit; it++) {
        CHECK(krylov_spmv_dot(o, p, q, &pq));       /* q = A p, p'q */
        if (!isfinite(pq) || pq <= 0)
            return ata_fail(ATA_ERR_BREAKDOWN, "pcg: p'Ap = %g at iteration %d: %s", pq, it,
                            isfinite(pq) ? "non-positive curvature, A is not positive definite" : "NaN/Inf");
        const double alpha = rz / pq;
        CHECK(krylov_cg_update(o, alpha, p, q, x, r, &rr));   /* x += a p, r -= a q, r'r */
        krylov_record(k, it, sqrt(rr));
        if (!isfinite(rr)) return ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf residual at iteration %d", it);
        if (sqrt(rr) <= k->tol) { *converged = 1; return ATA_OK; }
        CHECK(krylov_check_dtol(k, it, sqrt(rr), "recurrence residual; A not SPD, or a poor preconditioner?"));
        CHECK(krylov_precond(o, r, z));
        CHECK(krylov_dot(o, r, z, &rz_new));
        if (!isfinite(rz_new)) return ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration %d", it);
        if (rz_new <= 0)
            return ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration %d: the preconditioner is "
                            "indefinite (try the shift option, CLI --shift positive-definite)", rz_new, it);
        CHECK(krylov_axpby(o, 1.0, z, rz_new / rz, p));   /* p = z + beta p */
        rz = rz_new;
    }
#undef CHECK
    return ATA_OK;
}
