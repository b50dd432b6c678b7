/* bicgstab.c - BiCGStab (van der Vorst 1992; Saad, Alg. 7.7) with right
 * preconditioning: the iteration runs on A M^{-1}, x is kept in the
 * original space (x += alpha M^{-1} p + omega M^{-1} s), so the residual it
 * carries is the unpreconditioned b - A x. The steps, their order and the
 * breakdown tests follow PETSc's KSPBCGS (src/ksp/ksp/impls/bcgs), so the
 * two count iterations alike: one per full step, convergence tested on
 * ||r|| after it (t = 0 with s = 0 ends the solve early, as there). */
#include <math.h>
#include "error.h"
#include "krylov_methods.h"

ata_status bicgstab_iterate(krylov_state *k, int *converged)
{
    krylov_ops *o = k->o;
    double *x = k->x, *r = k->r;
    double *rhat = k->w[0], *p = k->w[1], *v = k->w[2], *s = k->w[3], *t = k->w[4], *phat = k->w[5],
           *shat = k->w[6];
    double rho_old = 1, alpha = 1, omega_old = 1, rho, d, ts, tt, rr;
    ata_status st;
#define CHECK(e) do { if ((st = (e)) != ATA_OK) return st; } while (0)
    *converged = 0;
    CHECK(krylov_axpby(o, 1.0, r, 0.0, rhat));      /* the shadow residual: r0 */
    CHECK(krylov_axpby(o, 0.0, r, 0.0, p));
    CHECK(krylov_axpby(o, 0.0, r, 0.0, v));
    for (int it = 1; it <= k->opt->maxit; it++) {
        CHECK(krylov_dot(o, r, rhat, &rho));
        if (!isfinite(rho)) return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: NaN/Inf in (r, r0) at iteration %d", it);
        if (rho == 0)
            return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: breakdown at iteration %d: (r, r0) = 0, the residual is "
                            "orthogonal to the shadow residual (GMRES does not break down this way)", it);
        const double beta = (rho / rho_old) * (alpha / omega_old);
        CHECK(krylov_axpby(o, -omega_old, v, 1.0, p));   /* p = r + beta (p - omega v) */
        CHECK(krylov_axpby(o, 1.0, r, beta, p));
        CHECK(krylov_precond(o, p, phat));
        CHECK(krylov_spmv(o, phat, v));                  /* v = A M^{-1} p */
        CHECK(krylov_dot(o, v, rhat, &d));
        if (!isfinite(d) || d == 0)
            return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: breakdown at iteration %d: (A M^-1 p, r0) = %g", it, d);
        alpha = rho / d;
        CHECK(krylov_axpby(o, 1.0, r, 0.0, s));          /* s = r - alpha v */
        CHECK(krylov_axpby(o, -alpha, v, 1.0, s));
        CHECK(krylov_precond(o, s, shat));
        CHECK(krylov_spmv(o, shat, t));                  /* t = A M^{-1} s */
        CHECK(krylov_dot(o, t, s, &ts));
        CHECK(krylov_dot(o, t, t, &tt));
        if (!isfinite(ts) || !isfinite(tt))
            return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: NaN/Inf in (t, s) or (t, t) at iteration %d", it);
        if (tt == 0) {      /* t = 0: if s = 0 too, x + alpha M^{-1} p solves it */
            double ss;
            CHECK(krylov_dot(o, s, s, &ss));
            if (ss != 0)
                return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: breakdown at iteration %d: A M^-1 s = 0 with s != 0 "
                                "(A or the preconditioner is singular)", it);
            CHECK(krylov_axpby(o, alpha, phat, 1.0, x));
            krylov_record(k, it, 0.0);
            *converged = 1;
            return ATA_OK;
        }
        const double omega = ts / tt;
        CHECK(krylov_axpby(o, alpha, phat, 1.0, x));     /* x += alpha M^-1 p + omega M^-1 s */
        CHECK(krylov_axpby(o, omega, shat, 1.0, x));
        CHECK(krylov_axpby(o, 1.0, s, 0.0, r));          /* r = s - omega t */
        CHECK(krylov_axpby(o, -omega, t, 1.0, r));
        CHECK(krylov_dot(o, r, r, &rr));
        krylov_record(k, it, sqrt(rr));
        if (!isfinite(rr)) return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: NaN/Inf residual at iteration %d", it);
        if (sqrt(rr) <= k->tol) { *converged = 1; return ATA_OK; }
        CHECK(krylov_check_dtol(k, it, sqrt(rr), "a poor preconditioner, or A nearly singular?"));
        if (omega == 0)
            return ata_fail(ATA_ERR_BREAKDOWN, "bicgstab: breakdown at iteration %d: omega = 0 (t orthogonal to s)", it);
        rho_old = rho;
        omega_old = omega;
    }
#undef CHECK
    return ATA_OK;
}
