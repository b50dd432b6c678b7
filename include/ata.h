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
    ATA_ERR_BREAKDOWN,      /* the iteration cannot go on: CG p'Ap <= 0, a BiCGStab/GMRES recurrence vanished or lost trust, NaN/Inf */
    ATA_ERR_INDEFINITE_PC,  /* PCG: r'z <= 0, the preconditioner is indefinite */
    ATA_ERR_TIMEOUT,        /* a dependency wait saw no progress for wait_timeout_s
                               (a corrupt plan, or threads starved of CPU) */
    ATA_ERR_BACKEND,        /* backend unavailable, or a device call failed */
    ATA_ERR_INTERNAL,
    ATA_ERR_DIVERGED        /* PCG: ||r_k|| > dtol ||r_0|| (PETSc's DIVERGED_DTOL) */
} ata_status;

/* Fixed text of a status code. */
ATA_API const char *ata_status_string(ata_status s);
/* Detail of the last failure on the calling thread ("" if none). Sticky:
 * a successful call does not clear it, so read it right after a call that
 * returned a status other than ATA_OK (errno's habit). */
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
/* Reading options (ata_read_defaults() gives the defaults). */
typedef struct {
    int sum_duplicates;     /* 0 (default): a repeated entry is an error naming
                               both; 1: repeated entries are added, in file
                               order (MATLAB sparse(), PETSc ADD_VALUES).
                               Matrix Market only: RBio rejects duplicates. */
    size_t max_input_bytes; /* cap on decompressed data (.gz, archives); 0:
                               $ATA_MAX_INPUT_BYTES, else 1/4 of physical memory */
} ata_read_options;
ATA_API ata_read_options ata_read_defaults(void);
/* ata_matrix_read with options; opt NULL means the defaults. */
ATA_API ata_status ata_matrix_read_opts(const char *path, const ata_read_options *opt, ata_csr **out);
/* COO -> CSR (CSparse's cs_compress), 0-based: every entry checked (range,
 * finite) before anything is sized by it, columns sorted; repeated
 * (row, column) are summed in input order if sum_duplicates, else an
 * ATA_ERR_DUPLICATE naming both entries. */
ATA_API ata_status ata_csr_from_coo(int nrows, int ncols, int nnz, const int *row, const int *col,
                                    const double *val, int sum_duplicates, ata_csr **out);
/* Write Matrix Market coordinate real general. */
ATA_API ata_status ata_matrix_write_mtx(const char *path, const ata_csr *A);

/* Generators (natural ordering). */
ATA_API ata_status ata_gen_laplace2d(int nx, int ny, ata_csr **out);            /* 5-point */
ATA_API ata_status ata_gen_laplace3d(int nx, int ny, int nz, int points, ata_csr **out); /* 7 or 27 */
/* Circuit-like: a resistor-network nodal matrix (symmetric, strictly
 * diagonally dominant, SPD), sparse and irregular with hub nodes, whose
 * lower triangle gives an L-shaped DAG. */
/* 3D convection-diffusion, upwind: -Laplacian + c (1,1,1).grad on the
 * 7-point grid (x h^2; c = beta h >= 0): diagonal 6 + 3c, upwind
 * neighbours -(1 + c), downwind -1. Nonsymmetric; spec "convdiff:N" (c = 1). */
ATA_API ata_status ata_gen_convdiff3d(int nx, int ny, int nz, double c, ata_csr **out);
ATA_API ata_status ata_gen_circuit(int n, uint64_t seed, ata_csr **out);
/* Parse "lap2d:NX[xNY]", "lap3d:N[xNyxNz]", "lap3d27:N", "convdiff:N",
 * "circuit:N" with optional ",dofs=D" (D unknowns a grid point, numbered
 * point by point: A kron a dense D x D block), ",perm=SEED" (random
 * symmetric permutation, after dofs) and ",levelorder". */
ATA_API ata_status ata_gen_from_spec(const char *spec, ata_csr **out);

/* ------------------------------------------------------------------ */
/* Serial reference (the oracle every backend is tested against)       */
/* ------------------------------------------------------------------ */
typedef enum { ATA_LOWER = 0, ATA_UPPER = 1 } ata_uplo;
/* ATA_NON_UNIT_INV: the stored diagonal, applied as x_i = s * (1 / t_ii)
 * with the reciprocal rounded once (by the plan, when it takes the values)
 * instead of s / t_ii: on a chain of dependent rows each row then waits
 * for a multiply, not a divide (SpMP's choice). Each x_i within an ulp or
 * so of NON_UNIT's; bitwise the reference called with it. CPU backend and
 * the serial reference only. */
typedef enum { ATA_NON_UNIT = 0, ATA_UNIT = 1, ATA_NON_UNIT_INV = 2 } ata_diag;

/* Pull over CSR: T holds at least the `uplo` triangle (other entries are
 * ignored). Non-unit needs every diagonal stored and nonzero. A row's
 * products are subtracted far to near (lower: in stored order; upper: in
 * reverse stored order), as every pull executor of the runtime does. */
ATA_API ata_status ata_ref_sptrsv_csr(const ata_csr *T, ata_uplo uplo, ata_diag diag,
                              const double *b, double *x);
/* Push over CSC: Tc is the CSC of the triangular matrix (CSR of T^T). */
ATA_API ata_status ata_ref_sptrsv_csc(const ata_csr *Tc, ata_uplo uplo, ata_diag diag,
                              const double *b, double *x);
/* ILU0 in place on A's pattern (row-oriented left-looking, IKJ): afterwards
 * the strict lower part is L (unit diagonal implied) and the upper part
 * with the diagonal is U. Zero pivot -> ATA_ERR_ZERO_PIVOT naming the row
 * (an Inf or NaN pivot, from overflow: ATA_ERR_NONFINITE). */
ATA_API ata_status ata_ref_ilu0(ata_csr *A);
/* y = A x (ATA_ERR_ARG on NULL arguments). */
ATA_API ata_status ata_ref_spmv(const ata_csr *A, const double *x, double *y);

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
    ATA_POLICY_CHAIN,        /* blocks of chained consecutive rows, by block level,
                                solved in place (CPU backend only) */
    ATA_POLICY_AUTO,         /* the default: chooses per plan (see
                                ata_plan_choice; on the CPU its first
                                ATA_AUTO_TUNE_SOLVES one-column solves
                                decide: pairs of solves on all workers and
                                on one in turn, the second of each timed;
                                the first 4 where one worker took 1.5x
                                all workers' time or more) */
    ATA_POLICY_COUNT
} ata_policy;

#define ATA_AUTO_TUNE_SOLVES 12
ATA_API const char *ata_policy_name(ata_policy p);
/* What a plan made with ATA_POLICY_AUTO chose and why (policy, S, CPU
 * workers and the timings that decided them), or for another policy what
 * ran; a string the plan owns, valid until it is destroyed. */
typedef struct ata_plan ata_plan;
ATA_API const char *ata_plan_choice(const ata_plan *plan);
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

/* Analysis: T holds at least the `uplo` triangle (other entries ignored);
 * the plan keeps its own copy of what it needs, T may be freed after. */
ATA_API ata_status ata_sptrsv_plan_create(ata_context *ctx, const ata_csr *T,
                                  const ata_plan_options *opt, ata_plan **out);
/* Solve T x = b. b and x are host arrays of length n (may not alias). */
ATA_API ata_status ata_sptrsv(ata_plan *plan, const double *b, double *x);
ATA_API void ata_plan_destroy(ata_plan *plan);
/* Several right-hand sides (cuSPARSE SpSM / LAPACK layout): B and X are
 * column-major n x nrhs host arrays with leading dimensions ldb, ldx >= n;
 * column c of B is B + c*ldb. Column by column bitwise equal to ata_sptrsv
 * (pull); the CPU backend solves all columns of a row together, reading the
 * matrix once per solve. B and X may not overlap. */
ATA_API ata_status ata_sptrsv_multi(ata_plan *plan, int nrhs, const double *B, int ldb,
                                    double *X, int ldx);
/* New values on the plan's pattern (cusparseSpSV_updateMatrix): T has the
 * pattern of the matrix the plan was made from (same rowptr and columns);
 * no new analysis. */
ATA_API ata_status ata_sptrsv_plan_update_values(ata_plan *plan, const ata_csr *T);

/* Memory spaces and streams. Pointers passed with ATA_MEM_DEVICE are device
 * memory of the context's GPU (cudaMalloc/hipMalloc, or ata_vec_alloc); on the
 * CPU backend "device" memory is host memory. `stream` (cudaStream_t /
 * hipStream_t, NULL: the context's own stream) orders the solve after the
 * work already queued on it, and later work on it after the solve; the call
 * still returns after the solve, having read back one device status word
 * (zero pivot / non-finite row), and never copies b or x to the host. */
typedef enum { ATA_MEM_HOST = 0, ATA_MEM_DEVICE = 1 } ata_memspace;
typedef struct {
    ata_memspace mem;       /* where b and x are; default ATA_MEM_HOST */
    void *stream;           /* GPU stream for device pointers; NULL: the context's */
    int nrhs;               /* columns; default 1 */
    int ldb, ldx;           /* leading dimensions (column-major); 0: n */
    /* Appended: 1 solves with the transpose, T^T x = b (cuSPARSE's
     * op(A) = A^T; adjoint codes, PETSc's MatSolveTranspose), without
     * forming T^T: the plan's triangle read the other way (pull becomes
     * push and back) under a schedule of the reversed DAG, made at the
     * first transposed solve and kept (new values drop it). ata_factor:
     * (L U)^T x = b, i.e. U^T then L^T. Default 0. */
    int transpose;
} ata_solve_args;
ATA_API ata_solve_args ata_solve_defaults(void);
/* x = T \ b with the memory space, stream and columns of `args` (NULL: the
 * defaults, i.e. ata_sptrsv). */
ATA_API ata_status ata_sptrsv_ex(ata_plan *plan, const double *b, double *x, const ata_solve_args *args);
/* n doubles in the context's memory space (device memory on GPU backends,
 * zeroed); upload/download copy n doubles host <-> that space. */
ATA_API ata_status ata_vec_alloc(ata_context *ctx, size_t n, double **v);
ATA_API void ata_vec_free(ata_context *ctx, double *v);
ATA_API ata_status ata_vec_upload(ata_context *ctx, double *dst, const double *src_host, size_t n);
ATA_API ata_status ata_vec_download(ata_context *ctx, double *dst_host, const double *src, size_t n);

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
    size_t plan_bytes;      /* beyond the matrix: levels, order, flags (and,
                               where a plan reads float copies, the double
                               copy of its triangle it keeps for new values
                               and transposed solves, read by neither; and a
                               factor's chain plan on several CPU workers, its
                               copy of the factor's triangle in worker order) */
    size_t matrix_bytes;    /* the triangle it reads: its copy, or (a factor's
                               plans on the CPU) the factors, in place; values
                               counted as read (4 bytes where the plan reads
                               float copies: ATA_PRECISION_MIXED on the CPU) */
    double T_l, T_u;        /* Eq. 5.2 inputs (seconds), 0 if S was fixed or the policy does not use S */
    double last_solve_s;    /* the last ata_sptrsv's execution on the backend,
                               without host<->device copies of b and x */
    ata_policy policy;
    ata_traversal traversal;
    int threads_used;       /* CPU: workers a solve of this plan uses; 1 when
                               the measured costs (T_u, T_l, waking the pool)
                               say threads cannot gain (runs on the calling
                               thread); decided only when S is auto. 0: GPU */
    /* S auto: T_l and T_u are medians of probe_reps probes; their spread.
     * probe_cached: 1 if they came from the probe cache file (README). */
    double T_l_min, T_l_max, T_u_min, T_u_max;
    int probe_reps;
    int probe_cached;
} ata_plan_info;

ATA_API ata_status ata_plan_get_info(const ata_plan *plan, ata_plan_info *info);

/* ILU0 through the runtime (pull, row DAG of A's lower pattern). A must be
 * square with every diagonal stored. `opt` gives policy and S (uplo, diag
 * and traversal are ignored). *LU gets the factors in one CSR on A's pattern
 * (strict lower: L with unit diagonal; upper with diagonal: U). Policy auto
 * on the CPU backend factors with the serial loop (ata_ref_ilu0: the same
 * bits): a single factorisation cannot win back the analysis, which alone
 * costs two to three times the serial loop; the split API
 * (ata_factor_setup, then ata_factor_update_values) is the parallel path
 * for repeated ones. */
ATA_API ata_status ata_spilu0(ata_context *ctx, const ata_csr *A,
                      const ata_plan_options *opt, ata_csr **LU);
/* Same, overwriting A's values. */
ATA_API ata_status ata_spilu0_inplace(ata_context *ctx, ata_csr *A,
                              const ata_plan_options *opt);

/* ------------------------------------------------------------------ */
/* PCG (Saad Alg. 9.1)                                                 */
/* ------------------------------------------------------------------ */
typedef enum { ATA_PC_ILU0 = 0, ATA_PC_IC0, ATA_PC_NONE, ATA_PC_JACOBI } ata_precond;
typedef enum { ATA_REORDER_NONE = 0, ATA_REORDER_RCM, ATA_REORDER_ND } ata_reorder;
/* The Krylov method of the solver below (named ata_pcg_* for its first
 * method): CG for symmetric positive definite A; BiCGStab (van der Vorst)
 * and restarted GMRES(m) (Saad and Schultz) for any nonsingular A, both
 * right-preconditioned, so rtol is on the unpreconditioned residual
 * ||b - A x|| / ||b||, as PETSc's KSPBCGS / KSPGMRES with -ksp_pc_side right. */
typedef enum { ATA_KSP_CG = 0, ATA_KSP_BICGSTAB, ATA_KSP_GMRES } ata_ksp;

/* ------------------------------------------------------------------ */
/* Incomplete factorisation, setup once / solve many / update values    */
/* ------------------------------------------------------------------ */
/* Diagonal shift on a bad pivot (PETSc's -pc_factor_shift_type, CLI
 * --shift): the factorisation is redone on a shifted diagonal, the shift
 * growing until every pivot is acceptable (at most 40 tries).
 *   NONZERO: a zero or non-finite pivot is bad; a_ii + s, s starting at
 *     shift_amount (0: 1e-10 x max|a_ii|), x10 per retry.
 *   POSITIVE_DEFINITE: a pivot <= 0 (or non-finite) is bad (Manteuffel);
 *     a_ii + s |a_ii| (s max|a_jj| where a_ii = 0), s starting at
 *     shift_amount (0: 1e-3), x2 per retry. For SPD matrices that are not
 *     M-matrices (LFAT5, bcsstk13), where plain ILU0/IC0 is indefinite. */
typedef enum { ATA_SHIFT_NONE = 0, ATA_SHIFT_NONZERO, ATA_SHIFT_POSITIVE_DEFINITE } ata_shift;
/* Precision of the incomplete factors (ILU0 only). DOUBLE: as computed.
 * MIXED: factored in double as always (shift strategy and pivot checks
 * included), then every value of L and U (U's pivots as the solves use
 * them) rounded to float once per factorisation; every solve reads the
 * rounded values and computes in double. The CPU backend's solve plans
 * keep them as floats (4 bytes a value instead of 8 in each solve's
 * traffic); the serial reference and the GPU backends keep the rounded
 * values as doubles (the same numbers, no byte saving: fp32 storage on GPUs
 * is not built yet). A factor entry beyond float's range is an error
 * (ATA_ERR_NONFINITE, naming the row). IC0 and Jacobi: ATA_ERR_UNSUPPORTED. */
typedef enum { ATA_PRECISION_DOUBLE = 0, ATA_PRECISION_MIXED = 1 } ata_precision;
typedef struct {
    ata_precond type;        /* ATA_PC_ILU0 (default) or ATA_PC_IC0 */
    ata_shift shift;         /* default ATA_SHIFT_NONE (PETSc's -pc_factor_shift_type) */
    double shift_amount;     /* 0: the default amount for the shift type */
    ata_plan_options plan;   /* policy, S, R, traversal for the factorisation and both solves */
    /* Appended: the factors' precision (default ATA_PRECISION_DOUBLE). */
    ata_precision precision;
} ata_factor_options;
typedef struct ata_factor ata_factor;   /* incomplete factors + their L and U solve plans */
ATA_API ata_factor_options ata_factor_defaults(void);
/* Analysis (DAG, plans for the factorisation and the L and U solves), then the
 * first numeric factorisation. A square, every diagonal stored; the handle
 * keeps what it needs (A may be freed after). ctx NULL: the serial reference
 * (ata_ref_ilu0 and ata_ref_sptrsv_csr). type ATA_PC_JACOBI is accepted too
 * (x = D^{-1} b, D = diag(A)).
 * On every error but one, *out is NULL. A zero/non-finite pivot (after the
 * shift strategy, if any, gave up): ATA_ERR_ZERO_PIVOT, ata_last_error names
 * the row and the shift option, AND *out holds a live handle (analysis done,
 * no valid factors): ata_factor_pivot_row gives the row, ata_factor_solve
 * refuses with ATA_ERR_ZERO_PIVOT, ata_factor_update_values may be retried;
 * the caller must ata_factor_destroy it. */
ATA_API ata_status ata_factor_setup(ata_context *ctx, const ata_csr *A, const ata_factor_options *opt, ata_factor **out);
/* New values on the setup pattern: val[] in A's CSR order (nnz of the setup matrix). Refactor,
 * no new analysis. On a zero pivot returns ATA_ERR_ZERO_PIVOT and the handle stays usable for
 * another update. ILU0 on the CPU backend: the first ATA_FACTOR_TRIALS factorisations (setup's
 * included) alternate two row kernels of the same bits, timed, and the faster stays. */
#define ATA_FACTOR_TRIALS 4
ATA_API ata_status ata_factor_update_values(ata_factor *F, const double *val);
/* x = (L U)^{-1} b (IC0: (C C^T)^{-1} b); host arrays of length n; b and x may not alias. */
ATA_API ata_status ata_factor_solve(ata_factor *F, const double *b, double *x);
/* Row of the last zero/non-finite pivot found by setup/update (-1 if none). */
ATA_API int ata_factor_pivot_row(const ata_factor *F);
ATA_API ata_status ata_factor_get_info(const ata_factor *F, ata_plan_info *L, ata_plan_info *U);
/* The factor's L and U solve plans (NULL where it has none: Jacobi's U),
 * owned by F: for ata_plan_get_info and ata_plan_choice. */
ATA_API void ata_factor_plans(const ata_factor *F, const ata_plan **L, const ata_plan **U);
ATA_API void ata_factor_destroy(ata_factor *F);
/* Several right-hand sides (column-major, see ata_sptrsv_multi), and the
 * memory-space/stream form (see ata_sptrsv_ex). */
ATA_API ata_status ata_factor_solve_multi(ata_factor *F, int nrhs, const double *B, int ldb,
                                          double *X, int ldx);
ATA_API ata_status ata_factor_solve_ex(ata_factor *F, const double *b, double *x, const ata_solve_args *args);
/* The diagonal shift the last factorisation used (0: none) and its retries. */
ATA_API double ata_factor_shift_used(const ata_factor *F, int *retries);

typedef struct {
    double rtol;            /* ||b - Ax|| / ||b|| <= rtol; default 1e-6 */
    double atol;            /* or ||b - Ax|| <= atol; default 0 */
    int maxit;              /* default 2000 */
    int use_x0;             /* 0: x0 = 0 (default); 1: start from x */
    ata_precond precond;
    ata_reorder reorder;
    ata_plan_options plan;  /* policy, S, R, traversal of the L and U solves */
    int keep_history;       /* record the residual of every iteration */
    /* Appended fields (defaults from ata_pcg_defaults): */
    ata_shift shift;        /* ILU0/IC0 breakdown: see ata_shift; CLI --shift */
    double shift_amount;    /* 0: the default for the shift type */
    double dtol;            /* stop as diverged when ||r_k|| > dtol ||r_0||
                               (recurrence residual; PETSc's dtol); default 1e5,
                               0 disables */
    /* Called at iteration 0 and after every iteration with the recurrence's
     * relative residual ||r_k|| / ||b|| (not the true residual); NULL: none. */
    void (*monitor)(int it, double relres, void *ctx);
    void *monitor_ctx;
    /* Appended: the method (default ATA_KSP_CG) and GMRES's restart length
     * (Krylov vectors kept before a restart; default 30, PETSc's). With
     * BiCGStab and GMRES the factors may have pivots of either sign (no
     * INDEFINITE_PC check); the residual reported every iteration is the
     * method's unpreconditioned residual (GMRES: its least-squares
     * estimate). */
    ata_ksp method;
    int restart;
    /* Appended: the precision of the ILU0 factors (see ata_precision;
     * default ATA_PRECISION_DOUBLE), for every method. */
    ata_precision precision;
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
    /* Appended: phase breakdown of the solve, in seconds, summed over its
     * iterations (divide by `iterations` for per iteration): L and U solves
     * of the preconditioner (Jacobi: L_solve_s), SpMV (with its fused dot),
     * vector operations (dots, axpby, the fused update). */
    double L_solve_s, U_solve_s, spmv_s, vec_s;
    double shift;           /* diagonal shift the factorisation used (0: none) */
    int shift_retries;
} ata_pcg_result;

ATA_API ata_pcg_options ata_pcg_defaults(void);
/* Solve A x = b. A square, symmetric positive definite expected. One call
 * = ata_pcg_setup + ata_pcg_solve + ata_pcg_destroy (bitwise the same x). */
ATA_API ata_status ata_pcg(ata_context *ctx, const ata_csr *A, const double *b,
                   double *x, const ata_pcg_options *opt, ata_pcg_result *res);
ATA_API void ata_pcg_result_free(ata_pcg_result *res);
ATA_API const char *ata_precond_name(ata_precond p);
ATA_API const char *ata_reorder_name(ata_reorder r);
/* "ilu0", "ic0", "none", "jacobi" / "none", "rcm", "nd" (any case). */
ATA_API ata_status ata_precond_from_name(const char *name, ata_precond *out);
ATA_API ata_status ata_reorder_from_name(const char *name, ata_reorder *out);
ATA_API const char *ata_shift_name(ata_shift s);
/* "cg", "bicgstab" (also "bcgs", PETSc's name), "gmres" (any case). */
ATA_API const char *ata_ksp_name(ata_ksp m);
ATA_API ata_status ata_ksp_from_name(const char *name, ata_ksp *out);
/* "none", "nonzero", "positive-definite" (also "positive_definite", "pd"). */
ATA_API ata_status ata_shift_from_name(const char *name, ata_shift *out);
/* "double", "mixed" (any case). */
ATA_API const char *ata_precision_name(ata_precision p);
ATA_API ata_status ata_precision_from_name(const char *name, ata_precision *out);

/* Setup once / solve many / update values (PETSc's KSPSetUp/KSPSolve and
 * SAME_NONZERO_PATTERN). Setup: reordering, factorisation, the L and U
 * plans, the level-order relabelling, the SpMV operator; the handle keeps
 * what it needs (A may be freed after). ctx NULL: the serial reference.
 * A breakdown of the factorisation fails the setup (*out NULL). */
typedef struct ata_pcg_solver ata_pcg_solver;
ATA_API ata_status ata_pcg_setup(ata_context *ctx, const ata_csr *A, const ata_pcg_options *opt,
                                 ata_pcg_solver **out);
/* Solve A x = b (host arrays) with the setup's options; `res` (may be NULL)
 * as ata_pcg's, its analysis_s / factor_s those of the setup (factor_s: of
 * the last update). Free res->history with ata_pcg_result_free. */
ATA_API ata_status ata_pcg_solve(ata_pcg_solver *s, const double *b, double *x, ata_pcg_result *res);
/* New values on the setup pattern, val[] in the setup matrix's CSR order:
 * refactor (same shift strategy), no new analysis. On failure the solver
 * refuses to solve until an update succeeds. */
ATA_API ata_status ata_pcg_update_values(ata_pcg_solver *s, const double *val);
/* Change rtol, atol and maxit for later solves. */
ATA_API ata_status ata_pcg_set_tolerances(ata_pcg_solver *s, double rtol, double atol, int maxit);
ATA_API void ata_pcg_destroy(ata_pcg_solver *s);
/* The preconditioner's L and U solve plans (NULL where there are none),
 * owned by s: for ata_plan_get_info and ata_plan_choice (policy auto times
 * its first solves, so its choice is final after a few iterations). */
ATA_API void ata_pcg_plans(const ata_pcg_solver *s, const ata_plan **L, const ata_plan **U);

#ifdef __cplusplus
}
#endif
#endif /* ATA_H */
