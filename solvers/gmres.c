/* gmres.c - restarted GMRES(m) (Saad and Schultz 1986; Saad, Alg. 6.9)
 * with right preconditioning: the Krylov space is that of A M^{-1}, the
 * least-squares residual it minimises is the unpreconditioned b - A x, and
 * x += M^{-1} V y at the end of each cycle. Orthogonalisation is classical
 * Gram-Schmidt, one pass (all dots against the new vector first, then the
 * updates), and a cycle restarts from the true residual: PETSc's KSPGMRES
 * defaults, so the two count iterations alike (one per Arnoldi step; the
 * residual of a step is the estimate |g_{j+1}| of the Givens QR). The small
 * Hessenberg problem stays on the host. */
#include <math.h>
#include <stdlib.h>
#include "error.h"
#include "krylov_methods.h"
#include "mem.h"

#define GMRES_HAPTOL 1e-30      /* PETSc's default (KSPGMRESSetHapTol) */
/* At a restart the true residual must agree with the recursion's estimate
 * to within this fraction of the residual the cycle started from, or the
 * Arnoldi basis has lost orthogonality and the estimates mean nothing:
 * PETSc's DIVERGED_BREAKDOWN (its breakdowntol, 0.1), so the verdicts match. */
#define GMRES_BREAKDOWNTOL 0.1

/* Solve the j x j upper triangular R y = g (R column-major, leading m + 1). */
static void back_solve(const double *R, int ld, const double *g, int j, double *y)
{
    for (int i = j - 1; i >= 0; i--) {
        double s = g[i];
        for (int c = i + 1; c < j; c++) s -= R[(size_t)c * ld + i] * y[c];
        y[i] = s / R[(size_t)i * ld + i];
    }
}

ata_status gmres_iterate(krylov_state *k, int *converged)
{
    krylov_ops *o = k->o;
    const int m = k->opt->restart, ld = m + 1;
    double **V = k->w, *z = k->w[m + 1], *x = k->x, *r = k->r, *b = k->b;
    /* R: the Hessenberg matrix's columns as the rotations leave them. */
    double *R = mem_alloc(((size_t)ld * m + 4 * (size_t)ld) * sizeof *R);
    if (!R) return ata_fail(ATA_ERR_NOMEM, "gmres: out of memory for a restart of %d", m);
    double *cs = R + (size_t)ld * m, *sn = cs + ld, *g = sn + ld, *y = g + ld;
    ata_status st = ATA_OK;
    int it = 0, cycle = 0;
    double rr, beta0 = 0, est = 0;   /* the last cycle's start; its recursion's last residual */
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto out; } while (0)
    *converged = 0;
    for (;;) {
        CHECK(krylov_dot(o, r, r, &rr));
        const double beta = sqrt(rr);
        if (!isfinite(beta)) { st = ata_fail(ATA_ERR_BREAKDOWN, "gmres: NaN/Inf residual at restart %d", cycle); goto out; }
        if (cycle && est > 0 && fabs(beta - est) > GMRES_BREAKDOWNTOL * beta0) {
            st = ata_fail(ATA_ERR_BREAKDOWN, "gmres: breakdown at restart %d (iteration %d): the true residual %.3e "
                          "is far from the recursion's %.3e (the cycle started at %.3e): the Krylov basis lost its "
                          "orthogonality (A M^-1 singular, or too ill-conditioned for this restart length)", cycle, it, beta,
                          est, beta0);
            goto out;
        }
        beta0 = beta;
        if (beta <= k->tol) {       /* (a restart's true residual) */
            if (cycle) krylov_record(k, it, beta);
            *converged = 1;
            goto out;
        }
        if (it >= k->opt->maxit) goto out;
        CHECK(krylov_axpby(o, 1.0 / beta, r, 0.0, V[0]));
        g[0] = beta;
        int j = 0, stop = 0, happy = 0;
        ata_status dtol = ATA_OK;
        while (j < m && it < k->opt->maxit && !stop) {
            double *w = V[j + 1], *h = R + (size_t)j * ld;
            CHECK(krylov_precond(o, V[j], z));
            CHECK(krylov_spmv(o, z, w));                 /* w = A M^{-1} v_j */
            for (int i = 0; i <= j; i++) CHECK(krylov_dot(o, w, V[i], &h[i]));
            for (int i = 0; i <= j; i++) CHECK(krylov_axpby(o, -h[i], V[i], 1.0, w));
            double ww;
            CHECK(krylov_dot(o, w, w, &ww));
            const double hn = sqrt(ww);
            for (int i = 0; i < j; i++) {                 /* the earlier rotations */
                const double t = cs[i] * h[i] + sn[i] * h[i + 1];
                h[i + 1] = -sn[i] * h[i] + cs[i] * h[i + 1];
                h[i] = t;
            }
            const double den = hypot(h[j], hn);          /* this one zeroes hn */
            cs[j] = den > 0 ? h[j] / den : 1;
            sn[j] = den > 0 ? hn / den : 0;
            h[j] = den;
            g[j + 1] = -sn[j] * g[j];
            g[j] = cs[j] * g[j];
            it++;
            j++;
            const double rnorm = fabs(g[j]);
            krylov_record(k, it, rnorm);
            if (!isfinite(rnorm) || !isfinite(den)) {
                st = ata_fail(ATA_ERR_BREAKDOWN, "gmres: NaN/Inf in the Arnoldi step at iteration %d", it);
                goto out;
            }
            if (den == 0) {
                st = ata_fail(ATA_ERR_BREAKDOWN, "gmres: breakdown at iteration %d: A M^-1 v = 0 (A or the "
                              "preconditioner is singular)", it);
                goto out;
            }
            if (rnorm <= k->tol) { *converged = 1; stop = 1; break; }
            /* diverged: the cycle's update is still applied (as PETSc's
             * solution is built after its loop), then the failure */
            if ((dtol = krylov_check_dtol(k, it, rnorm, "a poor preconditioner, or A nearly singular?")) != ATA_OK) {
                stop = 1;
                break;
            }
            /* The Krylov space is exhausted (PETSc's happy breakdown, haptol
             * 1e-30) without a small residual: A M^{-1} is singular on it.
             * PETSc's DIVERGED_BREAKDOWN, after this cycle's update. */
            if (hn < GMRES_HAPTOL) { happy = 1; stop = 1; break; }
            CHECK(krylov_axpby(o, 1.0 / hn, w, 0.0, w));
        }
        /* x += M^{-1} V y, y the least-squares solution of this cycle */
        back_solve(R, ld, g, j, y);
        CHECK(krylov_axpby(o, y[0], V[0], 0.0, r));
        for (int i = 1; i < j; i++) CHECK(krylov_axpby(o, y[i], V[i], 1.0, r));
        CHECK(krylov_precond(o, r, z));
        CHECK(krylov_axpby(o, 1.0, z, 1.0, x));
        if (dtol != ATA_OK) { st = dtol; goto out; }
        if (happy && !*converged) {
            st = ata_fail(ATA_ERR_BREAKDOWN, "gmres: breakdown at iteration %d: the Krylov space is exhausted "
                          "(||A M^-1 v|| < %g after orthogonalisation) with the residual at %.3e of ||b||: A or the "
                          "preconditioner is singular", it, GMRES_HAPTOL, fabs(g[j]) / k->scale);
            goto out;
        }
        if (*converged || it >= k->opt->maxit) goto out;
        est = fabs(g[j]);
        CHECK(krylov_spmv(o, x, r));                     /* restart from the true residual */
        CHECK(krylov_axpby(o, 1.0, b, -1.0, r));
        cycle++;
    }
out:
#undef CHECK
    free(R);
    return st;
}
