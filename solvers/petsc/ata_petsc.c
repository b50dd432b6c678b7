/*
 * ata_petsc.c - ATA registered as PETSc's "ata" factorisation package for
 * ILU(0) and ICC(0) of MATSEQAIJ (see ata_petsc.h).
 *
 * The factor is a bare Mat with its own type name and the few operations a
 * PCILU/PCICC uses: symbolic (checks only: ATA's analysis needs the values
 * of the first factorisation, so it is deferred, PETSc's "trivial
 * symbolic"), numeric (first call: ATA analysis + factorisation; later
 * calls with the same pattern: refactor on the new values without a new
 * analysis), solve, matsolve (several right-hand sides), view, getinfo,
 * destroy. No ordering is used (natural,
 * as PETSc's own ILU(0) default), so PETSc passes none.
 *
 * Failures map to PETSc's: a zero pivot becomes MAT_FACTOR_NUMERIC_ZEROPIVOT
 * on the factor (KSP then reports DIVERGED_PC_FAILED), a missing diagonal
 * MAT_FACTOR_STRUCT_ZEROPIVOT; with -ksp_error_if_not_converged (the Mat's
 * erroriffailure) they are errors, as in PETSc's own ILU.
 *
 * PETSc's values are read as ATA's doubles, so only a PETSc with real double
 * scalars builds this file (#error below). Its indices may be 32- or 64-bit:
 * 32-bit ones are ATA's as they are; 64-bit ones are narrowed once per
 * analysis (ata_petsc_idx.h), or the factorisation stops with a PETSc error
 * naming ATA's limit (2^31-1) when the block does not fit.
 */
#include "ata_petsc.h"
#include "ata.h"
#include "ata_petsc_idx.h"
#include <petsc/private/matimpl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(PETSC_USE_REAL_DOUBLE) || defined(PETSC_USE_COMPLEX)
#error "ata_petsc: this PETSc's PetscScalar is not real double (configured with --with-scalar-type=complex or --with-precision other than double); ATA factors real double matrices only: build the plugin against a real, double-precision PETSc"
#endif
_Static_assert(sizeof(PetscScalar) == sizeof(double), "ata_petsc: PetscScalar must be double");
_Static_assert(sizeof(PetscInt) == 4 || sizeof(PetscInt) == 8, "ata_petsc: PetscInt of 4 or 8 bytes");

#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

typedef struct {
    /* settings, from the options database */
    ata_backend backend;
    ata_policy policy;
    int S, threads, device;
    ata_wait_policy wait;
    ata_precision precision;  /* mixed: factors stored in fp32, sums in fp64 */
    ata_shift shift;
    double shift_amount;
    MatFactorType ftype;
    /* state */
    ata_context *ctx;
    ata_factor *F;
    PetscObjectState nzstate; /* A's nonzero state the analysis was made for */
    int n, nnz;
    int nfactor, nsolve;      /* numeric factorisations, solves */
    double setup_s;           /* first factorisation: analysis + numeric */
    double context_s;         /* creating the context (backend, workers) */
    double refactor_s;        /* later factorisations on new values, all */
} Mat_ATA;

/* ------------------------------------------------------------------ */
/* Placement: ranks on this node, from the launcher's environment       */
/* ------------------------------------------------------------------ */
/* Not MPI_Comm_split_type: factors are created per block, and ranks may
 * hold different numbers of blocks, so nothing here may be collective. */
static int env_int(const char *const names[], int dflt)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v);
    }
    return dflt;
}

static int node_rank(void)
{
    static const char *const n[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                    "SLURM_LOCALID", "PMI_LOCAL_RANK", NULL};
    int r = env_int(n, 0);
    return r < 0 ? 0 : r;
}

static int node_size(void)
{
    static const char *const n[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                    "SLURM_NTASKS_PER_NODE", "PMI_LOCAL_SIZE", NULL};
    int s = env_int(n, 1);
    return s < 1 ? 1 : s;
}

/* CPU workers when none are asked for: OMP_NUM_THREADS if set (ATA reads
 * it), else this node's cores shared evenly by its ranks. */
static int default_threads(void)
{
    const char *omp = getenv("OMP_NUM_THREADS");
    if (omp && *omp) return 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = (int)(cores > 0 ? cores : 1) / node_size();
    return t < 1 ? 1 : t;
}

/* Whether a GPU of backend `b` can be there at all: its driver's device
 * node (CUDA: /dev/nvidiactl or /dev/nvidia0, or WSL's /dev/dxg; HIP:
 * /dev/kfd). Without one the probe below is skipped: it would load the
 * backend module and, through it, the vendor's runtime and sparse libraries
 * only to find no device (45-130 ms of the first factorisation on a machine
 * with the CUDA toolkit and no GPU, measured in a PETSc program). */
static int gpu_node_present(ata_backend b)
{
    static const char *const cuda[] = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", NULL};
    static const char *const hip[] = {"/dev/kfd", NULL};
    const char *const *nodes = b == ATA_BACKEND_CUDA ? cuda : b == ATA_BACKEND_HIP ? hip : NULL;
    for (int i = 0; nodes && nodes[i]; i++)
        if (access(nodes[i], F_OK) == 0) return 1;
    return 0;
}

/* ata_backend_available once per process and backend (it creates and
 * destroys a context: on a GPU, a device context and library handles). */
static int gpu_available(ata_backend b)
{
    static int avail[4] = {-1, -1, -1, -1};
    if (avail[b] < 0) avail[b] = gpu_node_present(b) && ata_backend_available(b);
    return avail[b];
}

/* Number of GPUs of `b` this process sees, probed once by creating
 * contexts on devices 0, 1, ... until one fails. */
static int gpu_count(ata_backend b)
{
    static int count[4] = {-1, -1, -1, -1};
    if (count[b] >= 0) return count[b];
    int d = 0;
    for (; d < 64; d++) {
        ata_context_options o = ata_context_defaults();
        o.backend = b;
        o.device = d;
        o.threads = 1;
        ata_context *c;
        if (ata_context_create(&o, &c) != ATA_OK) break;
        ata_context_destroy(c);
    }
    return count[b] = d;
}

/* The context of one factor: one device per rank (rank on the node modulo
 * the devices it sees) unless -mat_ata_device names one. */
static PetscErrorCode ata_petsc_context(Mat_ATA *d)
{
    ata_context_options o = ata_context_defaults();
    PetscFunctionBegin;
    o.backend = d->backend;
    o.threads = d->threads >= 0 ? d->threads : default_threads();
    o.wait_policy = d->wait;
    if (o.backend == ATA_BACKEND_AUTO) {
        if (gpu_available(ATA_BACKEND_CUDA)) o.backend = ATA_BACKEND_CUDA;
        else if (gpu_available(ATA_BACKEND_HIP)) o.backend = ATA_BACKEND_HIP;
        else o.backend = ATA_BACKEND_CPU;
    }
    if (o.backend == ATA_BACKEND_CUDA || o.backend == ATA_BACKEND_HIP) {
        int ndev = d->device >= 0 ? 0 : gpu_count(o.backend);
        o.device = d->device >= 0 ? d->device : (ndev > 0 ? node_rank() % ndev : 0);
    }
    double t0 = MPI_Wtime();
    ata_status st = ata_context_create(&o, &d->ctx);
    PetscCheck(st == ATA_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "ata: context (backend %s, device %d): %s: %s",
               ata_backend_name(o.backend), o.device, ata_status_string(st), ata_last_error());
    d->context_s = MPI_Wtime() - t0;
    d->device = o.device;
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */
/* The plain names (-mat_ata_policy) apply to every factor; the factor's
 * prefix (-sub_mat_ata_policy under block Jacobi) overrides them. Both are
 * read in one PetscOptionsBegin so -help lists them with their values. */
static PetscErrorCode ata_petsc_options(Mat B, Mat A, Mat_ATA *d)
{
    const char *prefix = B->factorprefix ? B->factorprefix : ((PetscObject)A)->prefix;
    const char *policies[ATA_POLICY_COUNT], *backends[4], *const waits[3] = {"default", "active", "passive"};
    const char *const precisions[2] = {"double", "mixed"};   /* ATA_PRECISION_DOUBLE, _MIXED */
    PetscInt policy = ATA_POLICY_AUTO, backend = ATA_BACKEND_AUTO, S = 0, threads = -1, device = -1, wait = ATA_WAIT_DEFAULT;
    PetscInt precision = ATA_PRECISION_DOUBLE;
    PetscBool set;

    PetscFunctionBegin;
    for (int p = 0; p < ATA_POLICY_COUNT; p++) policies[p] = ata_policy_name((ata_policy)p);
    for (int b = 0; b < 4; b++) backends[b] = ata_backend_name((ata_backend)b);
    /* plain names first: the defaults the prefixed ones start from */
    PetscCall(PetscOptionsGetEList(NULL, NULL, "-mat_ata_policy", policies, ATA_POLICY_COUNT, &policy, &set));
    PetscCall(PetscOptionsGetEList(NULL, NULL, "-mat_ata_backend", backends, 4, &backend, &set));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ata_S", &S, &set));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ata_threads", &threads, &set));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_ata_device", &device, &set));
    PetscCall(PetscOptionsGetEList(NULL, NULL, "-mat_ata_wait_policy", waits, 3, &wait, &set));
    PetscCall(PetscOptionsGetEList(NULL, NULL, "-mat_ata_precision", precisions, 2, &precision, &set));

    PetscOptionsBegin(PetscObjectComm((PetscObject)B), prefix, "ATA ILU(0)/ICC(0) factorisation options", "Mat");
    PetscCall(PetscOptionsEList("-mat_ata_policy", "ATA aggregation policy of the triangular solves and the factorisation",
                                "ata_plan_options", policies, ATA_POLICY_COUNT, policies[policy], &policy, NULL));
    PetscCall(PetscOptionsEList("-mat_ata_backend", "ATA backend (auto: cuda, else hip, else cpu)", "ata_context_options",
                                backends, 4, backends[backend], &backend, NULL));
    PetscCall(PetscOptionsInt("-mat_ata_S", "adaptive-task size (0: automatic, Eq. 5.1/5.2)", "ata_plan_options", S, &S, NULL));
    PetscCall(PetscOptionsInt("-mat_ata_threads", "CPU workers per factor (-1: cores / ranks on the node, or OMP_NUM_THREADS)",
                              "ata_context_options", threads, &threads, NULL));
    PetscCall(PetscOptionsInt("-mat_ata_device", "GPU of this rank (-1: rank on the node modulo the devices seen)",
                              "ata_context_options", device, &device, NULL));
    PetscCall(PetscOptionsEList("-mat_ata_wait_policy",
                                "how idle CPU workers wait (default: spin ~50-100 us then sleep, or ATA_WAIT_POLICY; "
                                "active: spin up to 10 ms between solves; passive: sleep at once)",
                                "ata_context_options", waits, 3, waits[wait], &wait, NULL));
    PetscCall(PetscOptionsEList("-mat_ata_precision",
                                "factor storage (double; mixed: ILU(0) factors rounded to float once per factorisation, "
                                "sums in double: fewer bytes per solve, a slightly different preconditioner)",
                                "ata_factor_options", precisions, 2, precisions[precision], &precision, NULL));
    PetscOptionsEnd();
    PetscCheck(S >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_ata_S %d: must be >= 0 (0: automatic)", (int)S);
    d->policy = (ata_policy)policy;
    d->backend = (ata_backend)backend;
    d->S = (int)S;
    d->threads = (int)threads;
    d->device = (int)device;
    d->wait = (ata_wait_policy)wait;
    d->precision = (ata_precision)precision;
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Numeric factorisation and solve                                     */
/* ------------------------------------------------------------------ */
static PetscErrorCode ata_petsc_factor_error(Mat F, Mat A, MatFactorError e, int row, const char *why)
{
    PetscFunctionBegin;
    PetscCheck(!A->erroriffailure, PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "ata: %s (row %d)", why, row);
    PetscCall(PetscInfo(F, "ata: %s (row %d)\n", why, row));
    F->factorerrortype = e;
    F->factorerror_zeropivot_value = 0.0;
    F->factorerror_zeropivot_row = row;
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_numeric(Mat F, Mat A, const MatFactorInfo *info)
{
    Mat_ATA *d = (Mat_ATA *)F->data;
    const PetscInt *ia, *ja;
    const PetscScalar *va;
    PetscInt n;
    PetscBool done;
    PetscObjectState nz;
    ata_status st;

    PetscFunctionBegin;
    (void)info;
    F->factorerrortype = MAT_FACTOR_NOERROR;
    PetscCall(MatGetNonzeroState(A, &nz));
    if (d->F && nz != d->nzstate) { /* new pattern: new analysis */
        ata_factor_destroy(d->F);
        d->F = NULL;
    }
    if (A->rmap->n == 0) { /* a rank without rows (more ranks than rows): nothing to factor */
        d->n = d->nnz = 0;
        d->nfactor++;
        PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "ata: cannot get the CSR arrays of the matrix");
    PetscCall(MatSeqAIJGetArrayRead(A, &va));
    if (!d->ctx) PetscCall(ata_petsc_context(d));
    double t0 = MPI_Wtime();
    if (!d->F) {
        /* ATA's 32-bit indices: PETSc's own with a 32-bit PetscInt, else a
         * narrowed copy, freed once ATA has read it (it keeps what it needs) */
        const int *rp, *ci;
        int nnz, *owned, rc;
        char why[200];
        rc = ata_petsc_csr_idx((int64_t)n, ia, ja, sizeof(PetscInt), &rp, &ci, &nnz, &owned, why, sizeof why);
        if (rc != ATA_PETSC_IDX_OK) {
            PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
            PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
            SETERRQ(PETSC_COMM_SELF, rc == ATA_PETSC_IDX_NOMEM ? PETSC_ERR_MEM : PETSC_ERR_SUP,
                    "ata: %d-bit PetscInt: %s", (int)(8 * sizeof(PetscInt)), why);
        }
        ata_csr csr = {(int)n, (int)n, nnz, (int *)rp, (int *)ci, (double *)va};
        ata_factor_options o = ata_factor_defaults();
        o.type = d->ftype == MAT_FACTOR_ICC ? ATA_PC_IC0 : ATA_PC_ILU0;
        o.shift = d->shift;
        o.shift_amount = d->shift_amount;
        o.plan.policy = d->policy;
        o.plan.S = d->S;
        o.precision = d->precision;
        st = ata_factor_setup(d->ctx, &csr, &o, &d->F);
        free(owned);
        if (d->F) { /* also after a zero pivot: the analysis stands, a later update may succeed */
            d->nzstate = nz;
            d->n = (int)n;
            d->nnz = nnz;
            d->setup_s = MPI_Wtime() - t0;
        }
    } else {
        st = ata_factor_update_values(d->F, va);
        d->refactor_s += MPI_Wtime() - t0;
    }
    PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    if (st == ATA_OK) {
        d->nfactor++;
        PetscCall(PetscLogFlops(2.0 * d->nnz));
    } else if (st == ATA_ERR_ZERO_PIVOT || st == ATA_ERR_INDEFINITE_PC) {
        int row = d->F ? ata_factor_pivot_row(d->F) : -1;
        PetscCall(ata_petsc_factor_error(F, A, MAT_FACTOR_NUMERIC_ZEROPIVOT, row, ata_last_error()));
    } else if (st == ATA_ERR_MISSING_DIAG) {
        PetscCall(ata_petsc_factor_error(F, A, MAT_FACTOR_STRUCT_ZEROPIVOT, -1, ata_last_error()));
    } else if (st == ATA_ERR_NONFINITE) {
        PetscCall(ata_petsc_factor_error(F, A, MAT_FACTOR_OTHER, -1, ata_last_error()));
    } else {
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "ata: factorisation: %s: %s", ata_status_string(st), ata_last_error());
    }
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = (L U)^{-1} b, or with transpose (MatSolveTranspose, for
 * KSPSolveTranspose) x = (L U)^{-T} b: ATA solves with U^T and L^T on the
 * same factors (ata_solve_args.transpose), nothing transposed. */
static PetscErrorCode ata_petsc_solve_op(Mat F, Vec b, Vec x, int transpose)
{
    Mat_ATA *d = (Mat_ATA *)F->data;
    const PetscScalar *bb;
    PetscScalar *xx;

    PetscFunctionBegin;
    if (F->rmap->n == 0) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCheck(d->F, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "ata: solve before a successful factorisation");
    PetscCall(VecGetArrayRead(b, &bb));
    PetscCall(VecGetArrayWrite(x, &xx));
    ata_solve_args a = ata_solve_defaults();
    a.transpose = transpose;
    ata_status st = ata_factor_solve_ex(d->F, bb, xx, &a);
    PetscCall(VecRestoreArrayWrite(x, &xx));
    PetscCall(VecRestoreArrayRead(b, &bb));
    PetscCheck(st == ATA_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "ata: solve%s: %s: %s", transpose ? " (transposed)" : "",
               ata_status_string(st), ata_last_error());
    d->nsolve++;
    PetscCall(PetscLogFlops(2.0 * d->nnz - d->n));
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_solve(Mat F, Vec b, Vec x) { return ata_petsc_solve_op(F, b, x, 0); }
static PetscErrorCode ata_petsc_solve_transpose(Mat F, Vec b, Vec x) { return ata_petsc_solve_op(F, b, x, 1); }

/* Several right-hand sides at once: the columns of the dense B and X
 * (column-major, leading dimensions from PETSc) in one ATA solve, which
 * reads the factors once per solve instead of once per column. */
static PetscErrorCode ata_petsc_matsolve(Mat F, Mat B, Mat X)
{
    Mat_ATA *d = (Mat_ATA *)F->data;
    const PetscScalar *bb;
    PetscScalar *xx;
    PetscInt ldb, ldx, nrhs;
    PetscBool dense;

    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &dense, MATSEQDENSE, MATMPIDENSE, NULL));
    PetscCheck(dense, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "ata: MatMatSolve needs dense right-hand sides");
    PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &dense, MATSEQDENSE, MATMPIDENSE, NULL));
    PetscCheck(dense, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "ata: MatMatSolve needs a dense solution matrix");
    PetscCall(MatGetSize(B, NULL, &nrhs));
    if (F->rmap->n == 0 || nrhs == 0) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCheck(d->F, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "ata: solve before a successful factorisation");
    PetscCall(MatDenseGetLDA(B, &ldb));
    PetscCall(MatDenseGetLDA(X, &ldx));
    PetscCheck(nrhs <= INT_MAX && ldb <= INT_MAX && ldx <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "ata: MatMatSolve: right-hand sides or leading dimensions over ATA's 32-bit limit " ATA_PETSC_IDX_LIMIT);
    PetscCall(MatDenseGetArrayRead(B, &bb));
    PetscCall(MatDenseGetArrayWrite(X, &xx));
    ata_status st = ata_factor_solve_multi(d->F, (int)nrhs, bb, (int)ldb, xx, (int)ldx);
    PetscCall(MatDenseRestoreArrayWrite(X, &xx));
    PetscCall(MatDenseRestoreArrayRead(B, &bb));
    PetscCheck(st == ATA_OK, PETSC_COMM_SELF, PETSC_ERR_LIB, "ata: solve (%d right-hand sides): %s: %s", (int)nrhs,
               ata_status_string(st), ata_last_error());
    d->nsolve += (int)nrhs;
    PetscCall(PetscLogFlops(nrhs * (2.0 * d->nnz - d->n)));
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* Symbolic: checks, and the shift the numeric phase will use          */
/* ------------------------------------------------------------------ */
static PetscErrorCode ata_petsc_symbolic_common(Mat F, Mat A, const MatFactorInfo *info)
{
    Mat_ATA *d = (Mat_ATA *)F->data;
    PetscBool missing;
    PetscInt row;

    PetscFunctionBegin;
    PetscCheck(A->rmap->n == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "ata: square matrix required (%d x %d)",
               (int)A->rmap->n, (int)A->cmap->n);
    PetscCheck(info->levels == 0, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "ata: only zero fill (levels 0) is supported; -pc_factor_levels %d asked", (int)info->levels);
    if (info->shifttype == (PetscReal)MAT_SHIFT_NONZERO) d->shift = ATA_SHIFT_NONZERO;
    else if (info->shifttype == (PetscReal)MAT_SHIFT_POSITIVE_DEFINITE) d->shift = ATA_SHIFT_POSITIVE_DEFINITE;
    else d->shift = ATA_SHIFT_NONE;
    /* PETSc's shift amount (100 eps by default) is the NONZERO shift; its
     * POSITIVE_DEFINITE shift is derived from the matrix, as ATA's is when
     * given 0. */
    d->shift_amount = d->shift == ATA_SHIFT_NONZERO ? info->shiftamount : 0.0;
    F->factorerrortype = MAT_FACTOR_NOERROR;
    PetscCall(MatMissingDiagonal(A, &missing, &row));
    if (missing) { /* PETSc's own ILU(0) stops here too; say which row */
        char why[96];
        PetscCall(PetscSNPrintf(why, sizeof why, "matrix is missing diagonal entry in row %d", (int)row));
        PetscCall(ata_petsc_factor_error(F, A, MAT_FACTOR_STRUCT_ZEROPIVOT, (int)row, why));
    }
    if (d->F) { /* a new symbolic phase: a new analysis at the next numeric */
        ata_factor_destroy(d->F);
        d->F = NULL;
    }
    F->ops->solve = ata_petsc_solve;
    F->ops->solvetranspose = ata_petsc_solve_transpose;
    F->ops->matsolve = ata_petsc_matsolve;
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_ilu_symbolic(Mat F, Mat A, IS row, IS col, const MatFactorInfo *info)
{
    PetscFunctionBegin;
    (void)row;
    (void)col;
    PetscCall(ata_petsc_symbolic_common(F, A, info));
    F->ops->lufactornumeric = ata_petsc_numeric;
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_icc_symbolic(Mat F, Mat A, IS perm, const MatFactorInfo *info)
{
    PetscFunctionBegin;
    (void)perm;
    PetscCall(ata_petsc_symbolic_common(F, A, info));
    F->ops->choleskyfactornumeric = ata_petsc_numeric;
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* View, info, destroy                                                 */
/* ------------------------------------------------------------------ */
static PetscErrorCode ata_petsc_view(Mat F, PetscViewer viewer)
{
    Mat_ATA *d = (Mat_ATA *)F->data;
    PetscBool ascii;

    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
    if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
    const char *what = d->ftype == MAT_FACTOR_ICC ? "ICC(0)" : "ILU(0)";
    if (!d->ctx) {
        PetscCall(PetscViewerASCIIPrintf(viewer, "ATA %s: policy %s, S %d%s, backend %s (not factored yet)\n", what,
                                         ata_policy_name(d->policy), d->S, d->S ? "" : " (auto)", ata_backend_name(d->backend)));
        PetscFunctionReturn(PETSC_SUCCESS);
    }
    ata_backend b = ata_context_backend(d->ctx);
    if (b == ATA_BACKEND_CPU) {
        const char *env = getenv("ATA_WAIT_POLICY"); /* what "default" took, if set */
        char wait[96];
        PetscCall(PetscSNPrintf(wait, sizeof wait, "%s",
                                d->wait == ATA_WAIT_ACTIVE ? "active" : d->wait == ATA_WAIT_PASSIVE ? "passive" : "default"));
        if (d->wait == ATA_WAIT_DEFAULT && env && *env)
            PetscCall(PetscSNPrintf(wait, sizeof wait, "default (ATA_WAIT_POLICY=%s)", env));
        PetscCall(PetscViewerASCIIPrintf(viewer, "ATA %s: backend cpu, %d thread%s, wait policy %s, factors %s\n", what,
                                         ata_context_threads(d->ctx), ata_context_threads(d->ctx) == 1 ? "" : "s", wait,
                                         d->precision == ATA_PRECISION_MIXED ? "float (precision mixed)" : "double"));
    } else {
        PetscCall(PetscViewerASCIIPrintf(viewer, "ATA %s: backend %s, device %d, factors %s\n", what, ata_backend_name(b),
                                         d->device, d->precision == ATA_PRECISION_MIXED ? "float (precision mixed)" : "double"));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "ATA: n %d, nnz %d, factorisations %d, solves %d, first setup %.3g s, "
                                     "refactorisations %.3g s, context %.3g s\n",
                                     d->n, d->nnz, d->nfactor, d->nsolve, d->setup_s, d->refactor_s, d->context_s));
    ata_plan_info L, U;
    if (d->F && ata_factor_get_info(d->F, &L, &U) == ATA_OK) {
        const ata_plan_info *pi[2] = {&L, &U};
        for (int k = 0; k < 2; k++)
            PetscCall(PetscViewerASCIIPrintf(viewer,
                                             "ATA %s solve: policy %s, S %d, levels %d, adaptive tasks %d (%d untracked), "
                                             "barriers %d, DAG %s, analysis %.3g s\n",
                                             k ? "U" : "L", ata_policy_name(pi[k]->policy), pi[k]->S, pi[k]->levels,
                                             pi[k]->atasks, pi[k]->untracked, pi[k]->barriers,
                                             pi[k]->dag_class ? pi[k]->dag_class : "?", pi[k]->analysis_s));
        const ata_plan *pl[2];   /* what ran and why (policy auto's choice, its timings) */
        ata_factor_plans(d->F, &pl[0], &pl[1]);
        for (int k = 0; k < 2; k++)
            if (pl[k]) PetscCall(PetscViewerASCIIPrintf(viewer, "ATA %s solve: %s\n", k ? "U" : "L", ata_plan_choice(pl[k])));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_getinfo(Mat F, MatInfoType flag, MatInfo *info)
{
    Mat_ATA *d = (Mat_ATA *)F->data;

    PetscFunctionBegin;
    (void)flag;
    PetscCall(PetscMemzero(info, sizeof *info));
    info->block_size = 1.0;
    info->nz_allocated = info->nz_used = d->nnz;
    info->assemblies = 1.0;
    info->fill_ratio_given = info->fill_ratio_needed = 1.0; /* zero fill */
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_solver_type(Mat F, MatSolverType *type)
{
    PetscFunctionBegin;
    (void)F;
    *type = MATSOLVERATA;
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ata_petsc_destroy(Mat F)
{
    Mat_ATA *d = (Mat_ATA *)F->data;

    PetscFunctionBegin;
    if (d) {
        ata_factor_destroy(d->F);
        ata_context_destroy(d->ctx);
    }
    PetscCall(PetscFree(F->data));
    PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatFactorGetSolverType_C", NULL));
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------------ */
/* MatGetFactor and registration                                       */
/* ------------------------------------------------------------------ */
static PetscErrorCode ata_petsc_get_factor(Mat A, MatFactorType ftype, Mat *out)
{
    Mat B;
    Mat_ATA *d;

    PetscFunctionBegin;
    PetscCheck(ftype == MAT_FACTOR_ILU || ftype == MAT_FACTOR_ICC, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "ata: only ILU(0) and ICC(0) factorisations");
    PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &B));
    PetscCall(MatSetSizes(B, A->rmap->n, A->cmap->n, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(PetscStrallocpy(MATSOLVERATA, &((PetscObject)B)->type_name));
    PetscCall(MatSetUp(B));
    B->factortype = ftype;
    B->trivialsymbolic = PETSC_TRUE; /* the analysis happens at the first numeric factorisation */
    B->canuseordering = PETSC_FALSE;
    B->assembled = PETSC_TRUE;       /* -ksp_view views it */
    B->preallocated = PETSC_TRUE;
    PetscCall(PetscFree(B->solvertype));
    PetscCall(PetscStrallocpy(MATSOLVERATA, &B->solvertype));
    PetscCall(PetscStrallocpy(MATORDERINGNATURAL, (char **)&B->preferredordering[ftype]));
    B->ops->ilufactorsymbolic = ata_petsc_ilu_symbolic;
    B->ops->iccfactorsymbolic = ata_petsc_icc_symbolic;
    B->ops->getinfo = ata_petsc_getinfo;
    B->ops->view = ata_petsc_view;
    B->ops->destroy = ata_petsc_destroy;
    PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatFactorGetSolverType_C", ata_petsc_solver_type));
    PetscCall(PetscNew(&d));
    d->ftype = ftype;
    B->data = d;
    PetscCall(ata_petsc_options(B, A, d));
    *out = B;
    PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ata_petsc_register(void)
{
    static PetscBool done = PETSC_FALSE;

    PetscFunctionBegin;
    if (done) PetscFunctionReturn(PETSC_SUCCESS);
    /* First: MatSolverTypeRegister reads its list head before it
     * initialises the Mat package (which registers PETSc's own solvers),
     * so a first registration from a -dll_append'ed library would drop them. */
    PetscCall(MatInitializePackage());
    PetscCall(MatSolverTypeRegister(MATSOLVERATA, MATSEQAIJ, MAT_FACTOR_ILU, ata_petsc_get_factor));
    PetscCall(MatSolverTypeRegister(MATSOLVERATA, MATSEQAIJ, MAT_FACTOR_ICC, ata_petsc_get_factor));
    done = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscDLLibraryRegister_ata_petsc(void)
{
    PetscFunctionBegin;
    PetscCall(ata_petsc_register());
    PetscFunctionReturn(PETSC_SUCCESS);
}
