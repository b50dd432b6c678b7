/* backend.h - the one backend interface. A backend executes plans that the
 * host side (dag, agg, plan) built; it never decides a schedule itself.
 * "Vectors" are backend-resident arrays of doubles (host memory on CPU). */
#ifndef ATA_BACKEND_H
#define ATA_BACKEND_H
#include "ata.h"

typedef struct ata_plan ata_plan;
typedef struct ata_context ata_context;

/* PCG on the device (optional ops below; solvers/cg_device.c drives them
 * for CG): the backend keeps CG's scalars on the device, stops where CG
 * stops, and the host reads them back every few iterations instead of
 * several times in each. */
typedef struct {
    void *spmv_h;               /* A: spmv_create's handle */
    ata_plan *L, *U;            /* z = U \ (L \ r); L NULL: z = r; U NULL: z = L \ r */
    double *tmp;                /* backend vector between the two solves */
    double *b, *x, *r, *z, *p, *q;  /* backend vectors of n */
    int n;
    double rtol, atol, dtol;    /* as ata_pcg_options */
    void *dev;                  /* the backend's state for these vectors, kept between
                                   solves (cg_free frees it) */
} backend_cg;
typedef struct { double pq, rr, rz; } backend_cg_rec;   /* p'Ap, r'r, r'z of an iteration */
typedef struct {
    double bb, rr0, rz0;        /* b'b, r0'r0, r0'z0: what iteration 0 found */
    int ran;                    /* iterations recorded in this batch */
    int stopped;                /* the device stopped: at the last record, or (ran 0)
                                   before iterating */
} backend_cg_batch;

typedef struct ata_backend_ops {
    const char *name;
    ata_status (*ctx_init)(ata_context *ctx);
    void (*ctx_fini)(ata_context *ctx);
    /* After analysis: move T, order, atasks and flags where they run. */
    ata_status (*plan_upload)(ata_plan *p);
    void (*plan_release)(ata_plan *p);
    /* x = T \ b with backend vectors. */
    ata_status (*sptrsv)(ata_plan *p, const double *b, double *x);
    /* ILU0 on the plan's matrix values (kind PLAN_ILU0), in place. */
    ata_status (*ilu0)(ata_plan *p);
    /* Copy the plan's factor values back to host `val` (nnz). */
    ata_status (*ilu0_values)(ata_plan *p, double *val);
    /* Cost of one barrier / launch between adaptive tasks (Eq. 5.2 T_l). */
    ata_status (*probe_sync_cost)(ata_context *ctx, double *T_l);
    /* Mean time of one user task of this plan, run with no dependencies. */
    ata_status (*probe_task_cost)(ata_plan *p, double *T_u);

    /* Vectors and kernels for PCG. */
    ata_status (*vec_alloc)(ata_context *ctx, size_t n, double **v);
    void (*vec_free)(ata_context *ctx, double *v);
    ata_status (*vec_upload)(ata_context *ctx, double *dst, const double *src, size_t n);
    ata_status (*vec_download)(ata_context *ctx, double *dst, const double *src, size_t n);
    ata_status (*spmv_create)(ata_context *ctx, const ata_csr *A, void **h);
    void (*spmv_destroy)(ata_context *ctx, void *h);
    ata_status (*spmv)(ata_context *ctx, void *h, const double *x, double *y);
    ata_status (*dot)(ata_context *ctx, size_t n, const double *x, const double *y, double *out);
    /* y = a*x + b*y; with b == 0, y is not read (BLAS semantics). */
    ata_status (*axpby)(ata_context *ctx, size_t n, double a, const double *x, double b, double *y);
    /* Optional fusions for PCG (NULL: done with the ops above). Fewer passes
     * over memory for a memory-bound loop.
     * spmv_dot: y = A x, *xy = x'y.   cg_update: x += a p, r -= a q, *rr = r'r. */
    ata_status (*spmv_dot)(ata_context *ctx, void *h, const double *x, double *y, double *xy);
    ata_status (*cg_update)(ata_context *ctx, size_t n, double a, const double *p, const double *q,
                            double *x, double *r, double *rr);

    /* New values on an analysed plan's pattern (no new analysis): `val` in
     * the order of the matrix plan_create received (the plan's T before the
     * backend's upload). */
    ata_status (*plan_values)(ata_plan *p, const double *val);
    /* Optional: the same with that matrix's entry q at val[map[q]] (a
     * factor's triangle inside its storage). A backend may keep what it
     * derives from map while the plan lives: the caller passes the same
     * array, unchanged, every time (a factor's maps live as long as its
     * plans). NULL: gathered into a copy, then ->plan_values. */
    ata_status (*plan_values_mapped)(ata_plan *p, const double *val, const int *map);
    /* Optional: nrhs columns at once, backend vectors, column-major with
     * leading dimensions (NULL: one ->sptrsv per column). */
    ata_status (*sptrsv_multi)(ata_plan *p, int nrhs, const double *B, int ldb, double *X, int ldx);
    /* Optional (GPU): a solve on device pointers ordered on the caller's
     * stream (NULL: the context's), the error found on the device (zero
     * pivot, first non-finite row) returned as a status. */
    ata_status (*sptrsv_stream)(ata_plan *p, const double *b, double *x, void *stream);
    /* Optional: the plan's triangle in its input's row order (plan.h's
     * layout before the backend's upload), a copy the caller frees, where
     * the backend's layout renumbered p->T (NULL, or *T = NULL: p->T is
     * that triangle). For the transposed plan (sptrsv_api.c). */
    ata_status (*plan_triangle)(const ata_plan *p, ata_csr **T);
    /* Optional (GPU): PCG on the device (backend_cg above). cg_start: b and
     * x0 (NULL: 0) from the host, r0 = b - A x0, z0, p0 and their dots, no
     * host synchronisation; UNSUPPORTED where this setup cannot (the caller
     * then iterates itself). cg_steps: k more iterations (none past where
     * CG stops), then one read of their records. cg_finish: r = b - A x, its
     * r'r and x to the host, one read. cg_free: what cg_start made. */
    ata_status (*cg_start)(ata_context *ctx, backend_cg *cg, const double *b_host, const double *x0_host);
    ata_status (*cg_steps)(ata_context *ctx, backend_cg *cg, int k, backend_cg_batch *out, backend_cg_rec *rec);
    ata_status (*cg_finish)(ata_context *ctx, backend_cg *cg, double *x_host, double *rr);
    void (*cg_free)(ata_context *ctx, backend_cg *cg);
    /* What the backend can do (BACKEND_* below; 0: a GPU's), so that the
     * host side asks for a capability, never for a backend by name. */
    unsigned caps;
} ata_backend_ops;

/* Vectors are host arrays (a host pointer is the backend's own). */
#define BACKEND_HOST_VECTORS 1u
/* Plans get no DAG, aggregation or probes: the backend solves rows in
 * order (the serial reference; keeps ctx == NULL runs cheap). */
#define BACKEND_NO_SCHEDULE  2u
/* ILU0 in place on the split L and U solve plans' own triangles
 * (plan_desc.U; solvers/factor_split.c). */
#define BACKEND_FACTOR_SPLIT 4u
/* A solve plan may borrow a whole matrix and solve with its triangle
 * (opt.uplo, opt.diag), ignoring the rest: factors are handed to the
 * plans with no extraction (solvers/factor_whole.c). */
#define BACKEND_READS_WHOLE  8u

extern const ata_backend_ops cpu_backend_ops;


/* GPU backends are run-time modules (backend_load.c): libata_cuda.so,
 * libata_hip.so. A module exports one function, ata_backend_module, which
 * takes what the core lends it and returns its ops table, or NULL when it
 * was built from another version (ABI number or struct sizes differ). The
 * module calls the core only through `host` (src/gpu/gpu_module.c maps ata_fail
 * and the CSR helpers onto it), so it works with libata.so and libata.a
 * alike and reports through the caller's ata_last_error(). Bump the ABI
 * number when ata_backend_ops, ata_backend_host, ata_context or ata_plan
 * change in a way sizes do not show. */
#define ATA_BACKEND_ABI 4    /* 3: ops->cg_start/steps/finish/free (PCG on the device); 4: ops->plan_values_mapped */
typedef struct ata_backend_host {
    int abi;
    size_t sizeof_context, sizeof_plan;
    ata_status (*fail_msg)(ata_status s, const char *msg);
    void (*clear_error)(void);
    void (*csr_free)(ata_csr *A);
    ata_status (*csr_transpose)(const ata_csr *A, ata_csr **out);
} ata_backend_host;
typedef const ata_backend_ops *(*ata_backend_module_fn)(const ata_backend_host *host);

/* The ops of backend `b` (cpu, cuda, hip), loading its module on first use.
 * ATA_ERR_BACKEND "backend unavailable: <name>: <why>" when it cannot. */
ata_status backend_load(ata_backend b, const ata_backend_ops **out);
#ifdef ATA_HAVE_CUDA
extern const ata_backend_ops cuda_backend_ops;
#endif
#ifdef ATA_HAVE_HIP
extern const ata_backend_ops hip_backend_ops;
#endif

#endif
