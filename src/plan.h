/* plan.h - an analysed problem: the plan's copy of the matrix, its schedule
 * (SET order, adaptive tasks, flags) and the per-solve dependency state.
 *
 * Matrix copy, by kind and traversal:
 *   PLAN_SPTRSV, pull: CSR of the triangle. Non-unit: the diagonal is the
 *     last entry of a lower row / first of an upper row. Unit: no diagonal.
 *   PLAN_SPTRSV, push: CSC of the triangle (ata_csr of T^T), diagonal first
 *     in a lower column / last in an upper one; none if unit.
 *   PLAN_ILU0: CSR of the whole A (sorted), `diag` gives each row's diagonal;
 *     or (split, CPU backend) T the strictly lower part and Tu the diagonal
 *     and upper part, diagonal first: the L and U solve plans' own
 *     triangles, factored in place (plan_analyse_ilu0_split).
 * The CPU backend's plan_upload moves a solve plan to SET-position space
 * (row k of T is row order[k], columns and flags by position; see
 * cpu_exec_layout); other backends keep T as above.
 * Dependency state: pull keeps `done[i] == epoch` once row i is final, so no
 * reset between solves; push keeps `pending` (reset from `indeg` every solve)
 * and accumulates in x itself: x_i starts at b_i, every finished predecessor
 * column subtracts its contribution atomically, the owner then divides. */
#ifndef ATA_PLAN_H
#define ATA_PLAN_H
#include <stdint.h>
#include "ata.h"
#include "agg.h"
#include "context.h"
#include "dag.h"

enum { PLAN_SPTRSV = 0, PLAN_ILU0 = 1 };
/* What of T the plan owns (T_borrowed). */
enum { PLAN_T_OWNED = 0, PLAN_T_PATTERN = 1, PLAN_T_BORROWED = 2 };

struct ata_plan {
    ata_context *ctx;
    int kind;
    ata_plan_options opt;
    int n;
    ata_csr *T;             /* see above */
    int T_borrowed;         /* PLAN_T_*: PATTERN, T's rowptr and col are the
                               caller's; BORROWED, all of T (and Tu) */
    ata_csr *Tu;            /* split PLAN_ILU0: U's part (see above), borrowed */
    int *diag;              /* PLAN_ILU0: position of each row's diagonal */
    agg_result sched;       /* order, atask_ptr, flags */
    int nlevels;
    /* pull */
    uint32_t *done;
    uint32_t epoch;
    /* push */
    int *indeg;
    int *pending;
    double *vb, *vx;        /* GPU: device staging of ata_sptrsv's host b and x */
    ata_plan_info info;
    void *dev;              /* the backend's private part: its device copy of
                               all the above (GPU: gpu_plan, src/gpu/), or its
                               layout and buffers (CPU: cpu_plan, src/cpu/) */
};

/* Shared analysis for both kinds (called by the public plan constructors).
 * known: T's DAG if the caller has it (borrowed; NULL: built here).
 * borrowed (PLAN_T_*): the plan owns T; or only T->val and the struct (T's
 * rowptr and col stay the caller's, alive and unchanged while the plan is);
 * or nothing of T (the caller keeps all of it alive; a CPU layout that
 * needs its own copy of T makes one and owns that). like (may be NULL): a
 * plan on the same DAG and pattern (T's, or its strictly lower part: PCG's
 * ILU0 and L plans), whose schedule is copied, not built again, where the
 * policy and S agree. */
ata_status plan_analyse(ata_context *ctx, ata_csr *T, int borrowed, int kind,
                        const ata_plan_options *opt, const dag *known, const ata_plan *like,
                        ata_plan **out);
/* An ILU0 plan on split factors (CPU backend): L strictly lower, U the
 * diagonal first then the upper part, rows sorted, both borrowed; the
 * factorisation overwrites their values. known: L's DAG, or NULL. */
ata_status plan_analyse_ilu0_split(ata_context *ctx, ata_csr *L, ata_csr *U, const ata_plan_options *opt,
                                   const dag *known, ata_plan **out);
/* A solve plan on the triangle (opt->uplo, opt->diag) of P F P^T (perm
 * NULL: of F), made without the copies of ata_sptrsv_plan_create, for
 * callers that hold the whole factored matrix (factor.c). map_out may be
 * NULL; else *map_out (the caller frees it) says where each of the plan's
 * values sits in F->val, so
 * new values of F reach the plan by sptrsv_plan_values_mapped without a new
 * extraction. Same plan, same results as ata_sptrsv_plan_create on the
 * extracted triangle. known: the triangle's DAG, if the caller has it. */
ata_status sptrsv_plan_create_mapped(ata_context *ctx, const ata_csr *F, const int *perm,
                                     const ata_plan_options *opt, const dag *known,
                                     ata_plan **out, int **map_out);
/* A CPU pull plan on T itself, already the triangle in the plan's form (see
 * above: unit, no diagonal; non-unit, last in a lower row, first in an upper
 * one), borrowed: T outlives the plan, and new values written into T->val
 * are the plan's, unless its layout made a copy of its own (p->T != T). */
ata_status sptrsv_plan_create_borrowed(ata_context *ctx, ata_csr *T, const ata_plan_options *opt,
                                       const dag *known, const ata_plan *like, ata_plan **out);
/* The map sptrsv_plan_create_mapped would give for plan p made from
 * (F, perm), made later (F->val may be NULL: the pattern is enough). */
ata_status sptrsv_plan_value_map(const ata_plan *p, const ata_csr *F, const int *perm, int **map_out);
/* New values fval (F's order) into the plan; scratch holds the plan's nnz. */
ata_status sptrsv_plan_values_mapped(ata_plan *p, const double *fval, const int *map, double *scratch);
/* Free the plan's host side and the backend's part. */
void plan_free(ata_plan *p);
/* Next epoch for a pull solve (handles wrap-around). */
uint32_t plan_next_epoch(ata_plan *p);

#endif
