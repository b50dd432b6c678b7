/* pcg.c - the Krylov solver behind the ata_pcg_* API (named for its first
 * method): setup (reordering, level-order layout, factors, the operator),
 * the frame of a solve (b and x put, the initial residual, the method's
 * iteration, the true residual, x got back) and the public entry points.
 * The iterations are CG (cg.c; Saad, Alg. 9.1, with ILU0, IC0 or Jacobi),
 * BiCGStab (bicgstab.c) and GMRES(m) (gmres.c), all over the Krylov
 * operations of a backend (krylov_ops.h; ctx == NULL: the serial
 * reference's, ref_backend.h), where the preconditioner applies the L and
 * U plans, so the policy chosen for the triangular solves is the policy of
 * the whole solver. Setup is done once by ata_pcg_setup; ata_pcg_solve
 * runs the iteration; ata_pcg_update_values refactors on new values;
 * ata_pcg is the three in one call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "context.h"
#include "csr.h"
#include "dag.h"
#include "error.h"
#include "factor.h"
#include "krylov_methods.h"
#include "krylov_ops.h"
#include "ref_backend.h"
#include "reorder.h"
#include "mem.h"

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
    o.shift = ATA_SHIFT_NONE;
    o.dtol = 1e5;
    o.method = ATA_KSP_CG;
    o.restart = 30;
    o.precision = ATA_PRECISION_DOUBLE;
    return o;
}

void ata_pcg_result_free(ata_pcg_result *res)
{
    if (!res) return;
    free(res->history);
    res->history = NULL;
    res->history_len = 0;
}

struct ata_pcg_solver {
    ata_context *ctx;
    ata_pcg_options opt;
    int n, nnz;             /* of the setup matrix */
    ata_csr *A;             /* the operator, in solve order; the factors' input */
    int *total;             /* total[old] = new; NULL: identity */
    int *amap;              /* A->val[q] = val[amap[q]] for the caller's values:
                               made at the first update_values; NULL: identity */
    factor_core *pc;        /* NULL: no preconditioner */
    krylov_ops ops;
    double **v;             /* b, x, r, then the method's work vectors: backend vectors */
    int nv;
    double *pb, *px;        /* caller's b and x in solve order (GPU: host staging;
                               on the host they go straight into v[0], v[1]) */
    double analysis_s, factor_s;
    int valid;              /* factors usable (the last update succeeded) */
};

/* ---- the frame of a solve ------------------------------------------------- */
int krylov_work_vectors(const ata_pcg_options *opt)
{
    return opt->method == ATA_KSP_BICGSTAB ? 7 : opt->method == ATA_KSP_GMRES ? opt->restart + 2 : 3;
}

void krylov_record(krylov_state *k, int it, double rnorm)
{
    ata_pcg_result *res = k->res;
    const ata_pcg_options *opt = k->opt;
    res->iterations = it;
    res->relres = rnorm / k->scale;
    if (opt->keep_history && res->history) res->history[it] = res->relres;
    if (opt->keep_history) res->history_len = it + 1;
    if (opt->monitor) opt->monitor(it, res->relres, opt->monitor_ctx);
}

ata_status krylov_check_dtol(const krylov_state *k, int it, double rnorm, const char *hint)
{
    if (!(k->opt->dtol > 0 && rnorm > k->opt->dtol * k->rnorm0)) return ATA_OK;
    return ata_fail(ATA_ERR_DIVERGED, "%s: diverged at iteration %d: residual %.3e > dtol %g x initial "
                    "residual %.3e (%s)", k->who, it, rnorm, k->opt->dtol, k->rnorm0, hint);
}

static ata_status krylov_solve(ata_pcg_solver *s, const double *b_host, double *x_host,
                               const ata_pcg_options *opt, ata_pcg_result *res)
{
    krylov_ops *o = &s->ops;
    double *b = s->v[0], *x = s->v[1], *r = s->v[2];
    const char *who = opt->method == ATA_KSP_CG ? "pcg" : ata_ksp_name(opt->method);
    ata_status st;
    if (opt->keep_history && !(res->history = mem_alloc(((size_t)opt->maxit + 1) * sizeof *res->history)))
        return ata_fail(ATA_ERR_NOMEM, "%s: out of memory for the residual history", who);
    if (opt->method == ATA_KSP_CG && o->ctx->ops->cg_start) {     /* the GPU: CG on the device */
        st = cg_device_solve(o, s->v, b_host, x_host, opt, res);
        if (st != ATA_ERR_UNSUPPORTED) return st;
        ata_clear_error();
    }
#define CHECK(e) do { if ((st = (e)) != ATA_OK) return st; } while (0)
    double bb, rr;
    CHECK(krylov_put(o, b, b_host));
    if (opt->use_x0) CHECK(krylov_put(o, x, x_host));
    else CHECK(krylov_axpby(o, 0.0, b, 0.0, x));
    CHECK(krylov_dot(o, b, b, &bb));
    const double bnorm = sqrt(bb);
    if (!isfinite(bnorm)) return ata_fail(ATA_ERR_NONFINITE, "%s: right-hand side has NaN/Inf", who);
    krylov_state k = { o, opt, res, b, x, r, s->v + 3, fmax(opt->rtol * bnorm, opt->atol), bnorm > 0 ? bnorm : 1,
                       0, who };
    CHECK(krylov_spmv(o, x, r));                       /* r = b - A x */
    CHECK(krylov_axpby(o, 1.0, b, -1.0, r));
    CHECK(krylov_dot(o, r, r, &rr));
    if (!isfinite(rr))
        return ata_fail(ATA_ERR_NONFINITE, "%s: initial residual b - A x0 has NaN/Inf (x0 holds NaN/Inf, or A x0 "
                        "overflows)", who);
    k.rnorm0 = sqrt(rr);
    krylov_record(&k, 0, sqrt(rr));
    int done = sqrt(rr) <= k.tol;
    if (!done) {
        st = opt->method == ATA_KSP_CG ? cg_iterate(&k, &done)
           : opt->method == ATA_KSP_BICGSTAB ? bicgstab_iterate(&k, &done) : gmres_iterate(&k, &done);
        if (st != ATA_OK) return st;
    }
    /* Report the true residual, not the recurrence's. */
    CHECK(krylov_spmv(o, x, r));
    CHECK(krylov_axpby(o, 1.0, b, -1.0, r));
    CHECK(krylov_dot(o, r, r, &rr));
    res->relres = sqrt(rr) / k.scale;
    CHECK(krylov_get(o, x_host, x));
    if (!done)
        return ata_fail(ATA_ERR_NOT_CONVERGED, "%s: not converged in %d iterations (relative residual %.3e > rtol %g)",
                        who, opt->maxit, res->relres, opt->rtol);
#undef CHECK
    return ATA_OK;
}

/* ---- setup -------------------------------------------------------------- */
static ata_status check_options(const ata_pcg_options *o)
{
    if (!(o->rtol >= 0) || !(o->atol >= 0)) return ata_fail(ATA_ERR_ARG, "pcg: rtol and atol must be >= 0");
    if (o->maxit < 0) return ata_fail(ATA_ERR_ARG, "pcg: maxit = %d", o->maxit);
    if (!(o->dtol >= 0)) return ata_fail(ATA_ERR_ARG, "pcg: dtol = %g (expected >= 0, 0: off)", o->dtol);
    if ((unsigned)o->precond > ATA_PC_JACOBI) return ata_fail(ATA_ERR_ARG, "pcg: unknown preconditioner");
    if ((unsigned)o->reorder > ATA_REORDER_ND) return ata_fail(ATA_ERR_ARG, "pcg: unknown reordering");
    if ((unsigned)o->shift > ATA_SHIFT_POSITIVE_DEFINITE) return ata_fail(ATA_ERR_ARG, "pcg: unknown shift type");
    if ((unsigned)o->method > ATA_KSP_GMRES) return ata_fail(ATA_ERR_ARG, "krylov: unknown method %d", (int)o->method);
    if (o->method == ATA_KSP_GMRES && (o->restart < 1 || o->restart > 1000))
        return ata_fail(ATA_ERR_ARG, "gmres: restart = %d (expected 1..1000; default 30)", o->restart);
    if ((unsigned)o->precision > ATA_PRECISION_MIXED)
        return ata_fail(ATA_ERR_ARG, "pcg: unknown precision %d (expected double or mixed)", (int)o->precision);
    if (o->precision == ATA_PRECISION_MIXED && o->precond != ATA_PC_ILU0)
        return ata_fail(ATA_ERR_UNSUPPORTED, "pcg: precision mixed (float factors) is built for the ILU0 "
                        "preconditioner only, not %s; use precision double", ata_precond_name(o->precond));
    return ATA_OK;
}

static ata_status check_matrix(const ata_csr *A)
{
    if (!A) return ata_fail(ATA_ERR_ARG, "pcg: NULL argument");
    if (A->nrows != A->ncols) return ata_fail(ATA_ERR_NOT_SQUARE, "pcg: matrix is %d x %d", A->nrows, A->ncols);
    if (A->nrows == 0) return ata_fail(ATA_ERR_EMPTY, "pcg: empty matrix");
    return csr_check_structure(A, "pcg");   /* sorted rows: the relabelling's maps rely on them */
}

void ata_pcg_destroy(ata_pcg_solver *s)
{
    if (!s) return;
    for (int k = 0; s->v && k < s->nv; k++) krylov_free(&s->ops, s->v[k]);
    free(s->v);
    krylov_fini(&s->ops);
    factor_core_free(s->pc);
    ata_csr_free(s->A);
    free(s->total);
    free(s->amap);
    free(s->pb);
    free(s->px);
    free(s);
}

/* The level-order layout: A is relabelled into L's level order (perm[old]
 * = new; after the user's reordering, if any) before it is factored. The
 * L solve then runs in index order and, for a symmetric pattern, the U
 * solve in contiguous level blocks: b and x are streamed instead of
 * gathered row by row (the gather was the CPU solves' top cost), and the
 * factorisation visits each level as one block of rows. L' stays lower and
 * U' upper triangular because a level order is topological for L and,
 * reversed, for U when the pattern is symmetric. The factors are those of
 * the relabelled A: the same updates of every entry as the factors of A,
 * summed in the new order of a row's predecessors (bitwise equal where that
 * order does not change, as for a grid in natural order). */
static ata_status level_perm(const ata_csr *A, int **perm_out, dag *d)
{
    ATA_TRY(dag_build(A->nrows, A->rowptr, A->col, 1, ATA_LOWER, d));
    int *perm = mem_alloc(((size_t)A->nrows + 1) * sizeof *perm);
    if (!perm) { dag_free(d); return ata_fail(ATA_ERR_NOMEM, "pcg: out of memory"); }
    for (int k = 0; k < A->nrows; k++) perm[d->level_rows[k]] = k;
    dag_to_level_order(d);      /* the relabelled A's: the factor's plans take it */
    *perm_out = perm;
    return ATA_OK;
}

/* total: the user's reordering (may be NULL) followed by the level order of
 * the matrix it gives; d: the lower DAG of A relabelled by total. */
static ata_status layout_perm(ata_pcg_solver *s, const ata_csr *A_in, dag *d)
{
    int *lp = NULL;
    if (!s->total) return level_perm(A_in, &s->total, d);
    ata_csr view = *A_in, *R;
    view.val = NULL;            /* the pattern is enough for the levels */
    ATA_TRY(csr_permute_part(&view, s->total, CSR_ALL, s->ctx->pool, &R, NULL));
    ata_status st = level_perm(R, &lp, d);
    ata_csr_free(R);
    if (st != ATA_OK) return st;
    for (int i = 0; i < s->n; i++) s->total[i] = lp[s->total[i]];
    free(lp);
    return ATA_OK;
}

/* Where each of A's values sits in the caller's array: A permuted back to
 * the caller's order (its pattern, rows sorted: checked at setup) gives,
 * for each of the caller's entries r, A's entry map[r]. */
static ata_status caller_map(ata_pcg_solver *s)
{
    const int n = s->n;
    int *inv = mem_alloc(((size_t)n + 1) * sizeof *inv), *back = NULL;
    if (!inv) return ata_fail(ATA_ERR_NOMEM, "pcg update: out of memory");
    for (int i = 0; i < n; i++) inv[s->total[i]] = i;
    ata_csr view = *s->A, *B = NULL;
    view.val = NULL;
    ata_status st = csr_permute_part(&view, inv, CSR_ALL, s->ctx->pool, &B, &back);
    free(inv);
    ata_csr_free(B);
    if (st != ATA_OK) return st;
    int *amap = mem_alloc(((size_t)s->nnz + 1) * sizeof *amap);
    if (!amap) { free(back); return ata_fail(ATA_ERR_NOMEM, "pcg update: out of memory"); }
    for (int r = 0; r < s->nnz; r++) amap[back[r]] = r;
    free(back);
    s->amap = amap;
    return ATA_OK;
}

/* Setup; the times of what was done are left in res even on failure. */
static ata_status pcg_setup(ata_context *ctx, const ata_csr *A_in, const ata_pcg_options *opt,
                            ata_pcg_solver **out, ata_pcg_result *res)
{
    *out = NULL;
    ATA_TRY(check_matrix(A_in));
    ATA_TRY(check_options(opt));
    ata_pcg_solver *s = calloc(1, sizeof *s);
    if (!s) return ata_fail(ATA_ERR_NOMEM, "pcg: out of memory");
    ata_context *const user_ctx = ctx;   /* NULL: the factor says it is the serial reference's */
    ctx = ref_backend_or(ctx);      /* NULL: the serial reference, a backend too */
    s->ctx = ctx;
    s->opt = *opt;
    s->n = A_in->nrows;
    s->nnz = A_in->nnz;
    ata_status st;
    double t0 = clock_now();
    dag lower = { 0 };          /* the relabelled A's lower DAG, if made */
    int known = 0;
#define CHECK(e) do { if ((st = (e)) != ATA_OK) goto fail; } while (0)
    /* A (the operator, and what is factored): A_in, or A_in relabelled by
     * the user's reordering (that changes the factorisation: that is its
     * point) and the level order of the layout, in one permutation. */
    if (opt->reorder != ATA_REORDER_NONE) CHECK(reorder_perm(A_in, opt->reorder, &s->total));
    /* The level order is the schedules' layout: not for a backend that
     * schedules nothing (it would change the reference's factors). */
    const int schedules = !(ctx->ops->caps & BACKEND_NO_SCHEDULE);
    if (schedules && opt->precond != ATA_PC_NONE && opt->precond != ATA_PC_JACOBI && ata_csr_is_symmetric(A_in)) {
        CHECK(layout_perm(s, A_in, &lower));
        known = 1;
    }
    if (s->total) CHECK(csr_permute_part(A_in, s->total, CSR_ALL, ctx->pool, &s->A, NULL));
    else CHECK(ata_csr_copy(A_in, &s->A));
    s->analysis_s = res->analysis_s = clock_now() - t0;
    if (opt->precond != ATA_PC_NONE) {
        ata_factor_options fo = ata_factor_defaults();
        fo.type = opt->precond;
        fo.shift = opt->shift;
        fo.shift_amount = opt->shift_amount;
        fo.plan = opt->plan;
        fo.precision = opt->precision;
        /* s->A outlives s->pc */
        const factor_hints h = { .borrow_pattern = 1, .lower = known ? &lower : NULL, .in_krylov = 1 };
        /* CG needs positive pivots (an SPD preconditioner), and so does IC0
         * whatever the method (its C = L D^{1/2} takes their square roots);
         * ILU0 and Jacobi under BiCGStab or GMRES do not */
        st = factor_core_setup(user_ctx, s->A, &fo, opt->method == ATA_KSP_CG || opt->precond == ATA_PC_IC0, &h,
                               &s->pc);
        if (s->pc) {
            s->analysis_s += s->pc->analysis_s;
            s->factor_s = s->pc->factor_s;
            res->analysis_s = s->analysis_s;
            res->factor_s = s->factor_s;
            res->shift = s->pc->shift;
            res->shift_retries = s->pc->retries;
        }
        if (st != ATA_OK) goto fail;
    }
    dag_free(&lower);
    CHECK(krylov_init(&s->ops, ctx, s->A, s->pc));
    s->nv = 3 + krylov_work_vectors(opt);
    if (!(s->v = calloc((size_t)s->nv, sizeof *s->v))) CHECK(ata_fail(ATA_ERR_NOMEM, "pcg: out of memory"));
    for (int k = 0; k < s->nv; k++) CHECK(krylov_alloc(&s->ops, &s->v[k]));
    if (s->total && !(ctx->ops->caps & BACKEND_HOST_VECTORS)) {
        s->pb = mem_alloc((size_t)s->n * sizeof *s->pb);
        s->px = mem_alloc((size_t)s->n * sizeof *s->px);
        if (!s->pb || !s->px) { st = ata_fail(ATA_ERR_NOMEM, "pcg: out of memory"); goto fail; }
    }
#undef CHECK
    res->analysis_s = s->analysis_s;
    s->valid = 1;
    *out = s;
    return ATA_OK;
fail:
    dag_free(&lower);
    ata_pcg_destroy(s);
    return st;
}

ata_status ata_pcg_setup(ata_context *ctx, const ata_csr *A, const ata_pcg_options *opt, ata_pcg_solver **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "pcg setup: NULL output");
    ata_pcg_options o = opt ? *opt : ata_pcg_defaults();
    ata_pcg_result res;
    memset(&res, 0, sizeof res);
    return pcg_setup(ctx, A, &o, out, &res);
}

ata_status ata_pcg_set_tolerances(ata_pcg_solver *s, double rtol, double atol, int maxit)
{
    if (!s) return ata_fail(ATA_ERR_ARG, "pcg: NULL solver");
    if (!(rtol >= 0) || !(atol >= 0) || maxit < 0)
        return ata_fail(ATA_ERR_ARG, "pcg: rtol = %g, atol = %g, maxit = %d (expected >= 0)", rtol, atol, maxit);
    s->opt.rtol = rtol;
    s->opt.atol = atol;
    s->opt.maxit = maxit;
    return ATA_OK;
}

ata_status ata_pcg_update_values(ata_pcg_solver *s, const double *val)
{
    if (!s || !val) return ata_fail(ATA_ERR_ARG, "pcg update: NULL argument");
    s->valid = 0;
    if (s->total && !s->amap) ATA_TRY(caller_map(s));
    if (s->amap) for (int q = 0; q < s->nnz; q++) s->A->val[q] = val[s->amap[q]];
    else memcpy(s->A->val, val, (size_t)s->nnz * sizeof *val);
    if (s->pc) {
        ata_status st = factor_core_update(s->pc, s->A->val);
        s->factor_s = s->pc->factor_s;
        if (st != ATA_OK) return st;
    }
    ATA_TRY(krylov_refresh(&s->ops));
    s->valid = 1;
    return ATA_OK;
}

ata_status ata_pcg_solve(ata_pcg_solver *s, const double *b_in, double *x_out, ata_pcg_result *res)
{
    ata_pcg_result dummy;
    if (!res) res = &dummy;
    memset(res, 0, sizeof *res);
    res->relres = NAN;      /* until a residual is computed: never "0, converged" */
    ata_status st;
    if (!s || !b_in || !x_out) st = ata_fail(ATA_ERR_ARG, "pcg: NULL argument");
    else if (!s->valid) st = ata_fail(ATA_ERR_ZERO_PIVOT, "pcg: the last update_values failed; no preconditioner to solve with");
    else {
        res->analysis_s = s->analysis_s;
        res->factor_s = s->factor_s;
        if (s->pc) {
            res->shift = s->pc->shift;
            res->shift_retries = s->pc->retries;
            /* (the serial reference's plans are its own, unscheduled: no
             * plan statistics, as before it was a backend) */
            if (s->pc->Lp && !s->pc->serial) ata_plan_get_info(s->pc->Lp, &res->L_info);
            if (s->pc->Up && !s->pc->serial) ata_plan_get_info(s->pc->Up, &res->U_info);
        }
        const double *b = b_in;
        double *x = x_out;
        const int n = s->n;
        /* solve (P A P^T)(P x) = P b, map x back: invisible to the caller.
         * Host vectors take P b and P x in place (krylov_put/get then move
         * nothing); a GPU's go through pb, px. */
        double *pb = s->pb ? s->pb : s->v[0], *px = s->px ? s->px : s->v[1];
        if (s->total) {
            for (int i = 0; i < n; i++) { pb[s->total[i]] = b_in[i]; px[s->total[i]] = x_out[i]; }
            b = pb;
            x = px;
        }
        krylov_ops *o = &s->ops;
        o->t_L = o->t_U = o->t_spmv = o->t_vec = 0;
        double t0 = clock_now();
        st = krylov_solve(s, b, x, &s->opt, res);
        res->solve_s = clock_now() - t0;
        res->L_solve_s = o->t_L;
        res->U_solve_s = o->t_U;
        res->spmv_s = o->t_spmv;
        res->vec_s = o->t_vec;
        /* x as krylov_solve left it for the caller: on success or "not
         * converged" (else the caller's x0 stays, as without a relabelling) */
        if (s->total && (s->px || st == ATA_OK || st == ATA_ERR_NOT_CONVERGED))
            for (int i = 0; i < n; i++) x_out[i] = px[s->total[i]];
    }
    res->status = st;
    if (res == &dummy) ata_pcg_result_free(&dummy);
    return st;
}

ata_status ata_pcg(ata_context *ctx, const ata_csr *A, const double *b, double *x,
                   const ata_pcg_options *opt_in, ata_pcg_result *res)
{
    ata_pcg_options opt = opt_in ? *opt_in : ata_pcg_defaults();
    ata_pcg_result dummy;
    if (!res) res = &dummy;
    memset(res, 0, sizeof *res);
    res->relres = NAN;
    ata_pcg_solver *s = NULL;
    ata_status st = ATA_OK;
    if (!b || !x) st = ata_fail(ATA_ERR_ARG, "pcg: NULL argument");
    if (st == ATA_OK) st = pcg_setup(ctx, A, &opt, &s, res);
    if (st != ATA_OK) {
        res->status = st;
        return st;
    }
    st = ata_pcg_solve(s, b, x, res);
    ata_pcg_destroy(s);
    if (res == &dummy) ata_pcg_result_free(&dummy);
    return st;
}

void ata_pcg_plans(const ata_pcg_solver *s, const ata_plan **L, const ata_plan **U)
{
    if (L) *L = s && s->pc ? s->pc->Lp : NULL;
    if (U) *U = s && s->pc ? s->pc->Up : NULL;
}
