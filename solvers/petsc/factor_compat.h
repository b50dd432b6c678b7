/*
 * factor_compat.h - the setup/solve/update factor API (ata_factor_*) for
 * builds whose ata.h does not have it yet: ILU0 by ata_spilu0, then one
 * SpTS plan for L (unit lower) and one for U, rebuilt at every numeric
 * factorisation. Only the PETSc plugin compiles it (the Makefile adds it
 * when include/ata.h lacks ata_factor_setup).
 */
#ifndef ATA_FACTOR_COMPAT_H
#define ATA_FACTOR_COMPAT_H
#include "ata.h"

typedef enum { ATA_SHIFT_NONE = 0, ATA_SHIFT_NONZERO, ATA_SHIFT_POSITIVE_DEFINITE } ata_shift;
typedef struct { ata_precond type; ata_shift shift; double shift_amount; ata_plan_options plan; } ata_factor_options;
typedef struct ata_factor ata_factor;
ata_factor_options ata_factor_defaults(void);
ata_status ata_factor_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt, ata_factor **out);
ata_status ata_factor_update_values(ata_factor *F, const double *val);
ata_status ata_factor_solve(ata_factor *F, const double *b, double *x);
int ata_factor_pivot_row(const ata_factor *F);
ata_status ata_factor_get_info(const ata_factor *F, ata_plan_info *L, ata_plan_info *U);
void ata_factor_destroy(ata_factor *F);
#endif
