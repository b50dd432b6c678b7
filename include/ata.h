/*
 * ata.h - ATA: adaptive task aggregation for sparse triangular solve,
 * ILU0 and PCG on CUDA, HIP and CPU threads.
 *
 * Shape of the API (cuSPARSE's analysis/solve habit):
 *   load or build a matrix (ata_csr)  ->  ata_context (backend, threads)
 *   -> ata_sptrsv_plan_create (analysis once)  ->  ata_sptrsv (solve many)
 * Every call that can fail returns an ata_status; ata_last_error() gives
 * the detail (file, row, entry) of the most recent failure on this thread.
 */
#ifndef ATA_H
#define ATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATA_VERSION_STRING "0.1.0"

/* Every public function carries ATA_API: the library is built with hidden
 * visibility, so only what this header declares is exported. */
#if defined(__GNUC__) || defined(__clang__)
#define ATA_API __attribute__((visibility("default")))
#else
#define ATA_API
#endif

/* ------------------------------------------------------------------ */
/* Status                                                              */
/* ------------------------------------------------------------------ */
typedef enum {
    ATA_OK = 0,
    ATA_ERR_ARG,            /* invalid argument (NULL, bad option value) */
    ATA_ERR_NOMEM,          /* host or device allocation failed */
    ATA_ERR_IO,             /* file cannot be opened or read */
    ATA_ERR_FORMAT,         /* malformed file: header, size line, entry */
    ATA_ERR_UNSUPPORTED,    /* valid but unsupported (complex, dense array) */
    ATA_ERR_EMPTY,          /* matrix with no rows, columns or entries */
    ATA_ERR_NOT_SQUARE,     /* square matrix required */
    ATA_ERR_INDEX,          /* index out of range */
    ATA_ERR_DUPLICATE,      /* duplicate entry */
    ATA_ERR_NONFINITE,      /* NaN or Inf value */
    ATA_ERR_MISSING_DIAG,   /* diagonal entry absent where it is divided by */
    ATA_ERR_ZERO_PIVOT,     /* zero diagonal / zero pivot */
    ATA_ERR_NOT_CONVERGED,  /* iterative solver reached maxit */
    ATA_ERR_BREAKDOWN,      /* PCG: p'Ap <= 0 or NaN/Inf in the iteration */
    ATA_ERR_INDEFINITE_PC,  /* PCG: r'z <= 0, the preconditioner is indefinite */
    ATA_ERR_TIMEOUT,        /* a dependency wait saw no progress for wait_timeout_s
                               (a corrupt plan, or threads starved of CPU) */
    ATA_ERR_BACKEND,        /* backend unavailable, or a device call failed */
    ATA_ERR_INTERNAL
} ata_status;

/* Fixed text of a status code. */
ATA_API const char *ata_status_string(ata_status s);
/* Detail of the last failure on the calling thread ("" if none). */
ATA_API const char *ata_last_error(void);

/* ------------------------------------------------------------------ */
/* Matrices                                                            */
/* ------------------------------------------------------------------ */
/* Compressed sparse rows, 0-based, column indices strictly increasing in
 * every row. A CSC view of A is the CSR of A^T (same struct). */
typedef struct ata_csr {
    int nrows, ncols;
    int nnz;
    int *rowptr;    /* nrows + 1 */
    int *col;       /* nnz */
    double *val;    /* nnz */
} ata_csr;

ATA_API ata_status ata_csr_alloc(int nrows, int ncols, int nnz, ata_csr **out);
ATA_API void ata_csr_free(ata_csr *A);
ATA_API ata_status ata_csr_copy(const ata_csr *A, ata_csr **out);
/* Structural and numerical check: sizes, sorted in-range columns, finite
 * values. `what` names the matrix in the error message (e.g. a file). */
ATA_API ata_status ata_csr_validate(const ata_csr *A, const char *what);
ATA_API ata_status ata_csr_transpose(const ata_csr *A, ata_csr **out);
/* Lower (upper) triangle including the diagonal. */
ATA_API ata_status ata_csr_tril(const ata_csr *A, ata_csr **out);
ATA_API ata_status ata_csr_triu(const ata_csr *A, ata_csr **out);
/* Every row has a stored, nonzero, finite diagonal: else MISSING_DIAG or
 * ZERO_PIVOT naming the first bad row. Requires square. */
ATA_API ata_status ata_csr_check_diag(const ata_csr *A, const char *what);
/* B = P A P^T with new index perm[old] ... B(perm[i], perm[j]) = A(i, j). */
ATA_API ata_status ata_csr_permute_sym(const ata_csr *A, const int *perm, ata_csr **out);
/* perm[i] = image of i, a uniformly random permutation from `seed`. */
ATA_API ata_status ata_random_perm(int n, uint64_t seed, int **perm_out);
/* 1 if A equals A^T in pattern and values. */
ATA_API int ata_csr_is_symmetric(const ata_csr *A);

/* Read a matrix: Matrix Market (.mtx, .mtx.gz; coordinate real, integer or
 * pattern; general, symmetric or skew-symmetric), Rutherford-Boeing (.rb,
 * .rua, .rsa), or a SuiteSparse Matrix Collection archive (.tar.gz holding
 * NAME/NAME.mtx). Symmetric storage is expanded to both triangles. Checks
 * at the door: header, sizes, index range, duplicates, NaN/Inf, empty. */
ATA_API ata_status ata_matrix_read(const char *path, ata_csr **out);
/* Write Matrix Market coordinate real general. */
ATA_API ata_status ata_matrix_write_mtx(const char *path, const ata_csr *A);

/* Generators (natural ordering). */
ATA_API ata_status ata_gen_laplace2d(int nx, int ny, ata_csr **out);            /* 5-point */
ATA_API ata_status ata_gen_laplace3d(int nx, int ny, int nz, int points, ata_csr **out); /* 7 or 27 */
/* Circuit-like: a resistor-network nodal matrix (symmetric, strictly
 * diagonally dominant, SPD), sparse and irregular with hub nodes, whose
 * lower triangle gives an L-shaped DAG. */
ATA_API ata_status ata_gen_circuit(int n, uint64_t seed, ata_csr **out);
/* Parse "lap2d:NX[xNY]", "lap3d:N[xNyxNz]", "lap3d27:N", "circuit:N" with
 * an optional ",perm=SEED" (random symmetric permutation). */
ATA_API ata_status ata_gen_from_spec(const char *spec, ata_csr **out);

/* ------------------------------------------------------------------ */
/* Serial reference (the oracle every backend is tested against)       */
/* ------------------------------------------------------------------ */
typedef enum { ATA_LOWER = 0, ATA_UPPER = 1 } ata_uplo;
typedef enum { ATA_NON_UNIT = 0, ATA_UNIT = 1 } ata_diag;

/* Pull over CSR: T holds at least the `uplo` triangle (other entries are
 * ignored). Non-unit needs every diagonal stored and nonzero. */
ATA_API ata_status ata_ref_sptrsv_csr(const ata_csr *T, ata_uplo uplo, ata_diag diag,
                              const double *b, double *x);
/* Push over CSC: Tc is the CSC of the triangular matrix (CSR of T^T). */
ATA_API ata_status ata_ref_sptrsv_csc(const ata_csr *Tc, ata_uplo uplo, ata_diag diag,
                              const double *b, double *x);
/* ILU0 in place on A's pattern (row-oriented left-looking, IKJ): afterwards
 * the strict lower part is L (unit diagonal implied) and the upper part
 * with the diagonal is U. Zero pivot -> ATA_ERR_ZERO_PIVOT naming the row. */
ATA_API ata_status ata_ref_ilu0(ata_csr *A);
/* y = A x */
ATA_API void ata_ref_spmv(const ata_csr *A, const double *x, double *y);

/* ------------------------------------------------------------------ */
/* Runtime: context, policies, plans                                   */
/* ------------------------------------------------------------------ */
typedef enum {
    ATA_BACKEND_AUTO = 0,   /* cuda, else hip, else cpu */
    ATA_BACKEND_CPU,
    ATA_BACKEND_CUDA,
    ATA_BACKEND_HIP
} ata_backend;

/* How idle CPU workers wait (as OMP_WAIT_POLICY): DEFAULT spins up to
 * ~50 us then sleeps on a futex (less when threads outnumber the CPUs, or
 * while spins keep failing); ACTIVE spins and yields, never sleeping inside
 * a solve (dedicated cores only); PASSIVE sleeps almost at once (shared or
 * oversubscribed machines). DEFAULT takes ATA_WAIT_POLICY=active|passive
 * from the environment when set (anything else: context creation fails). */
typedef enum { ATA_WAIT_DEFAULT = 0, ATA_WAIT_ACTIVE, ATA_WAIT_PASSIVE } ata_wait_policy;

typedef struct {
    ata_backend backend;
    int threads;            /* CPU workers; 0: OMP_NUM_THREADS (1..256, else
                               an error), else the CPUs this process may use
                               (affinity mask, cgroup CPU quota) */
    int device;             /* GPU ordinal */
    double wait_timeout_s;  /* a dependency wait that sees no progress for
                               this long fails (ATA_ERR_TIMEOUT); default 10 s */
    ata_wait_policy wait_policy;
} ata_context_options;

/* A context and its plans are used by one thread at a time (the context's
 * workers or device stream are shared by its plans); use one context per
 * caller thread for concurrent solves. */
typedef struct ata_context ata_context;

ATA_API ata_context_options ata_context_defaults(void);
ATA_API ata_status ata_context_create(const ata_context_options *opt, ata_context **out);
ATA_API void ata_context_destroy(ata_context *ctx);
ATA_API ata_backend ata_context_backend(const ata_context *ctx);
/* CPU workers asked for (or the default); a plan runs on at most the CPUs
 * this process may use, see ata_plan_info.threads_used. */
ATA_API int ata_context_threads(const ata_context *ctx);
ATA_API const char *ata_backend_name(ata_backend b);
ATA_API ata_status ata_backend_from_name(const char *name, ata_backend *out);
/* 1 if this build has the backend and a device for it. */
ATA_API int ata_backend_available(ata_backend b);

typedef enum {
    ATA_POLICY_LEVELSET = 0, /* one adaptive task per level, barrier between */
    ATA_POLICY_SYNCFREE,     /* one adaptive task, every row waits on its preds */
    ATA_POLICY_CA,           /* concurrency-aware (Alg. 7) */
    ATA_POLICY_LA,           /* locality-aware (Alg. 8) */
    ATA_POLICY_GREEDY,       /* fixed-capacity chunks of the level order */
    ATA_POLICY_VENDOR,       /* cuSPARSE / hipSPARSE (GPU backends only) */
    ATA_POLICY_COUNT
} ata_policy;

ATA_API const char *ata_policy_name(ata_policy p);
ATA_API ata_status ata_policy_from_name(const char *name, ata_policy *out);

typedef enum { ATA_PULL = 0, ATA_PUSH = 1 } ata_traversal; /* CSR / CSC */

typedef struct {
    ata_policy policy;      /* default ATA_POLICY_CA */
    int S;                  /* adaptive-task size; 0 = auto (Eq. 5.1, 5.2) */
    double R;               /* Eq. 5.2 ratio; default 100 */
    ata_uplo uplo;
    ata_diag diag;
    ata_traversal traversal;
} ata_plan_options;

ATA_API ata_plan_options ata_plan_defaults(void);

typedef struct ata_plan ata_plan;

/* Analysis: T holds at least the `uplo` triangle (other entries ignored);
 * the plan keeps its own copy of what it needs, T may be freed after. */
ATA_API ata_status ata_sptrsv_plan_create(ata_context *ctx, const ata_csr *T,
                                  const ata_plan_options *opt, ata_plan **out);
/* Solve T x = b. b and x are host arrays of length n (may not alias). */
ATA_API ata_status ata_sptrsv(ata_plan *plan, const double *b, double *x);
ATA_API void ata_plan_destroy(ata_plan *plan);

typedef struct {
    int n;
    int nnz;                /* entries of the triangle */
    int levels;             /* critical path length */
    int max_width;
    long long m;            /* DAG edges (off-diagonal entries) */
    const char *dag_class;  /* "parallel", "L-shape" or "wide" */
    int S;                  /* granularity used */
    int atasks;             /* adaptive tasks */
    int untracked;          /* adaptive tasks with no internal dependency */
    int barriers;           /* coarse synchronisations per solve */
    long long c, f;         /* coarse and fine edges (c + f vs m) */
    double analysis_s;      /* DAG + aggregation + upload */
    size_t plan_bytes;      /* beyond the matrix: levels, order, flags */
    size_t matrix_bytes;    /* the plan's copy of the triangle */
    double T_l, T_u;        /* Eq. 5.2 inputs (seconds), 0 if S was fixed */
    double last_solve_s;    /* the last ata_sptrsv's execution on the backend,
                               without host<->device copies of b and x */
    ata_policy policy;
    ata_traversal traversal;
    int threads_used;       /* CPU: workers a solve of this plan uses; 1 when
                               the measured costs (T_u, T_l, waking the pool)
                               say threads cannot gain (runs on the calling
                               thread); decided only when S is auto. 0: GPU */
} ata_plan_info;

ATA_API ata_status ata_plan_get_info(const ata_plan *plan, ata_plan_info *info);

/* ILU0 through the runtime (pull, row DAG of A's lower pattern). A must be
 * square with every diagonal stored. `opt` gives policy and S (uplo, diag
 * and traversal are ignored). *LU gets the factors in one CSR on A's pattern
 * (strict lower: L with unit diagonal; upper with diagonal: U). */
ATA_API ata_status ata_spilu0(ata_context *ctx, const ata_csr *A,
                      const ata_plan_options *opt, ata_csr **LU);
/* Same, overwriting A's values. */
ATA_API ata_status ata_spilu0_inplace(ata_context *ctx, ata_csr *A,
                              const ata_plan_options *opt);

/* ------------------------------------------------------------------ */
/* PCG (Saad Alg. 9.1)                                                 */
/* ------------------------------------------------------------------ */
typedef enum { ATA_PC_ILU0 = 0, ATA_PC_IC0, ATA_PC_NONE } ata_precond;
typedef enum { ATA_REORDER_NONE = 0, ATA_REORDER_RCM, ATA_REORDER_ND } ata_reorder;

typedef struct {
    double rtol;            /* ||b - Ax|| / ||b|| <= rtol; default 1e-6 */
    double atol;            /* or ||b - Ax|| <= atol; default 0 */
    int maxit;              /* default 2000 */
    int use_x0;             /* 0: x0 = 0 (default); 1: start from x */
    ata_precond precond;
    ata_reorder reorder;
    ata_plan_options plan;  /* policy, S, R, traversal of the L and U solves */
    int keep_history;       /* record the residual of every iteration */
} ata_pcg_options;

typedef struct {
    ata_status status;      /* OK, NOT_CONVERGED, BREAKDOWN, INDEFINITE_PC... */
    int iterations;
    double relres;          /* final ||b - Ax|| / ||b|| (true residual); NaN
                               if the solve stopped before computing one */
    double analysis_s, factor_s, solve_s;
    double *history;        /* iterations + 1 values if keep_history: the
                               recurrence residual ||r_k|| / ||b|| */
    int history_len;
    ata_plan_info L_info, U_info;
} ata_pcg_result;

ATA_API ata_pcg_options ata_pcg_defaults(void);
/* Solve A x = b. A square, symmetric positive definite expected. */
ATA_API ata_status ata_pcg(ata_context *ctx, const ata_csr *A, const double *b,
                   double *x, const ata_pcg_options *opt, ata_pcg_result *res);
ATA_API void ata_pcg_result_free(ata_pcg_result *res);
ATA_API const char *ata_precond_name(ata_precond p);
ATA_API const char *ata_reorder_name(ata_reorder r);

#ifdef __cplusplus
}
#endif
#endif /* ATA_H */
