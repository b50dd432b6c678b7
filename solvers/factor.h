/* factor.h - an incomplete factorisation (ILU0, IC0) or Jacobi with its
 * solve plans: analysed once, refactored on new values, applied many times.
 * Shared by the public ata_factor (factor.c) and PCG (pcg.c). */
#ifndef ATA_FACTOR_H
#define ATA_FACTOR_H
#include "ata.h"
#include "dag.h"

typedef struct factor_strategy factor_strategy;   /* factor_impl.h */

typedef struct factor_core {
    ata_context *ctx;       /* never NULL: setup maps NULL to the reference's */
    int serial;             /* the caller passed no context */
    const factor_strategy *how;   /* storage strategy (factor_impl.h) */
    int n;
    ata_factor_options opt;
    int require_positive;   /* PCG: a pivot <= 0 is INDEFINITE_PC */
    int in_krylov;          /* factor_hints.in_krylov */
    const double *aval;     /* A's unshifted values (factor order), borrowed from
                               the caller during a factorisation only (the
                               shift retries read them again); the pattern
                               is the ILU0 plan's, LU's, or for Jacobi A's
                               diagonal */
    const dag *lower;       /* factor_hints' DAG, during setup only */
    dag own_lower;          /* L's DAG where no hint gave one (split): built
                               once for the ILU0 plan, the L plan and U's
                               reversed levels, freed after setup */
    int nnz;
    int *dpos;              /* position of each row's diagonal in A */
    /* Storage, by strategy (factor_impl.h): */
    ata_plan *fp;           /* ILU0 plan (not Jacobi); its T holds the
                               factors, unless split */
    ata_csr *Ls, *Us;       /* split: the factors as the solve plans hold
                               them, L strictly lower, U diagonal first;
                               factored in place, the plans read them there
                               (factor_split.c) */
    int split_fresh;        /* Ls/Us hold A's values, not yet factored */
    ata_csr *C, *Ct;        /* IC0: C = L D^{1/2} and C^T */
    ata_csr *D;             /* Jacobi: diag(A) as a triangle */
    ata_plan *Lp, *Up;      /* solve plans (Jacobi: Lp only) */
    int *Lmap, *Umap;       /* where each value of a plan that keeps its own
                               copy sits in the factors; made at the first
                               refactor (plan_take) */
    double *tmp;            /* backend vector between the two solves */
    int pivot_row;          /* last bad pivot, -1 if none */
    int valid;              /* the last factorisation succeeded */
    double shift;           /* shift the last factorisation used */
    int retries;
    double analysis_s, factor_s;
} factor_core;

/* What a caller (PCG) may know of A, to spare the factor a copy and an
 * analysis: */
typedef struct {
    int borrow_pattern;     /* A's pattern outlives the factor unchanged: the
                               runtime's ILU0 plan reads it in place */
    const dag *lower;       /* the DAG of A's lower triangle (borrowed, alive
                               during factor_core_setup only), or NULL */
    int in_krylov;          /* the solves run inside a Krylov loop on the
                               runtime: parallel kernels follow each one
                               (ata_plan.parallel_after) */
} factor_hints;

/* Analysis and first factorisation of A (copied, unless hints say
 * otherwise; hints may be NULL). On a pivot failure *out is still set
 * (f->valid 0) with the status returned. */
ata_status factor_core_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt,
                             int require_positive, const factor_hints *hints, factor_core **out);
/* New values in A's CSR order; refactor with the same shift strategy. */
ata_status factor_core_update(factor_core *f, const double *val);
/* z = M^{-1} r on backend vectors (host on CPU / reference); t_L, t_U (may
 * be NULL) accumulate the time of the two solves. */
ata_status factor_core_apply(factor_core *f, const double *r, double *z, double *t_L, double *t_U);
void factor_core_free(factor_core *f);
#endif
