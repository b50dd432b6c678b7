/* cg_device.c - CG on a backend that keeps it on the device (backend.h's
 * cg_* ops: PCG on the GPU). The device runs the iterations and stops
 * where CG stops; this file reads back every few iterations the records of
 * those it ran (p'Ap, r'r, r'z each) and replays on them exactly the checks
 * of krylov_solve and cg_iterate, so the iterations, the residual history,
 * the monitor's calls (late, a batch at a time) and every message are the
 * host loop's. The first batch is 8 iterations; the next ones as many as
 * the residual's last decay says are left to the tolerance (plus two), but
 * never more than the iterations done so far, 4 to 64: a batch that CG
 * ends early costs the launches of the rest, kernels that return at once;
 * so those no-op iterations stay below the iterations run (below half the
 * launches) and are usually a few. ATA_GPU_CG_VERBOSE=1 prints them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "clock.h"
#include "context.h"
#include "error.h"
#include "krylov_methods.h"
#include "factor.h"

#define BATCH_MIN 4
#define BATCH_MAX 64

/* Iterations to the tolerance at the rate of the last batch (its first
 * and last residuals), plus two, at most `done`: the next batch's size. */
static int next_batch(double r_first, double r_last, int ran, double tol, int done)
{
    double k = done;
    if (r_first > 0 && r_last > 0 && ran >= 1 && r_last < r_first) {
        const double rate = log(r_last / r_first) / ran;    /* < 0 */
        const double left = ceil(log(tol / r_last) / rate) + 2;
        if (left < k) k = left;
    }
    return k < BATCH_MIN ? BATCH_MIN : k > BATCH_MAX ? BATCH_MAX : (int)k;
}

ata_status cg_device_solve(krylov_ops *o, double **v, const double *b_host, double *x_host,
                           const ata_pcg_options *opt, ata_pcg_result *res)
{
    const ata_backend_ops *ops = o->ctx->ops;
    factor_core *pc = o->pc;
    if (!ops->cg_start || opt->method != ATA_KSP_CG || (pc && !pc->valid))
        return ata_fail(ATA_ERR_UNSUPPORTED, "pcg: no device loop here");
    backend_cg *cg = o->dev_cg;
    if (!cg) {
        if (!(cg = calloc(1, sizeof *cg))) return ata_fail(ATA_ERR_NOMEM, "pcg: out of memory");
        o->dev_cg = cg;
    }
    cg->spmv_h = o->spmv_h;
    cg->L = pc ? pc->Lp : NULL;
    cg->U = pc ? pc->Up : NULL;
    cg->tmp = pc ? pc->tmp : NULL;
    cg->b = v[0]; cg->x = v[1]; cg->r = v[2]; cg->z = v[3]; cg->p = v[4]; cg->q = v[5];
    cg->n = o->n;
    cg->rtol = opt->rtol;
    cg->atol = opt->atol;
    cg->dtol = opt->dtol;
    const double t0 = clock_now();
    ata_status st = ops->cg_start(o->ctx, cg, b_host, opt->use_x0 ? x_host : NULL);
    if (st != ATA_OK) return st;
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto out; } while (0)
    backend_cg_batch bt;
    backend_cg_rec rec[BATCH_MAX];
    int k = opt->maxit < 2 * BATCH_MIN ? opt->maxit : 2 * BATCH_MIN, batches = 1, noop = 0, launched = k;
    CHECK(ops->cg_steps(o->ctx, cg, k, &bt, rec));
    const double bnorm = sqrt(bt.bb);
    if (!isfinite(bnorm)) CHECK(ata_fail(ATA_ERR_NONFINITE, "pcg: right-hand side has NaN/Inf"));
    krylov_state ks = { o, opt, res, v[0], v[1], v[2], v + 3, fmax(opt->rtol * bnorm, opt->atol),
                        bnorm > 0 ? bnorm : 1, 0, "pcg" };
    if (!isfinite(bt.rr0))
        CHECK(ata_fail(ATA_ERR_NONFINITE, "pcg: initial residual b - A x has NaN/Inf (x0 holds NaN/Inf, or A x0 "
                       "overflows)"));
    ks.rnorm0 = sqrt(bt.rr0);
    krylov_record(&ks, 0, ks.rnorm0);
    int done = ks.rnorm0 <= ks.tol, it = 0;
    if (!done) {
        /* cg_iterate's checks, on the device's records */
        if (!isfinite(bt.rz0)) CHECK(ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration 0"));
        if (bt.rz0 <= 0)
            CHECK(ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration 0: the preconditioner is "
                           "indefinite (try the shift option, CLI --shift positive-definite)", bt.rz0));
        double r_first = ks.rnorm0, r_last = ks.rnorm0;
        for (int m = 0;;) {
            if (m == bt.ran) {
                if (bt.stopped)
                    CHECK(ata_fail(ATA_ERR_INTERNAL, "pcg: the device stopped at iteration %d, where CG goes on", it));
                if (it >= opt->maxit) break;
                k = next_batch(r_first, r_last, bt.ran, ks.tol, it);
                if (k > opt->maxit - it) k = opt->maxit - it;
                r_first = r_last;
                CHECK(ops->cg_steps(o->ctx, cg, k, &bt, rec));
                batches++;
                launched += k;
                m = 0;
                continue;
            }
            const backend_cg_rec *R = &rec[m++];
            it++;
            if (!isfinite(R->pq) || R->pq <= 0)
                CHECK(ata_fail(ATA_ERR_BREAKDOWN, "pcg: p'Ap = %g at iteration %d: %s", R->pq, it,
                               isfinite(R->pq) ? "non-positive curvature, A is not positive definite" : "NaN/Inf"));
            krylov_record(&ks, it, sqrt(R->rr));
            r_last = sqrt(R->rr);
            if (!isfinite(R->rr)) CHECK(ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf residual at iteration %d", it));
            if (sqrt(R->rr) <= ks.tol) { done = 1; break; }
            CHECK(krylov_check_dtol(&ks, it, sqrt(R->rr), "recurrence residual; A not SPD, or a poor preconditioner?"));
            if (!isfinite(R->rz)) CHECK(ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration %d", it));
            if (R->rz <= 0)
                CHECK(ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration %d: the preconditioner is "
                               "indefinite (try the shift option, CLI --shift positive-definite)", R->rz, it));
        }
        noop = launched - it;
    } else if (!bt.stopped) {
        CHECK(ata_fail(ATA_ERR_INTERNAL, "pcg: the device went on where CG had converged at iteration 0"));
    }
    double rr;
    CHECK(ops->cg_finish(o->ctx, cg, x_host, &rr));     /* the true residual, and x */
    res->relres = sqrt(rr) / ks.scale;
    if (getenv("ATA_GPU_CG_VERBOSE") && atoi(getenv("ATA_GPU_CG_VERBOSE")))
        fprintf(stderr, "pcg on the device: %d iterations in %d batches (host reads), %d launched after CG "
                "stopped (no-ops)\n", it, batches, noop > 0 ? noop : 0);
    if (!done)
        st = ata_fail(ATA_ERR_NOT_CONVERGED, "pcg: not converged in %d iterations (relative residual %.3e > rtol %g)",
                      opt->maxit, res->relres, opt->rtol);
#undef CHECK
out:
    /* the phases run interleaved on the device: all of it counts as the
     * preconditioner's L solve, where most of it goes */
    o->t_L += clock_now() - t0;
    return st;
}
