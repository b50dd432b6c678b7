/* ref_backend.h - the serial reference as a backend (Ginkgo's reference
 * executor): what ctx == NULL means in the public API. Its vectors are host
 * arrays, its kernels the plain loops of ref_sptrsv.c and ref_ilu0.c, its
 * plans carry no schedule (BACKEND_NO_SCHEDULE: no DAG, aggregation or
 * probe), so a serial run costs what it cost before it was a backend and
 * gives the same bits. It lives beside the reference kernels it calls
 * (layers point down: src/ never calls into solvers/). */
#ifndef ATA_REF_BACKEND_H
#define ATA_REF_BACKEND_H
#include "backend.h"

extern const ata_backend_ops ref_backend_ops;

/* The context every ctx == NULL call runs on: one, static, never written
 * after its initialiser (no probe, no worker, no device), so shared by
 * every thread; never destroyed. */
ata_context *ref_backend_context(void);
/* ctx itself, or the reference's for NULL. */
ata_context *ref_backend_or(ata_context *ctx);
/* A context of its own on the reference backend, for ata_context_destroy
 * (the backend suite runs on it as on any other). */
ata_status ref_backend_context_create(double wait_timeout_s, ata_context **out);
/* ata_ref_sptrsv_csr / _csc, with `inv`: the stored diagonal holds 1/d and
 * multiplies (plan_desc.diag_inv). */
ata_status ref_sptrsv_csr(const ata_csr *T, ata_uplo uplo, ata_diag diag, int inv, const double *b, double *x);
ata_status ref_sptrsv_csc(const ata_csr *Tc, ata_uplo uplo, ata_diag diag, int inv, const double *b, double *x);

#endif
