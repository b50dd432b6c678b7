/* plan.c - analysis shared by every kind of plan and backend: DAG, S
 * (Eq. 5.1/5.2), aggregation, dependency state, then the backend's upload. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu/cpu_pool.h"
#include "dag.h"
#include "error.h"
#include "ilu0_row.h"
#include "plan.h"
#include "policy.h"
#include "probe.h"
#include "mem.h"

ata_plan_options ata_plan_defaults(void)
{
    ata_plan_options o = { ATA_POLICY_CA, 0, 100.0, ATA_LOWER, ATA_NON_UNIT, ATA_PULL };
    return o;
}

uint32_t plan_next_epoch(ata_plan *p)
{
    if (p->epoch == UINT32_MAX) {       /* wrap: forget every old epoch */
        memset(p->done, 0, (size_t)p->n * sizeof *p->done);
        p->epoch = 0;
    }
    return ++p->epoch;
}

/* The plan's part of T: all of it, the values only, or nothing. */
static void free_T(ata_csr *T, int borrowed)
{
    if (!T || borrowed == PLAN_T_BORROWED) return;
    if (borrowed == PLAN_T_OWNED) { ata_csr_free(T); return; }
    free(T->val);
    free(T);
}

void plan_free(ata_plan *p)
{
    if (!p) return;
    if (p->ctx && p->ctx->ops) {
        p->ctx->ops->plan_release(p);
        if (p->vb) p->ctx->ops->vec_free(p->ctx, p->vb);
        if (p->vx) p->ctx->ops->vec_free(p->ctx, p->vx);
    }
    free_T(p->T, p->T_borrowed);
    agg_free(&p->sched);
    free(p->diag);
    free(p->done);
    free(p->indeg);
    free(p->pending);
    free(p);
}

void ata_plan_destroy(ata_plan *plan) { plan_free(plan); }

ata_status ata_plan_get_info(const ata_plan *plan, ata_plan_info *info)
{
    if (!plan || !info) return ata_fail(ATA_ERR_ARG, "plan info: NULL argument");
    *info = plan->info;
    return ATA_OK;
}

/* Eq. 5.1 and 5.2: S = max(S_min, R * T_l / T_u). */
static ata_status choose_S(ata_plan *p, int *S)
{
    ata_context *ctx = p->ctx;
    if (p->opt.S > 0) { *S = p->opt.S; return ATA_OK; }
    /* levelset, syncfree, greedy (the capacity) and vendor never read S: no
     * probes (they are timed runs, and a pass over the pattern for the
     * cache's key: 30 ms of a PCG setup at lap3d:100). */
    const unsigned fl = policy_get(p->opt.policy)->flags;
    if (fl & POLICY_BLOCKS) { *S = POLICY_CHAIN_CAP; return ATA_OK; }
    if (!(fl & POLICY_USES_S)) { *S = 1; return ATA_OK; }
    double T_l, T_u;        /* medians of several probes, cached per machine (probe.h) */
    ATA_TRY(probe_costs(p, &T_l, &T_u));
    double s = ceil(p->opt.R * T_l / T_u);
    if (s < ctx->S_min) s = ctx->S_min;
    if (s > p->n) s = p->n;
    *S = s < 1 ? 1 : (int)s;
    return ATA_OK;
}

static ata_status init_dependency_state(ata_plan *p, int preds, ata_uplo uplo)
{
    const int n = p->n;
    if (preds) {
        p->done = mem_calloc((size_t)n + 1, sizeof *p->done);
        return p->done ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    }
    p->indeg = mem_calloc((size_t)n + 1, sizeof *p->indeg);
    p->pending = mem_calloc((size_t)n + 1, sizeof *p->pending);
    if (!p->indeg || !p->pending) return ata_fail(ATA_ERR_NOMEM, "plan: out of memory (n = %d)", n);
    const ata_csr *C = p->T;
    for (int j = 0; j < n; j++)
        for (int q = C->rowptr[j]; q < C->rowptr[j + 1]; q++)
            if (dag_is_edge(uplo, 0, j, C->col[q])) p->indeg[C->col[q]]++;
    return ATA_OK;
}

static ata_status analyse(ata_context *ctx, ata_csr *T, ata_csr *Tu, int borrowed, int kind,
                          const ata_plan_options *opt, const dag *known, const ata_plan *like, ata_plan **out)
{
    double t0 = clock_now();
    const policy_desc *pd = policy_get(opt->policy);
    /* (a backend that schedules nothing runs no policy: any known one will do) */
    ata_status bad = !pd ? ata_fail(ATA_ERR_ARG, "plan: unknown policy %d", (int)opt->policy)
                   : ctx->ops->caps & BACKEND_NO_SCHEDULE ? ATA_OK : policy_check_backend(pd, ctx->backend);
    if (bad != ATA_OK) { free_T(T, borrowed); return bad; }
    ata_plan *p = calloc(1, sizeof *p);
    if (!p) { free_T(T, borrowed); return ata_fail(ATA_ERR_NOMEM, "plan: out of memory"); }
    p->ctx = ctx;
    p->kind = kind;
    p->opt = *opt;
    p->n = T->nrows;
    p->T = T;
    p->Tu = Tu;
    p->T_borrowed = borrowed;
    const int preds = kind == PLAN_ILU0 || opt->traversal == ATA_PULL;
    const ata_uplo uplo = kind == PLAN_ILU0 ? ATA_LOWER : opt->uplo;
    dag d = { 0 };
    ata_status st = ATA_OK;
    int S = 1;
    if (kind == PLAN_ILU0 && !Tu) {
        p->diag = mem_alloc(((size_t)p->n + 1) * sizeof *p->diag);
        if (!p->diag) { st = ata_fail(ATA_ERR_NOMEM, "plan: out of memory"); goto fail; }
        if ((st = ilu0_find_diag(T, p->diag)) != ATA_OK) goto fail;
    }
    const dag *dp = known ? known : &d;
    /* A backend that schedules nothing (the serial reference) gets the
     * matrix only: no DAG, S, aggregation or dependency state. */
    const int unscheduled = (ctx->ops->caps & BACKEND_NO_SCHEDULE) != 0;
    if (unscheduled) goto upload;
    if (!known && (st = dag_build(p->n, T->rowptr, T->col, preds, uplo, &d)) != ATA_OK) goto fail;
    if ((st = choose_S(p, &S)) != ATA_OK) goto fail;
    /* vendor keeps a syncfree schedule only for the statistics. */
    ata_policy pol = opt->policy == ATA_POLICY_VENDOR ? ATA_POLICY_SYNCFREE : opt->policy;
    /* like: the ILU0 plan on split factors, whose T is this pull lower
     * plan's T (factor.c); its schedule is this one's where policy and S
     * agree. */
    if (like && like->kind == PLAN_ILU0 && like->Tu && kind == PLAN_SPTRSV && like->T == T &&
        opt->traversal == ATA_PULL && opt->uplo == ATA_LOWER && like->opt.policy == opt->policy &&
        like->sched.S_in == S && like->ctx == ctx) {
        if ((st = agg_copy(&like->sched, p->n, &p->sched)) != ATA_OK) goto fail;
    } else if ((st = agg_build(dp, T->rowptr, T->col, preds, uplo, pol, S, ctx->capacity, &p->sched)) != ATA_OK) {
        goto fail;
    }
    if ((st = init_dependency_state(p, preds, uplo)) != ATA_OK) goto fail;

    ata_plan_info *in = &p->info;
    in->n = p->n;
    in->nnz = T->nnz + (Tu ? Tu->nnz : 0);
    in->levels = dp->nlevels;
    in->max_width = dp->max_width;
    in->m = dp->m;
    in->dag_class = dag_class_name(dp->dag_class);
    in->S = p->sched.S;
    in->atasks = p->sched.natasks;
    in->untracked = p->sched.untracked;
    in->barriers = p->sched.barriers;
    in->c = p->sched.c;
    in->f = p->sched.f;
    in->policy = opt->policy;
    in->traversal = kind == PLAN_ILU0 ? ATA_PULL : opt->traversal;
    in->plan_bytes = sizeof(int) * ((size_t)p->n                    /* order */
                                    + (size_t)p->sched.natasks + 1    /* atask_ptr */
                                    + (p->done ? (size_t)p->n : 0)
                                    + (p->indeg ? 2 * (size_t)p->n : 0)
                                    + (p->diag ? (size_t)p->n : 0)
                                    + (size_t)p->sched.nruns + 1)
                     + (size_t)p->sched.natasks;                       /* flags */
    /* (the backend's plan_upload adds what it keeps: cpu_exec_layout) */
    in->matrix_bytes = sizeof(int) * ((size_t)p->n + 1 + (size_t)T->nnz) + sizeof(double) * (size_t)T->nnz;
    if (Tu) in->matrix_bytes += sizeof(int) * ((size_t)p->n + 1 + (size_t)Tu->nnz) + sizeof(double) * (size_t)Tu->nnz;
    p->nlevels = dp->nlevels;
    dag_free(&d);
upload:
    if (unscheduled) {
        p->info.n = p->n;
        p->info.nnz = T->nnz + (Tu ? Tu->nnz : 0);
        p->info.policy = opt->policy;
        p->info.traversal = kind == PLAN_ILU0 ? ATA_PULL : opt->traversal;
        p->info.dag_class = "none (not scheduled)";
    }
    if ((st = ctx->ops->plan_upload(p)) != ATA_OK) goto fail;
    if (!(ctx->ops->caps & BACKEND_HOST_VECTORS) && kind == PLAN_SPTRSV) {
        if ((st = ctx->ops->vec_alloc(ctx, (size_t)p->n, &p->vb)) != ATA_OK) goto fail;
        if ((st = ctx->ops->vec_alloc(ctx, (size_t)p->n, &p->vx)) != ATA_OK) goto fail;
    }
    p->info.analysis_s = clock_now() - t0;
    *out = p;
    return ATA_OK;
fail:
    dag_free(&d);
    plan_free(p);
    return st;
}

ata_status plan_analyse(ata_context *ctx, ata_csr *T, int borrowed, int kind,
                        const ata_plan_options *opt, const dag *known, const ata_plan *like,
                        ata_plan **out)
{
    return analyse(ctx, T, NULL, borrowed, kind, opt, known, like, out);
}

ata_status plan_analyse_ilu0_split(ata_context *ctx, ata_csr *L, ata_csr *U, const ata_plan_options *opt,
                                   const dag *known, ata_plan **out)
{
    if (!(ctx->ops->caps & BACKEND_FACTOR_SPLIT))
        return ata_fail(ATA_ERR_INTERNAL, "ilu0: the %s backend does not factor split triangles", ctx->ops->name);
    return analyse(ctx, L, U, PLAN_T_BORROWED, PLAN_ILU0, opt, known, NULL, out);
}
