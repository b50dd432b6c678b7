/* pcg.c - preconditioned conjugate gradient (Saad, Alg. 9.1) with ILU0 or
 * IC0. One iteration loop, over a small table of vector operations with two
 * providers: the serial reference (ctx == NULL) and a runtime backend, where
 * the preconditioner applies the L and U plans, so the policy chosen for the
 * triangular solves is the policy of the whole solver. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu_pool.h"
#include "dag.h"
#include "error.h"
#include "plan.h"
#include "reorder.h"

typedef struct pcg_ops pcg_ops;
struct pcg_ops {
    ata_status (*spmv)(pcg_ops *o, const double *x, double *y);
    ata_status (*dot)(pcg_ops *o, const double *x, const double *y, double *r);
    ata_status (*axpby)(pcg_ops *o, double a, const double *x, double b, double *y);
    ata_status (*spmv_dot)(pcg_ops *o, const double *x, double *y, double *xy);
    ata_status (*update)(pcg_ops *o, double a, const double *p, const double *q, double *x,
                         double *r, double *rr);
    ata_status (*precond)(pcg_ops *o, const double *r, double *z);
    ata_status (*alloc)(pcg_ops *o, double **v);
    void (*release)(pcg_ops *o, double *v);
    ata_status (*put)(pcg_ops *o, double *dst, const double *src);
    ata_status (*get)(pcg_ops *o, double *dst, const double *src);
    int n;
    const ata_csr *A;
    const ata_csr *L, *U;       /* reference: factors (L unit lower, U upper) */
    double *tmp;                /* between the two triangular solves */
    ata_context *ctx;           /* runtime */
    void *spmv_h;
    ata_plan *Lp, *Up;
};

const char *ata_precond_name(ata_precond p)
{
    return p == ATA_PC_ILU0 ? "ilu0" : p == ATA_PC_IC0 ? "ic0" : p == ATA_PC_NONE ? "none" : "unknown";
}

const char *ata_reorder_name(ata_reorder r)
{
    return r == ATA_REORDER_NONE ? "none" : r == ATA_REORDER_RCM ? "rcm" : r == ATA_REORDER_ND ? "nd" : "unknown";
}

ata_pcg_options ata_pcg_defaults(void)
{
    ata_pcg_options o;
    memset(&o, 0, sizeof o);
    o.rtol = 1e-6;
    o.atol = 0;
    o.maxit = 2000;
    o.precond = ATA_PC_ILU0;
    o.reorder = ATA_REORDER_NONE;
    o.plan = ata_plan_defaults();
    return o;
}

void ata_pcg_result_free(ata_pcg_result *res)
{
    if (!res) return;
    free(res->history);
    res->history = NULL;
    res->history_len = 0;
}

/* ---- serial reference provider ---------------------------------------- */
static ata_status ref_spmv(pcg_ops *o, const double *x, double *y) { ata_ref_spmv(o->A, x, y); return ATA_OK; }
static ata_status ref_dot(pcg_ops *o, const double *x, const double *y, double *r)
{
    double s = 0;
    for (int i = 0; i < o->n; i++) s += x[i] * y[i];
    *r = s;
    return ATA_OK;
}
static ata_status ref_axpby(pcg_ops *o, double a, const double *x, double b, double *y)
{
    if (b == 0) for (int i = 0; i < o->n; i++) y[i] = a * x[i];   /* y not read */
    else for (int i = 0; i < o->n; i++) y[i] = a * x[i] + b * y[i];
    return ATA_OK;
}
static ata_status ref_precond(pcg_ops *o, const double *r, double *z)
{
    if (!o->L) { memcpy(z, r, (size_t)o->n * sizeof *z); return ATA_OK; }
    ATA_TRY(ata_ref_sptrsv_csr(o->L, ATA_LOWER, o->U == o->L ? ATA_UNIT : ATA_NON_UNIT, r, o->tmp));
    return ata_ref_sptrsv_csr(o->U, ATA_UPPER, ATA_NON_UNIT, o->tmp, z);
}
static ata_status ref_alloc(pcg_ops *o, double **v)
{
    *v = calloc((size_t)o->n + 1, sizeof **v);
    return *v ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "pcg: out of memory (n = %d)", o->n);
}
static void ref_release(pcg_ops *o, double *v) { (void)o; free(v); }
static ata_status ref_copy(pcg_ops *o, double *dst, const double *src)
{
    memcpy(dst, src, (size_t)o->n * sizeof *dst);
    return ATA_OK;
}

/* Unfused forms, for the reference and for backends without the fusions. */
static ata_status plain_spmv_dot(pcg_ops *o, const double *x, double *y, double *xy)
{
    ATA_TRY(o->spmv(o, x, y));
    return o->dot(o, x, y, xy);
}
static ata_status plain_update(pcg_ops *o, double a, const double *p, const double *q, double *x,
                               double *r, double *rr)
{
    ATA_TRY(o->axpby(o, a, p, 1.0, x));
    ATA_TRY(o->axpby(o, -a, q, 1.0, r));
    return o->dot(o, r, r, rr);
}

/* ---- runtime provider --------------------------------------------------- */
static ata_status rt_spmv(pcg_ops *o, const double *x, double *y) { return o->ctx->ops->spmv(o->ctx, o->spmv_h, x, y); }
static ata_status rt_dot(pcg_ops *o, const double *x, const double *y, double *r)
{
    return o->ctx->ops->dot(o->ctx, (size_t)o->n, x, y, r);
}
static ata_status rt_axpby(pcg_ops *o, double a, const double *x, double b, double *y)
{
    return o->ctx->ops->axpby(o->ctx, (size_t)o->n, a, x, b, y);
}
static ata_status rt_spmv_dot(pcg_ops *o, const double *x, double *y, double *xy)
{
    return o->ctx->ops->spmv_dot(o->ctx, o->spmv_h, x, y, xy);
}
static ata_status rt_update(pcg_ops *o, double a, const double *p, const double *q, double *x,
                            double *r, double *rr)
{
    return o->ctx->ops->cg_update(o->ctx, (size_t)o->n, a, p, q, x, r, rr);
}
static ata_status rt_precond(pcg_ops *o, const double *r, double *z)
{
    if (!o->Lp) return o->ctx->ops->axpby(o->ctx, (size_t)o->n, 1.0, r, 0.0, z);
    ATA_TRY(o->ctx->ops->sptrsv(o->Lp, r, o->tmp));
    return o->ctx->ops->sptrsv(o->Up, o->tmp, z);
}
static ata_status rt_alloc(pcg_ops *o, double **v) { return o->ctx->ops->vec_alloc(o->ctx, (size_t)o->n, v); }
static void rt_release(pcg_ops *o, double *v) { if (v) o->ctx->ops->vec_free(o->ctx, v); }
static ata_status rt_put(pcg_ops *o, double *dst, const double *src) { return o->ctx->ops->vec_upload(o->ctx, dst, src, (size_t)o->n); }
static ata_status rt_get(pcg_ops *o, double *dst, const double *src) { return o->ctx->ops->vec_download(o->ctx, dst, src, (size_t)o->n); }

/* ---- the iteration ------------------------------------------------------ */
static void record(ata_pcg_result *res, int keep, int it, double rel)
{
    if (keep && res->history) res->history[it] = rel;
    if (keep) res->history_len = it + 1;
}

static ata_status pcg_iterate(pcg_ops *o, const double *b_host, double *x_host,
                              const ata_pcg_options *opt, ata_pcg_result *res)
{
    double *b = NULL, *x = NULL, *r = NULL, *z = NULL, *p = NULL, *q = NULL;
    ata_status st;
    if ((st = o->alloc(o, &b)) || (st = o->alloc(o, &x)) || (st = o->alloc(o, &r)) ||
        (st = o->alloc(o, &z)) || (st = o->alloc(o, &p)) || (st = o->alloc(o, &q)))
        goto out;
    if (opt->keep_history && !(res->history = malloc(((size_t)opt->maxit + 1) * sizeof *res->history))) {
        st = ata_fail(ATA_ERR_NOMEM, "pcg: out of memory for the residual history");
        goto out;
    }
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto out; } while (0)
    double bb, rr, rz, pq, rz_new;
    CHECK(o->put(o, b, b_host));
    if (opt->use_x0) CHECK(o->put(o, x, x_host));
    else CHECK(o->axpby(o, 0.0, b, 0.0, x));
    CHECK(o->dot(o, b, b, &bb));
    const double bnorm = sqrt(bb);
    if (!isfinite(bnorm)) { st = ata_fail(ATA_ERR_NONFINITE, "pcg: right-hand side has NaN/Inf"); goto out; }
    const double tol = fmax(opt->rtol * bnorm, opt->atol), scale = bnorm > 0 ? bnorm : 1;
    CHECK(o->spmv(o, x, r));                       /* r = b - A x */
    CHECK(o->axpby(o, 1.0, b, -1.0, r));
    CHECK(o->dot(o, r, r, &rr));
    if (!isfinite(rr)) { st = ata_fail(ATA_ERR_NONFINITE, "pcg: initial residual b - A x0 has NaN/Inf (x0 holds NaN/Inf, or A x0 overflows)"); goto out; }
    res->iterations = 0;
    res->relres = sqrt(rr) / scale;
    record(res, opt->keep_history, 0, res->relres);
    int it = 0, done = sqrt(rr) <= tol;
    if (!done) {
        CHECK(o->precond(o, r, z));
        CHECK(o->axpby(o, 1.0, z, 0.0, p));
        CHECK(o->dot(o, r, z, &rz));
        if (!isfinite(rz)) { st = ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration 0"); goto out; }
        if (rz <= 0) {
            st = ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration 0: the preconditioner is indefinite", rz);
            goto out;
        }
    }
    while (!done && it < opt->maxit) {
        it++;
        CHECK(o->spmv_dot(o, p, q, &pq));       /* q = A p, p'q */
        if (!isfinite(pq) || pq <= 0) {
            st = ata_fail(ATA_ERR_BREAKDOWN, "pcg: p'Ap = %g at iteration %d: %s", pq, it,
                          isfinite(pq) ? "non-positive curvature, A is not positive definite" : "NaN/Inf");
            goto out;
        }
        const double alpha = rz / pq;
        CHECK(o->update(o, alpha, p, q, x, r, &rr));   /* x += a p, r -= a q, r'r */
        res->iterations = it;
        res->relres = sqrt(rr) / scale;
        record(res, opt->keep_history, it, res->relres);
        if (!isfinite(rr)) { st = ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf residual at iteration %d", it); goto out; }
        if (sqrt(rr) <= tol) { done = 1; break; }
        CHECK(o->precond(o, r, z));
        CHECK(o->dot(o, r, z, &rz_new));
        if (!isfinite(rz_new)) { st = ata_fail(ATA_ERR_BREAKDOWN, "pcg: NaN/Inf in r'z at iteration %d", it); goto out; }
        if (rz_new <= 0) {
            st = ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: r'z = %g <= 0 at iteration %d: the preconditioner is indefinite",
                          rz_new, it);
            goto out;
        }
        CHECK(o->axpby(o, 1.0, z, rz_new / rz, p));   /* p = z + beta p */
        rz = rz_new;
    }
    /* Report the true residual, not the recurrence's. */
    CHECK(o->spmv(o, x, r));
    CHECK(o->axpby(o, 1.0, b, -1.0, r));
    CHECK(o->dot(o, r, r, &rr));
    res->relres = sqrt(rr) / scale;
    CHECK(o->get(o, x_host, x));
    if (!done)
        st = ata_fail(ATA_ERR_NOT_CONVERGED, "pcg: not converged in %d iterations (relative residual %.3e > rtol %g)",
                      opt->maxit, res->relres, opt->rtol);
#undef CHECK
out:
    o->release(o, b); o->release(o, x); o->release(o, r);
    o->release(o, z); o->release(o, p); o->release(o, q);
    return st;
}

/* ---- preconditioner set-up ---------------------------------------------- */

/* PETSc's DIVERGED_INDEFINITE_PC at the source: for an SPD A, a pivot
 * u_ii <= 0 makes the ILU0 preconditioner indefinite. */
static ata_status check_pivots(const ata_csr *LU, const char *pc)
{
    for (int i = 0; i < LU->nrows; i++)
        for (int q = LU->rowptr[i]; q < LU->rowptr[i + 1]; q++)
            if (LU->col[q] == i && !(LU->val[q] > 0))
                return ata_fail(ATA_ERR_INDEFINITE_PC, "pcg: %s pivot u_%d,%d = %g <= 0: the preconditioner is "
                                "indefinite (is A symmetric positive definite?)", pc, i, i, LU->val[q]);
    return ATA_OK;
}

/* IC0 from ILU0 on a symmetric A: U = D L^T, so C = L D^{1/2} gives A ~ C C^T.
 * Returns C (lower, with diagonal) and Ct = C^T as CSR. */
static ata_status ic0_from_ilu0(const ata_csr *LU, ata_csr **C_out, ata_csr **Ct_out)
{
    ata_csr *C;
    ATA_TRY(ata_csr_tril(LU, &C));
    const int n = C->nrows;
    double *d = malloc(((size_t)n + 1) * sizeof *d);
    if (!d) { ata_csr_free(C); return ata_fail(ATA_ERR_NOMEM, "ic0: out of memory"); }
    for (int i = 0; i < n; i++) d[i] = sqrt(C->val[C->rowptr[i + 1] - 1]);   /* diagonal is last */
    for (int i = 0; i < n; i++)
        for (int q = C->rowptr[i]; q < C->rowptr[i + 1] - 1; q++) C->val[q] *= d[C->col[q]];
    for (int i = 0; i < n; i++) C->val[C->rowptr[i + 1] - 1] = d[i];
    free(d);
    ata_status st = ata_csr_transpose(C, Ct_out);
    if (st != ATA_OK) { ata_csr_free(C); return st; }
    *C_out = C;
    return ATA_OK;
}

static ata_status validate(const ata_csr *A, const double *b, double *x, const ata_pcg_options *o)
{
    if (!A || !b || !x) return ata_fail(ATA_ERR_ARG, "pcg: NULL argument");
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "pcg: matrix is %d x %d", A->nrows, A->ncols);
    if (A->nrows == 0) return ata_fail(ATA_ERR_EMPTY, "pcg: empty matrix");
    if (!(o->rtol >= 0) || !(o->atol >= 0)) return ata_fail(ATA_ERR_ARG, "pcg: rtol and atol must be >= 0");
    if (o->maxit < 0) return ata_fail(ATA_ERR_ARG, "pcg: maxit = %d", o->maxit);
    if ((unsigned)o->precond > ATA_PC_NONE) return ata_fail(ATA_ERR_ARG, "pcg: unknown preconditioner");
    if ((unsigned)o->reorder > ATA_REORDER_ND) return ata_fail(ATA_ERR_ARG, "pcg: unknown reordering");
    return ATA_OK;
}

/* ILU0 of A, through the runtime or the reference; factor time (and the
 * runtime's analysis) recorded. The pivots are checked for an SPD solve. */
static ata_status factor(pcg_ops *o, const ata_csr *A, const ata_pcg_options *opt,
                         ata_pcg_result *res, ata_csr **LU_out)
{
    ata_csr *LU = NULL;
    ata_status st;
    ATA_TRY(ata_csr_copy(A, &LU));
    double t0 = clock_now();
    if (!o->ctx) {
        st = ata_ref_ilu0(LU);
    } else {
        ata_plan_options po = opt->plan;
        po.uplo = ATA_LOWER; po.diag = ATA_NON_UNIT; po.traversal = ATA_PULL;
        ata_plan *fp = NULL;
        st = plan_analyse(o->ctx, LU, PLAN_ILU0, &po, &fp);   /* owns LU */
        LU = NULL;
        if (st != ATA_OK) return st;
        res->analysis_s += fp->info.analysis_s;
        t0 = clock_now();
        st = o->ctx->ops->ilu0(fp);
        if (st == ATA_OK) st = o->ctx->ops->ilu0_values(fp, fp->T->val);
        LU = fp->T;
        fp->T = NULL;
        plan_free(fp);
    }
    res->factor_s = clock_now() - t0;
    if (st != ATA_OK && opt->precond == ATA_PC_IC0) { char m[512] = ""; strncat(m, ata_last_error(), sizeof m - 1); st = ata_fail(st, "pcg: IC0 (from ILU0 of symmetric A): %s", m); }
    if (st == ATA_OK) st = check_pivots(LU, opt->precond == ATA_PC_IC0 ? "IC0" : "ILU0");
    if (st != ATA_OK) { ata_csr_free(LU); return st; }
    *LU_out = LU;
    return ATA_OK;
}

/* The preconditioner from the factors: reference solves on L and U, or the
 * runtime's L and U plans. IC0 turns LU into C and C^T. The matrices the
 * reference needs are handed back in *keep / *keep2 for the caller to free. */
static ata_status make_precond(pcg_ops *o, ata_csr *LU, const ata_pcg_options *opt,
                               ata_pcg_result *res, ata_csr **keep, ata_csr **keep2)
{
    ata_csr *C = NULL, *Ct = NULL;
    if (opt->precond == ATA_PC_IC0) ATA_TRY(ic0_from_ilu0(LU, &C, &Ct));
    const ata_csr *Lm = C ? C : LU, *Um = C ? Ct : LU;
    *keep = C;
    *keep2 = Ct;
    if (!o->ctx) {
        o->L = Lm;      /* o->U == o->L tells ref_precond: unit-diagonal L */
        o->U = Um;
        return ATA_OK;
    }
    ata_plan_options lo = opt->plan, uo = opt->plan;
    lo.uplo = ATA_LOWER; lo.diag = C ? ATA_NON_UNIT : ATA_UNIT;
    uo.uplo = ATA_UPPER; uo.diag = ATA_NON_UNIT;
    ATA_TRY(ata_sptrsv_plan_create(o->ctx, Lm, &lo, &o->Lp));
    ATA_TRY(ata_sptrsv_plan_create(o->ctx, Um, &uo, &o->Up));
    ata_plan_get_info(o->Lp, &res->L_info);
    ata_plan_get_info(o->Up, &res->U_info);
    res->analysis_s += res->L_info.analysis_s + res->U_info.analysis_s;
    return ATA_OK;
}

/* perm[old] = new: L's level sets, in order (the "level-order layout").
 * Relabelling A, the factors, b and x by it leaves M = LU the same operator,
 * so PCG does the same arithmetic up to rounding, but the L solve then runs
 * in index order and, for a symmetric pattern, the U solve in contiguous
 * level blocks: b and x are streamed instead of gathered row by row (the
 * gather was the CPU solves' top cost). L' stays lower and U' upper
 * triangular because a level order is topological for L and, reversed,
 * for U when the pattern is symmetric. */
static ata_status level_order(const ata_csr *LU, int **perm_out)
{
    dag d;
    ATA_TRY(dag_build(LU->nrows, LU->rowptr, LU->col, 1, ATA_LOWER, &d));
    int *perm = malloc(((size_t)LU->nrows + 1) * sizeof *perm);
    if (!perm) { dag_free(&d); return ata_fail(ATA_ERR_NOMEM, "pcg: out of memory"); }
    for (int k = 0; k < LU->nrows; k++) perm[d.level_rows[k]] = k;
    dag_free(&d);
    *perm_out = perm;
    return ATA_OK;
}

/* *M = P M P^T (the old *M is freed). */
static ata_status relabel(ata_csr **M, const int *perm)
{
    ata_csr *P;
    ATA_TRY(ata_csr_permute_sym(*M, perm, &P));
    ata_csr_free(*M);
    *M = P;
    return ATA_OK;
}

ata_status ata_pcg(ata_context *ctx, const ata_csr *A_in, const double *b_in, double *x_out,
                   const ata_pcg_options *opt_in, ata_pcg_result *res)
{
    ata_pcg_options opt = opt_in ? *opt_in : ata_pcg_defaults();
    ata_pcg_result dummy;
    if (!res) res = &dummy;
    memset(res, 0, sizeof *res);
    res->relres = NAN;      /* until a residual is computed: never "0, converged" */
    ATA_TRY(validate(A_in, b_in, x_out, &opt));
    const int n = A_in->nrows;
    ata_csr *A = NULL, *LU = NULL, *keep = NULL, *keep2 = NULL;
    int *total = NULL, *perm = NULL;        /* total[old] = new, NULL: identity */
    double *pb = NULL, *px = NULL;
    ata_status st;
    pcg_ops o;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.ctx = ctx;
    double t0 = clock_now();
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto out; } while (0)
    CHECK(ata_csr_copy(A_in, &A));
    if (opt.reorder != ATA_REORDER_NONE) {
        /* The user's ordering changes the factorisation (that is its point). */
        CHECK(reorder_perm(A, opt.reorder, &total));
        CHECK(relabel(&A, total));
    }
    res->analysis_s = clock_now() - t0;
    if (opt.precond != ATA_PC_NONE) CHECK(factor(&o, A, &opt, res, &LU));
    if (ctx && LU && ata_csr_is_symmetric(A)) {
        /* The level-order layout changes no arithmetic of the factorisation. */
        double t1 = clock_now();
        CHECK(level_order(LU, &perm));
        CHECK(relabel(&A, perm));
        CHECK(relabel(&LU, perm));
        if (total) for (int i = 0; i < n; i++) total[i] = perm[total[i]];
        else { total = perm; perm = NULL; }
        res->analysis_s += clock_now() - t1;
    }
    if (LU) CHECK(make_precond(&o, LU, &opt, res, &keep, &keep2));
    o.A = A;
    if (ctx) {
        o.spmv = rt_spmv; o.dot = rt_dot; o.axpby = rt_axpby; o.precond = rt_precond;
        o.alloc = rt_alloc; o.release = rt_release; o.put = rt_put; o.get = rt_get;
        o.spmv_dot = ctx->ops->spmv_dot ? rt_spmv_dot : plain_spmv_dot;
        o.update = ctx->ops->cg_update ? rt_update : plain_update;
        CHECK(ctx->ops->spmv_create(ctx, A, &o.spmv_h));
    } else {
        o.spmv = ref_spmv; o.dot = ref_dot; o.axpby = ref_axpby; o.precond = ref_precond;
        o.alloc = ref_alloc; o.release = ref_release; o.put = ref_copy; o.get = ref_copy;
        o.spmv_dot = plain_spmv_dot;
        o.update = plain_update;
    }
    CHECK(o.alloc(&o, &o.tmp));
    const double *b = b_in;
    double *x = x_out;
    if (total) {    /* solve (P A P^T)(P x) = P b, map x back: invisible to the caller */
        pb = malloc((size_t)n * sizeof *pb);
        px = malloc((size_t)n * sizeof *px);
        if (!pb || !px) { st = ata_fail(ATA_ERR_NOMEM, "pcg: out of memory"); goto out; }
        for (int i = 0; i < n; i++) { pb[total[i]] = b_in[i]; px[total[i]] = x_out[i]; }
        b = pb;
        x = px;
    }
    double t2 = clock_now();
    st = pcg_iterate(&o, b, x, &opt, res);
    res->solve_s = clock_now() - t2;
    if (total) for (int i = 0; i < n; i++) x_out[i] = px[total[i]];
#undef CHECK
out:
    res->status = st;
    if (o.tmp) o.release(&o, o.tmp);
    if (o.spmv_h) ctx->ops->spmv_destroy(ctx, o.spmv_h);
    ata_plan_destroy(o.Lp);
    ata_plan_destroy(o.Up);
    ata_csr_free(A); ata_csr_free(LU); ata_csr_free(keep); ata_csr_free(keep2);
    free(total); free(perm); free(pb); free(px);
    if (res == &dummy) ata_pcg_result_free(&dummy);
    return st;
}
