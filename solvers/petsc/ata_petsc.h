/*
 * ata_petsc.h - ATA as a PETSc factorisation package (libata_petsc.so).
 *
 * ILU(0) and ICC(0) of sequential AIJ matrices through ATA's SpILU0 and
 * SpTS plans: analysis once, numeric refactorisation on new values with the
 * same pattern, many solves. Selected with options only:
 *   -pc_type ilu -pc_factor_mat_solver_type ata
 *   -pc_type bjacobi -sub_pc_type ilu -sub_pc_factor_mat_solver_type ata
 * A program that does not link the library loads it with
 *   -dll_append /path/libata_petsc.so
 * (PETSc then runs PetscDLLibraryRegister_ata_petsc); a program that links
 * it calls ata_petsc_register() once after PetscInitialize().
 *
 * Options (also with the factor's prefix, e.g. -sub_mat_ata_policy, which
 * wins over the plain name): -mat_ata_policy, -mat_ata_backend,
 * -mat_ata_threads, -mat_ata_S, -mat_ata_device.
 */
#ifndef ATA_PETSC_H
#define ATA_PETSC_H

#include <petscmat.h>

#define MATSOLVERATA "ata"

/* Register "ata" for MATSEQAIJ with MAT_FACTOR_ILU and MAT_FACTOR_ICC.
 * Idempotent. */
PETSC_EXTERN PetscErrorCode ata_petsc_register(void);
/* Run by PETSc when the library is opened by -dll_append. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_ata_petsc(void);

#endif
