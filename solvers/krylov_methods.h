/* krylov_methods.h - the iterations of the Krylov solver: CG (cg.c),
 * BiCGStab (bicgstab.c), restarted GMRES (gmres.c). pcg.c holds what they
 * share: setup (reordering, layout, factors), the frame of a solve (b and
 * x put, the initial residual, the true residual at the end, x got back)
 * and the public API. A method starts from r = b - A x0 (not converged) and
 * stops converged, at maxit (*converged 0, status OK), or with a named
 * failure (breakdown, divergence, an indefinite preconditioner for CG). */
#ifndef ATA_KRYLOV_METHODS_H
#define ATA_KRYLOV_METHODS_H
#include "ata.h"
#include "krylov_ops.h"

typedef struct {
    krylov_ops *o;
    const ata_pcg_options *opt;
    ata_pcg_result *res;
    double *b, *x, *r;          /* backend vectors; r = b - A x on entry */
    double **w;                 /* the method's work vectors (krylov_work_vectors) */
    double tol;                 /* stop when ||r|| <= tol */
    double scale;               /* ||b|| (1 if b = 0): relres = ||r|| / scale */
    double rnorm0;              /* ||b - A x0||, for dtol */
    const char *who;            /* the method's name in messages */
} krylov_state;

/* Work vectors a method needs beside b, x and r. */
int krylov_work_vectors(const ata_pcg_options *opt);
/* Iteration it's residual norm: the history, the monitor, res. */
void krylov_record(krylov_state *k, int it, double rnorm);
/* The divergence test (PETSc's dtol): a failure naming it (and `hint`, a
 * likely cause), or ATA_OK. */
ata_status krylov_check_dtol(const krylov_state *k, int it, double rnorm, const char *hint);

ata_status cg_iterate(krylov_state *k, int *converged);
/* CG with a backend that runs it on the device (cg_device.c), the whole
 * solve from b (host) to x (host) and relres; UNSUPPORTED where it cannot
 * (the caller then runs krylov_solve's loop). v: b, x, r, z, p, q. */
ata_status cg_device_solve(krylov_ops *o, double **v, const double *b_host, double *x_host,
                           const ata_pcg_options *opt, ata_pcg_result *res);
ata_status bicgstab_iterate(krylov_state *k, int *converged);
ata_status gmres_iterate(krylov_state *k, int *converged);

#endif
