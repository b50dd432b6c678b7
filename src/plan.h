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
 *     triangles, factored in place (plan_desc.U).
 * The CPU backend's plan_upload moves a solve plan to SET-position space
 * (row k of T is row order[k], columns and flags by position; see
 * cpu_exec_layout); other backends keep T as above.
 * Dependency state: pull keeps `done[i] == epoch` once row i is final, so no
 * reset between solves; push keeps `pending` (reset from `indeg` every solve)
 * and accumulates in x itself: x_i starts at b_i, every finished predecessor
 * column subtracts its contribution atomically, the owner then divides.
 * (The CPU backend counts and subtracts atomically only where a row has a
 * predecessor on another worker, in counts of its own, and drops `indeg`
 * and `pending`: cpu_exec.c.) */
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
    ata_plan *transposed;   /* the plan of T^T on the same triangle: made by the
                               first transposed solve (sptrsv_api.c), dropped by
                               new values */
    void *dev;              /* the backend's private part: its device copy of
                               all the above (GPU: gpu_plan, src/gpu/), or its
                               layout and buffers (CPU: cpu_plan, src/cpu/) */
    int auto_policy;        /* made with ATA_POLICY_AUTO (opt.policy is what it
                               resolved to) */
    int auto_chained;       /* auto on the CPU: rows chained to the one before,
                               per mille (-1: not looked at) */
    int auto_nodes;         /* auto on the CPU, a chained solve: rows that
                               continue a node (plan.c), per mille (-1: not
                               looked at) */
    int auto_chain_cap;     /* auto on the CPU chose chain for short rows and a
                               large x: its S (plan.c), 0 otherwise */
    int auto_group;         /* auto on the CPU: thin levels of chained rows,
                               grouped by Eq. 5.2's S on a cost model (plan.c) */
    int parallel_after;     /* kernels on all workers follow each solve (a
                               factor's plans in ata_pcg's Krylov loop): auto
                               keeps one worker only by a margin (cpu_exec.h) */
    int diag_inv;           /* non-unit: T's diagonal entries hold 1/d and the
                               solve multiplies (plan_desc.diag_inv) */
    int diag_invert;        /* ATA_NON_UNIT_INV asked (opt.diag says NON_UNIT):
                               the plan inverts new values' diagonal itself */
    char choice[768];       /* ata_plan_choice: what runs, and why */
    int values_f32;         /* plan_desc.values_f32: T's values are floats held
                               as doubles; a backend may keep and read them as
                               floats (the CPU's solve plans do: cpu_plan.fval) */
};

/* What a plan is made from. Every plan, public or internal, is built by
 * plan_create from one of these; each field exists for a measured saving
 * (README, "Measured"): a factor's plans borrow its factors instead of
 * copying them, PCG's plans reuse the DAG it already built, the L plan
 * copies the ILU0 plan's schedule.
 *   from: the solve's triangle (opt->uplo, opt->diag) of P from P^T (perm
 *     NULL: of `from`) is extracted into a copy the plan owns, transposed
 *     for push, each diagonal checked (from->val NULL: the pattern only).
 *     map_out (may be NULL) then gets, on success only, where each of the plan's values sits
 *     in from->val, so new values of `from` reach the plan by
 *     sptrsv_plan_values_mapped without a new extraction (the caller frees
 *     it).
 *   or T, already in the plan's form (above), kept as it is; `own` says
 *     what of it the plan owns (PLAN_T_*): all, the values and the struct
 *     only (T's rowptr and col stay the caller's, alive and unchanged), or
 *     nothing (the caller keeps all of T alive; a CPU layout that needs its
 *     own copy makes one). A borrowed solve plan must be pull on a host
 *     backend (new values written into T->val are the plan's, unless its
 *     layout made a copy: p->T != T).
 *   U: an ILU0 plan on split factors (T strictly lower, U the diagonal
 *     first then the upper part, rows sorted, both borrowed; backends with
 *     BACKEND_FACTOR_SPLIT); the factorisation overwrites their values.
 *   known: T's DAG (the triangle's, or L's for split ILU0) if the caller
 *     has it (borrowed; NULL: built here).
 *   like: a plan on the same DAG and pattern (PCG's ILU0 plan for its L
 *     plan) whose schedule is copied, not built again, where policy and S
 *     agree. */
typedef struct {
    int kind;                   /* PLAN_SPTRSV or PLAN_ILU0 */
    const ata_csr *from;
    const int *perm;
    int **map_out;
    ata_csr *T;
    int own;
    ata_csr *U;
    const dag *known;
    const ata_plan *like;
    int diag_inv;       /* T's (or from's) diagonal holds reciprocals: a
                           factor's U, whose pivots the factor inverts once
                           (as PETSc's factored matrices hold them), so no
                           solve divides. The reference honours it too. */
    int values_f32;     /* every value of the triangle (and of any new values
                           given to the plan later) is exactly a float: a
                           factor with ATA_PRECISION_MIXED. The backend may
                           read float copies (the same numbers: a solve
                           gives the same bits either way). Solve plans only. */
} plan_desc;
/* Policy, S, R, uplo, diag and traversal valid, the policy runs on ctx's backend. */
ata_status plan_check_options(const ata_context *ctx, const ata_plan_options *o);
/* Each diagonal entry (col == row) of T replaced by its reciprocal. */
void plan_invert_diag(ata_csr *T);
/* The options are checked here (policy, S, R, uplo, diag, traversal, the
 * policy against the backend). On failure nothing of d->T that the plan
 * was to own is left: it is freed as the plan would have freed it. */
ata_status plan_create(ata_context *ctx, const plan_desc *d, const ata_plan_options *opt, ata_plan **out);
/* The triangle plan_desc.from describes, extracted (as plan_create
 * extracts it; what: the caller's name in messages). */
ata_status plan_extract(ata_context *ctx, const ata_csr *F, const int *perm, const ata_plan_options *o,
                        const char *what, ata_csr **tri_out, int **map_out);
/* The map plan_create's map_out would give for plan p made from (F,
 * perm), made later (F->val may be NULL: the pattern is enough). */
ata_status sptrsv_plan_value_map(const ata_plan *p, const ata_csr *F, const int *perm, int **map_out);
/* New values fval (F's order) into the plan, through its value map. */
ata_status sptrsv_plan_values_mapped(ata_plan *p, const double *fval, const int *map);
/* The plan of T^T made by a transposed solve, freed: new values (its copy
 * of the triangle is stale). */
void plan_drop_transposed(ata_plan *p);
/* Free the plan's host side and the backend's part. */
void plan_free(ata_plan *p);
/* Next epoch for a pull solve (handles wrap-around). */
uint32_t plan_next_epoch(ata_plan *p);

#endif
