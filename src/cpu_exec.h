/* cpu_exec.h - the CPU executors of a plan (see cpu_exec.c). */
#ifndef ATA_CPU_EXEC_H
#define ATA_CPU_EXEC_H
#include "plan.h"
#include "cpu_pool.h"

/* plan_upload / plan_release of the CPU backend: a solve plan laid out in
 * SET-position space. */
ata_status cpu_exec_layout(ata_plan *p);
void cpu_exec_release(ata_plan *p);
/* New values, in the order of the matrix the plan was analysed from. */
ata_status cpu_exec_set_values(ata_plan *p, const double *val);
ata_status cpu_exec_sptrsv(ata_plan *p, const double *b, double *x);
ata_status cpu_exec_ilu0(ata_plan *p);
/* nrhs column-major columns (leading dimensions ldb, ldx), host arrays. */
ata_status cpu_exec_sptrsv_multi(ata_plan *p, int nrhs, const double *B, int ldb, double *X, int ldx);

#endif
