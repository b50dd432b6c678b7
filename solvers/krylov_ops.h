/* krylov_ops.h - the vector and operator kernels a Krylov method needs, over
 * a backend (its vectors, pool or device kernels; ctx NULL: the serial
 * reference's, ref_backend.h). CG, BiCGStab and GMRES use
 * them (krylov_methods.h). Each call adds its time to one of
 * the phase counters (as PETSc's -log_view events). */
#ifndef ATA_KRYLOV_OPS_H
#define ATA_KRYLOV_OPS_H
#include "ata.h"
#include "factor.h"

typedef struct krylov_ops {
    int n;
    ata_context *ctx;       /* never NULL: krylov_init maps NULL to the reference's */
    const ata_csr *A;       /* the operator (the runtime's handle is made from it) */
    void *spmv_h;
    factor_core *pc;        /* NULL: identity preconditioner */
    void *dev_cg;           /* backend_cg of a backend that runs CG on the device
                               (cg_device.c), kept between solves */
    double t_L, t_U, t_spmv, t_vec;  /* phase times, seconds */
} krylov_ops;

/* Operator handle for A (kept by pointer: A must outlive the ops). */
ata_status krylov_init(krylov_ops *o, ata_context *ctx, const ata_csr *A, factor_core *pc);
/* A's values changed (same pattern): refresh the backend's copy. */
ata_status krylov_refresh(krylov_ops *o);
void krylov_fini(krylov_ops *o);

ata_status krylov_alloc(krylov_ops *o, double **v);        /* n doubles, zeroed */
void krylov_free(krylov_ops *o, double *v);
ata_status krylov_put(krylov_ops *o, double *dst, const double *src_host);
ata_status krylov_get(krylov_ops *o, double *dst_host, const double *src);
ata_status krylov_spmv(krylov_ops *o, const double *x, double *y);                   /* y = A x */
ata_status krylov_spmv_dot(krylov_ops *o, const double *x, double *y, double *xy);   /* and x'y */
ata_status krylov_dot(krylov_ops *o, const double *x, const double *y, double *r);
/* y = a x + b y; with b == 0, y is not read (BLAS semantics). */
ata_status krylov_axpby(krylov_ops *o, double a, const double *x, double b, double *y);
/* x += a p, r -= a q, *rr = r'r */
ata_status krylov_cg_update(krylov_ops *o, double a, const double *p, const double *q, double *x,
                            double *r, double *rr);
/* z = M^{-1} r (identity without a preconditioner). */
ata_status krylov_precond(krylov_ops *o, const double *r, double *z);

#endif
