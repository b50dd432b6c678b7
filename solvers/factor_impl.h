/* factor_impl.h - the storage strategies of an incomplete factorisation
 * behind one small interface (CSparse keeps symbolic and numeric apart; so
 * does this): set up (storage and the ILU0 plan), load A's values, say
 * where the pivots are, factor numerically, hand the factors to the solve
 * plans. factor.c keeps what is common: the shift strategy around load /
 * factor, and the apply and free of the plans every strategy ends in (Lp,
 * and Up but for Jacobi).
 *
 *   factor_split.c   ILU0 in place on the L and U plans' own triangles
 *                    (backends with BACKEND_FACTOR_SPLIT: the CPU)
 *   factor_whole.c   ILU0 on a whole copy of A, the ILU0 plan's T; the solve
 *                    plans copy their triangles and take new values through
 *                    maps (factor_mapped: GPUs), or borrow T and read their
 *                    triangle in it (factor_inplace: BACKEND_READS_WHOLE,
 *                    the serial reference)
 *   factor_ic0.c     IC0: the whole ILU0 above, then C = L D^{1/2} and C^T
 *   factor_jacobi.c  Jacobi: diag(A) as a one-level triangle
 * Which one a factor uses is chosen from the type and the backend's
 * capabilities (factor_strategy_for), never from the backend's name. */
#ifndef ATA_FACTOR_IMPL_H
#define ATA_FACTOR_IMPL_H
#include "factor.h"
#include "plan.h"

struct factor_strategy {
    const char *name;
    /* Storage and analysis from A's pattern (values, if the strategy wants
     * them early); f->dpos, f->lower are set. */
    ata_status (*setup)(factor_core *f, const ata_csr *A, const factor_hints *h);
    /* f->aval (A's unshifted values) into the storage the pivots live in. */
    ata_status (*load)(factor_core *f);
    /* The pivots: v[pos[i]], or v[i] where *pos is NULL. */
    double *(*pivots)(const factor_core *f, const int **pos);
    /* The numeric factorisation in place; a zero pivot is not an error
     * here (the shift strategy scans the pivots). */
    ata_status (*factor)(factor_core *f);
    /* After a good factorisation: make the solve plans (first call) or give
     * them the new factors. */
    ata_status (*propagate)(factor_core *f);
    /* After a good factorisation, the pivots (U's diagonal) are replaced by
     * their reciprocals before propagate, and the U plans multiply
     * (plan_desc.diag_inv): no division in any solve, as PETSc's factored
     * matrices. A divide sits on the critical path where a row waits on
     * the one before it (serial lower solve of lap3d:100 in natural order,
     * one run, interleaved: 4.7 ms multiplying, 7.2 ms dividing); in level
     * order, where a level's rows do not wait on each other, no difference
     * was seen. The backend's solve kernels must honour diag_inv (the
     * CPU's and the reference's do; the GPUs' "mapped" strategy keeps
     * dividing). */
    int inv_pivots;
    /* Where the factors' values are (ATA_PRECISION_MIXED rounds them there,
     * after a good factorisation, before propagate): *n matrices in M.
     * NULL: the strategy has no mixed precision (IC0, Jacobi). */
    void (*factors)(const factor_core *f, ata_csr *M[2], int *n);
};

extern const factor_strategy factor_split, factor_mapped, factor_inplace, factor_ic0, factor_jacobi;

/* Shared by the strategies (factor.c, factor_whole.c): */
/* The two solve plans' options: L unit for ILU0 (its diagonal is U's). */
void factor_solve_options(const factor_core *f, ata_plan_options *lo, ata_plan_options *uo);
/* What a solve plan on triangle M (opt->uplo, opt->diag) is made from: M
 * borrowed where the backend reads a whole matrix (no copy; *opt becomes
 * pull: the plan reads M's rows as they are), else a copy of M's triangle. */
plan_desc factor_plan_desc(const factor_core *f, ata_csr *M, ata_plan_options *opt);
ata_status factor_plan_create(factor_core *f, ata_csr *M, const ata_plan_options *opt, ata_plan **out);
/* The L and U solve plans, their time added to analysis_s; no L plan is
 * left without its U plan (the next update makes both). */
ata_status factor_make_plans(factor_core *f, const plan_desc *ld, const ata_plan_options *lo,
                             const plan_desc *ud, const ata_plan_options *uo);
/* M's new values into plan p made by factor_plan_create (nothing if p
 * reads M itself). */
ata_status factor_plan_values(ata_plan *p, const ata_csr *M);
/* New factors of F into plan p, made on F's triangle (or on F itself: then
 * nothing to do), through a map from the plan's values to F's, made at the
 * first refactor, not at setup, so a solver that is set up once and never
 * given new values keeps no maps (28 MB at lap3d:100). */
ata_status factor_plan_take(ata_plan *p, const ata_csr *F, int **map);
/* The whole-matrix ILU0 plan (factor_whole.c; IC0 starts from it too). */
ata_status factor_whole_setup(factor_core *f, const ata_csr *A, const factor_hints *h);
ata_status factor_whole_load(factor_core *f);
double *factor_whole_pivots(const factor_core *f, const int **pos);
ata_status factor_whole_factor(factor_core *f);
void factor_whole_factors(const factor_core *f, ata_csr *M[2], int *n);
/* Solve plans on float-valued factors (plan_desc.values_f32): precision mixed. */
int factor_values_f32(const factor_core *f);

#endif
