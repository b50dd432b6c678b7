/* plan.h - an analysed problem: the plan's copy of the matrix, its schedule
 * (SET order, adaptive tasks, flags) and the per-solve dependency state.
 *
 * Matrix copy, by kind and traversal:
 *   PLAN_SPTRSV, pull: CSR of the triangle. Non-unit: the diagonal is the
 *     last entry of a lower row / first of an upper row. Unit: no diagonal.
 *   PLAN_SPTRSV, push: CSC of the triangle (ata_csr of T^T), diagonal first
 *     in a lower column / last in an upper one; none if unit.
 *   PLAN_ILU0: CSR of the whole A (sorted), `diag` gives each row's diagonal.
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

struct ata_plan {
    ata_context *ctx;
    int kind;
    ata_plan_options opt;
    int n;
    ata_csr *T;             /* see above */
    int T_borrowed;         /* T's rowptr and col are the caller's (plan_analyse) */
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
    void *dev;              /* backend's device copy of all the above */
    double *xwork;          /* CPU: position-ordered x of multi-column solves */
    size_t xwork_len;       /* (doubles), grown on demand */
    int *xpos;              /* CPU pull: position of each row (staging of b and x) */
    int xorder_identity;    /* CPU: order[k] == k for every k (no xpos, no copy of T) */
    int xindex;             /* CPU pull: T, x and done flags by row, solved through
                               order (the order is the identity or almost) */
};

/* Shared analysis for both kinds (called by the public plan constructors).
 * known: T's DAG if the caller has it (borrowed; NULL: built here).
 * The plan owns T, or (pattern_borrowed) only T->val and the struct: T's
 * rowptr and col stay the caller's, alive and unchanged while the plan is
 * (PCG's ILU0 plan reads its operator's pattern in place). */
ata_status plan_analyse(ata_context *ctx, ata_csr *T, int pattern_borrowed, int kind,
                        const ata_plan_options *opt, const dag *known, ata_plan **out);
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
