/*
 * ata-mpi-pcg.c - PCG over MPI with PETSc, block Jacobi with a sub-ILU(0)
 * by ATA (the plugin, solver type "ata") or by PETSc itself ("petsc"):
 *
 *   mpirun -n P build/ata-mpi-pcg --gen lap3d:100 --partition metis,block
 *
 * Rank 0 reads (or generates) the matrix, partitions it (METIS k-way into P
 * parts, or PETSc's contiguous blocks), relabels the rows so that every
 * part's rows are contiguous (in their old order, or with --order level in
 * the level order of the part's lower-triangular DAG: the order ATA's
 * solves run in; the same ILU(0) for a symmetric pattern), and sends each
 * rank its rows; the matrix is
 * then a PETSc MPIAIJ matrix. KSPCG (--ksp cg, the default), or KSPBCGS /
 * KSPGMRES (--ksp bcgs|gmres, GMRES restart --restart M, default 30) with
 * right preconditioning and the unpreconditioned residual norm, the
 * criterion of ATA's BiCGStab and GMRES; b = 1, x0 = 0, rtol 1e-6. A
 * nonsymmetric matrix is taken as it is (the partition is made on the graph
 * of A + A^T, the matrix is not changed). One row per
 * matrix x partition x solver: iterations, setup (KSPSetUp and the block
 * factorisations), solve time and time per iteration (slowest rank), edge
 * cut, imbalance, the true relative residual in the original numbering, and
 * xdiff: the largest difference of the solution (original numbering) from
 * the first row of the same matrix, relative to its largest entry. The CPU
 * time of the solve per iteration (CLOCK_PROCESS_CPUTIME_ID, slowest rank)
 * is shown beside the wall time: on a shared machine it does not count the
 * time the process waited for a core. Peak RSS (ru_maxrss after the row):
 * the largest rank's and the sum over the ranks.
 * Our own flags come first; everything after them goes to PETSc.
 */
#include <math.h>
#include <metis.h>
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "ata.h"
#include "ata_petsc.h"

#define MAXLIST 8

typedef struct {
    const char *inputs[32];
    int is_gen[32], ninputs;
    const char *parts[MAXLIST];
    int nparts;
    const char *solvers[MAXLIST];
    int nsolvers;
    const char *pc;         /* bjacobi | ilu | jacobi */
    int level_order;        /* --order level */
    double rtol;
    int maxit, reps, quiet;
    const char *csv, *json;
    ata_ksp ksp;            /* --ksp: cg (default), bcgs, gmres */
    int restart;            /* --restart: GMRES's restart length (default 30) */
} opts_t;

typedef struct {
    char matrix[256];
    int n, nnz, P;
    char partition[16], order[8], solver[16];
    long long cut;
    double imbalance;
    int its;
    char reason[40];
    char ksp[16];
    int restart;            /* GMRES's; 0 for cg and bcgs */
    double setup_s, solve_s, per_it_s, relres, xdiff;
    double cpu_per_it_s;    /* process CPU time of the solve per iteration (slowest rank) */
    double rss_max_mb, rss_sum_mb;  /* peak RSS (ru_maxrss) after the row: largest rank, all ranks */
} row_t;

static int usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: mpirun -n P ata-mpi-pcg [flags] [PETSc options]\n"
            "  --matrix FILE     .mtx, .mtx.gz, .rb, .tar.gz (repeatable)\n"
            "  --gen SPEC        lap2d:N, lap3d:N, lap3d27:N, convdiff:N, circuit:N[,perm=SEED] (repeatable; default lap3d:32)\n"
            "  --partition LIST  metis,block (default metis,block): METIS k-way or PETSc's contiguous blocks\n"
            "  --solver LIST     ata,petsc (default ata,petsc): who factors and solves the sub-ILU(0)\n"
            "  --order ORDER     natural (default) or level: rows of a part in their old order, or in the level\n"
            "                    order of the part's lower-triangular DAG\n"
            "  --pc TYPE         bjacobi (default; sub-ILU(0)), ilu (one rank only), jacobi (no factorisation)\n"
            "  --ksp METHOD      cg (default; KSPCG), bcgs (or bicgstab; KSPBCGS) or gmres (KSPGMRES); bcgs and gmres\n"
            "                    with right preconditioning and the unpreconditioned norm (KSPSetPCSide PC_RIGHT,\n"
            "                    KSP_NORM_UNPRECONDITIONED), as ATA's; the same Krylov method for both --solver values\n"
            "                    (--solver picks who factors and solves the sub-ILU(0), PETSc always iterates)\n"
            "  --restart M       GMRES's restart length (default 30, PETSc's; KSPGMRESSetRestart)\n"
            "  --rtol R          relative residual (default 1e-6)\n"
            "  --maxit N         iteration limit (default 5000)\n"
            "  --reps N          solves per row, fastest kept (default 1)\n"
            "  --csv FILE, --json FILE, --quiet\n"
            "peak RSS (rss_max_MB, rss_sum_MB): getrusage's ru_maxrss after the row, the largest rank's and the sum over\n"
            "ranks: a process-wide high-water mark, shared by the earlier rows of the run (one row per run for a\n"
            "clean number); rank 0 also holds the whole input matrix it generated or read and distributed.\n"
            "PETSc options after ours override these settings (e.g. -ksp_type, -ksp_pc_side, -ksp_norm_type).\n"
            "ATA's options are PETSc options: -mat_ata_policy, -mat_ata_backend, -mat_ata_threads, -mat_ata_S, -mat_ata_device.\n");
    return rc;
}

/* The method under PETSc's name (KSPType): cg, bcgs, gmres. */
static const char *ksp_petsc_name(ata_ksp k)
{
    return k == ATA_KSP_GMRES ? "gmres" : k == ATA_KSP_BICGSTAB ? "bcgs" : "cg";
}

static int split_list(char *s, const char **out)
{
    int k = 0;
    for (char *t = strtok(s, ","); t && k < MAXLIST; t = strtok(NULL, ",")) out[k++] = t;
    return k;
}

/* Our flags start with "--"; they are taken out of argv before PETSc sees it. */
static int parse(int *argc, char **argv, opts_t *o)
{
    static char parts[64] = "metis,block", solvers[64] = "ata,petsc";
    int k = 1;
    memset(o, 0, sizeof *o);
    o->pc = "bjacobi";
    o->rtol = 1e-6;
    o->maxit = 5000;
    o->reps = 1;
    o->ksp = ATA_KSP_CG;
    o->restart = 30;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v = i + 1 < *argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout, 0) - 1;
        if (strncmp(a, "--", 2)) { argv[k++] = argv[i]; continue; }
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!v) { fprintf(stderr, "ata-mpi-pcg: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--matrix") || !strcmp(a, "--gen")) {
            if (o->ninputs == 32) { fprintf(stderr, "ata-mpi-pcg: at most 32 inputs\n"); return 2; }
            o->is_gen[o->ninputs] = a[2] == 'g';
            o->inputs[o->ninputs++] = v;
        } else if (!strcmp(a, "--partition")) snprintf(parts, sizeof parts, "%s", v);
        else if (!strcmp(a, "--solver")) snprintf(solvers, sizeof solvers, "%s", v);
        else if (!strcmp(a, "--pc")) o->pc = v;
        else if (!strcmp(a, "--order")) {
            if (strcmp(v, "natural") && strcmp(v, "level")) {
                fprintf(stderr, "ata-mpi-pcg: --order %s: expected natural or level\n", v);
                return 2;
            }
            o->level_order = !strcmp(v, "level");
        }
        else if (!strcmp(a, "--ksp")) {
            if (ata_ksp_from_name(v, &o->ksp) != ATA_OK) {
                fprintf(stderr, "ata-mpi-pcg: --ksp %s: expected cg, bcgs (or bicgstab) or gmres\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--restart")) {
            char *end;
            long r = strtol(v, &end, 10);
            if (end == v || *end || r < 1 || r > 100000) {
                fprintf(stderr, "ata-mpi-pcg: --restart %s: expected a positive integer\n", v);
                return 2;
            }
            o->restart = (int)r;
        }
        else if (!strcmp(a, "--rtol")) o->rtol = atof(v);
        else if (!strcmp(a, "--maxit")) o->maxit = atoi(v);
        else if (!strcmp(a, "--reps")) o->reps = atoi(v);
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--json")) o->json = v;
        else { fprintf(stderr, "ata-mpi-pcg: unknown flag %s (see --help)\n", a); return 2; }
    }
    argv[k] = NULL;
    *argc = k;
    o->nparts = split_list(parts, o->parts);
    o->nsolvers = split_list(solvers, o->solvers);
    if (!o->ninputs) { o->inputs[0] = "lap3d:32"; o->is_gen[0] = 1; o->ninputs = 1; }
    for (int p = 0; p < o->nparts; p++)
        if (strcmp(o->parts[p], "metis") && strcmp(o->parts[p], "block")) {
            fprintf(stderr, "ata-mpi-pcg: --partition %s: expected metis or block\n", o->parts[p]);
            return 2;
        }
    for (int s = 0; s < o->nsolvers; s++)
        if (strcmp(o->solvers[s], "ata") && strcmp(o->solvers[s], "petsc")) {
            fprintf(stderr, "ata-mpi-pcg: --solver %s: expected ata or petsc\n", o->solvers[s]);
            return 2;
        }
    if (strcmp(o->pc, "bjacobi") && strcmp(o->pc, "ilu") && strcmp(o->pc, "jacobi")) {
        fprintf(stderr, "ata-mpi-pcg: --pc %s: expected bjacobi, ilu or jacobi\n", o->pc);
        return 2;
    }
    if (!strcmp(o->pc, "jacobi")) o->nsolvers = 1; /* nothing is factored */
    if (!(o->rtol > 0) || o->maxit < 1 || o->reps < 1) {
        fprintf(stderr, "ata-mpi-pcg: --rtol, --maxit and --reps must be positive\n");
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Partition (rank 0)                                                  */
/* ------------------------------------------------------------------ */
/* Graph of A + A^T without the diagonal (METIS's input; also what the edge
 * cut counts: each undirected edge once). */
static int sym_graph(const ata_csr *A, idx_t **xadj_out, idx_t **adj_out)
{
    ata_csr *At;
    if (ata_csr_transpose(A, &At) != ATA_OK) return -1;
    int n = A->nrows;
    idx_t *xadj = calloc((size_t)n + 1, sizeof *xadj), *adj = malloc(((size_t)A->nnz + At->nnz + 1) * sizeof *adj);
    if (!xadj || !adj) { free(xadj); free(adj); ata_csr_free(At); return -1; }
    for (int i = 0; i < n; i++) {
        int p = A->rowptr[i], pe = A->rowptr[i + 1], q = At->rowptr[i], qe = At->rowptr[i + 1], last = -1;
        xadj[i + 1] = xadj[i];
        while (p < pe || q < qe) {
            int j = q >= qe || (p < pe && A->col[p] <= At->col[q]) ? A->col[p++] : At->col[q++];
            if (j != i && j != last) adj[xadj[i + 1]++] = j;
            last = j;
        }
    }
    ata_csr_free(At);
    *xadj_out = xadj;
    *adj_out = adj;
    return 0;
}

/* part[i] in 0..P-1; the cut (undirected edges between parts) and the
 * imbalance (largest part's rows over the mean). */
static int partition(const ata_csr *A, int P, const char *how, int *part, long long *cut, double *imb)
{
    int n = A->nrows;
    idx_t *xadj, *adj;
    if (sym_graph(A, &xadj, &adj)) return -1;
    if (!strcmp(how, "block") || P == 1) {
        for (int r = 0, i = 0; r < P; r++) /* PETSc's PETSC_DECIDE layout */
            for (int k = 0; k < n / P + (r < n % P); k++) part[i++] = r;
    } else {
        idx_t nv = n, ncon = 1, np = P, obj, opts[METIS_NOPTIONS];
        idx_t *mp = malloc((size_t)n * sizeof *mp);
        METIS_SetDefaultOptions(opts);
        opts[METIS_OPTION_SEED] = 1; /* the same partition every run */
        int rc = mp ? METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &np, NULL, NULL, opts, &obj, mp) : -1;
        if (rc != METIS_OK) {
            fprintf(stderr, "ata-mpi-pcg: METIS_PartGraphKway failed (%d)\n", rc);
            free(mp); free(xadj); free(adj);
            return -1;
        }
        for (int i = 0; i < n; i++) part[i] = (int)mp[i];
        free(mp);
    }
    long long c = 0;
    for (int i = 0; i < n; i++)
        for (idx_t p = xadj[i]; p < xadj[i + 1]; p++) c += part[i] != part[adj[p]];
    *cut = c / 2;
    int *cnt = calloc((size_t)P, sizeof *cnt), mx = 0;
    for (int i = 0; i < n; i++) cnt[part[i]]++;
    for (int r = 0; r < P; r++) mx = cnt[r] > mx ? cnt[r] : mx;
    *imb = (double)mx * P / n;
    free(cnt);
    free(xadj);
    free(adj);
    return 0;
}

/* perm[old] = new: the rows of part 0 first, then part 1..., each part's
 * rows by (level, old index); level 0 for all with natural order, else the
 * row's level in the DAG of the part's strict lower triangle. nloc[r] = rows
 * of part r. Checks that every row is owned exactly once. */
typedef struct { int part, level, row; } relabel_key;

static int relabel_cmp(const void *a, const void *b)
{
    const relabel_key *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int relabel(const ata_csr *A, int P, const int *part, int level_order, int *perm, int *nloc)
{
    int n = A->nrows, ok = 1;
    relabel_key *k = malloc((size_t)n * sizeof *k);
    int *seen = calloc((size_t)n, sizeof *seen);
    if (!k || !seen) ok = 0;
    for (int r = 0; r < P; r++) nloc[r] = 0;
    for (int i = 0; ok && i < n; i++) {
        if (part[i] < 0 || part[i] >= P) { ok = 0; break; }
        int lev = 0;
        for (int q = A->rowptr[i]; level_order && q < A->rowptr[i + 1]; q++) {
            int j = A->col[q];
            if (j < i && part[j] == part[i] && k[j].level + 1 > lev) lev = k[j].level + 1;
        }
        k[i] = (relabel_key){part[i], lev, i};
        nloc[part[i]]++;
    }
    if (ok) qsort(k, (size_t)n, sizeof *k, relabel_cmp);
    for (int i = 0; ok && i < n; i++) perm[k[i].row] = i;
    for (int i = 0; ok && i < n; i++) { /* a bijection: every new row has exactly one owner */
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]++) ok = 0;
    }
    free(k);
    free(seen);
    if (!ok) fprintf(stderr, "ata-mpi-pcg: internal error: the relabelling is not a bijection\n");
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Distribution: rank 0 sends each rank its rows of B = P A P^T         */
/* ------------------------------------------------------------------ */
static PetscErrorCode distribute(const ata_csr *B, const int *nloc, int n, Mat *A_out)
{
    int rank, P;
    MPI_Comm comm = PETSC_COMM_WORLD;
    PetscFunctionBeginUser;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    int m, *rcnt = NULL, *rdsp = NULL, *ecnt = NULL, *edsp = NULL;
    PetscCallMPI(MPI_Scatter(nloc, 1, MPI_INT, &m, 1, MPI_INT, 0, comm));
    if (!rank) {
        rcnt = malloc(P * sizeof *rcnt); rdsp = malloc(P * sizeof *rdsp);
        ecnt = malloc(P * sizeof *ecnt); edsp = malloc(P * sizeof *edsp);
        for (int r = 0, s = 0; r < P; s += nloc[r], r++) {
            rcnt[r] = nloc[r] + 1; /* row pointers of the slice, with its end */
            rdsp[r] = s;
            edsp[r] = B->rowptr[s];
            ecnt[r] = B->rowptr[s + nloc[r]] - B->rowptr[s];
        }
    }
    PetscInt *ia, *ja;
    PetscScalar *va;
    PetscCall(PetscMalloc1(m + 1, &ia));
    PetscCallMPI(MPI_Scatterv(rank ? NULL : B->rowptr, rcnt, rdsp, MPI_INT, ia, m + 1, MPI_INT, 0, comm));
    int e = ia[m] - ia[0];
    for (int i = m; i >= 0; i--) ia[i] -= ia[0];
    PetscCall(PetscMalloc1(e, &ja));
    PetscCall(PetscMalloc1(e, &va));
    PetscCallMPI(MPI_Scatterv(rank ? NULL : B->col, ecnt, edsp, MPI_INT, ja, e, MPI_INT, 0, comm));
    PetscCallMPI(MPI_Scatterv(rank ? NULL : B->val, ecnt, edsp, MPI_DOUBLE, va, e, MPI_DOUBLE, 0, comm));
    PetscCall(MatCreateAIJ(comm, m, m, n, n, 0, NULL, 0, NULL, A_out));
    PetscCall(MatMPIAIJSetPreallocationCSR(*A_out, ia, ja, va));
    PetscCall(MatSeqAIJSetPreallocationCSR(*A_out, ia, ja, va));
    PetscCall(PetscFree(ia));
    PetscCall(PetscFree(ja));
    PetscCall(PetscFree(va));
    free(rcnt); free(rdsp); free(ecnt); free(edsp);
    PetscFunctionReturn(0);
}

/* The solution in the original numbering, on rank 0 (x_old[i] = x_new[perm[i]]). */
static PetscErrorCode gather(Vec x, const int *perm, int n, double *xold)
{
    int rank, P;
    PetscInt lo, hi;
    const PetscScalar *xx;
    MPI_Comm comm = PETSC_COMM_WORLD;
    PetscFunctionBeginUser;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    PetscCall(VecGetOwnershipRange(x, &lo, &hi));
    int m = (int)(hi - lo), *cnt = NULL, *dsp = NULL;
    double *xnew = NULL;
    if (!rank) { cnt = malloc(P * sizeof *cnt); dsp = malloc(P * sizeof *dsp); xnew = malloc((size_t)n * sizeof *xnew); }
    PetscCallMPI(MPI_Gather(&m, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm));
    if (!rank) for (int r = 0, s = 0; r < P; s += cnt[r], r++) dsp[r] = s;
    PetscCall(VecGetArrayRead(x, &xx));
    PetscCallMPI(MPI_Gatherv(xx, m, MPI_DOUBLE, xnew, cnt, dsp, MPI_DOUBLE, 0, comm));
    PetscCall(VecRestoreArrayRead(x, &xx));
    if (!rank) for (int i = 0; i < n; i++) xold[i] = xnew[perm[i]];
    free(cnt); free(dsp); free(xnew);
    PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------ */
/* One solve                                                           */
/* ------------------------------------------------------------------ */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static PetscErrorCode solve_once(Mat A, Vec b, Vec x, const opts_t *o, const char *solver, int *its,
                                 KSPConvergedReason *reason, double *setup_s, double *solve_s, double *cpu_s, row_t *r)
{
    KSP ksp;
    PC pc;
    PetscInt k;
    PetscFunctionBeginUser;
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, o->ksp == ATA_KSP_GMRES ? KSPGMRES : o->ksp == ATA_KSP_BICGSTAB ? KSPBCGS : KSPCG));
    if (o->ksp != ATA_KSP_CG) { /* as ATA's: right-preconditioned, stopping on ||b - A x|| / ||b|| */
        PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
        PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    }
    if (o->ksp == ATA_KSP_GMRES) PetscCall(KSPGMRESSetRestart(ksp, o->restart));
    PetscCall(KSPSetTolerances(ksp, o->rtol, PETSC_DEFAULT, PETSC_DEFAULT, o->maxit));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, o->pc));
    if (!strcmp(o->pc, "ilu")) PetscCall(PCFactorSetMatSolverType(pc, solver));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    double t0 = MPI_Wtime();
    PetscCall(KSPSetUp(ksp));
    if (!strcmp(o->pc, "bjacobi")) { /* after KSPSetUp the blocks exist; they factor at KSPSetUpOnBlocks */
        KSP *sub;
        PetscInt nsub;
        PetscCall(PCBJacobiGetSubKSP(pc, &nsub, NULL, &sub));
        for (PetscInt i = 0; i < nsub; i++) {
            PC spc;
            PetscCall(KSPGetPC(sub[i], &spc));
            PetscCall(PCSetType(spc, PCILU));
            PetscCall(PCFactorSetMatSolverType(spc, solver));
        }
    }
    PetscCall(KSPSetUpOnBlocks(ksp));
    double t1 = MPI_Wtime(), c1 = cpu_now();
    PetscCall(KSPSolve(ksp, b, x));
    double t2 = MPI_Wtime(), c2 = cpu_now(), loc[3] = {t1 - t0, t2 - t1, c2 - c1}, mx[3];
    PetscCallMPI(MPI_Allreduce(loc, mx, 3, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
    *setup_s = mx[0];
    *solve_s = mx[1];
    *cpu_s = mx[2];
    PetscCall(KSPGetIterationNumber(ksp, &k));
    PetscCall(KSPGetConvergedReason(ksp, reason));
    *its = (int)k;
    { /* the method that ran (PETSc options may have changed it): the row's ksp and restart */
        KSPType type;
        PetscBool gmres;
        PetscInt m = 0;
        PetscCall(KSPGetType(ksp, &type));
        PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPGMRES, &gmres));
        if (gmres) PetscCall(KSPGMRESGetRestart(ksp, &m));
        snprintf(r->ksp, sizeof r->ksp, "%s", type);
        r->restart = (int)m;
    }
    PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
}

/* Peak RSS of the ranks in MB (ru_maxrss: a high-water mark), largest and summed. */
static PetscErrorCode peak_rss(double *mx, double *sum)
{
    struct rusage ru;
    double mb = getrusage(RUSAGE_SELF, &ru) ? 0.0 : (double)ru.ru_maxrss / 1024.0;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Allreduce(&mb, mx, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(&mb, sum, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
    PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */
static void print_header(void)
{
    printf("%-24s %9s %10s %3s %-9s %-7s %8s %6s %-6s %6s %-22s %9s %9s %10s %9s %9s %10s %11s %11s %-9s\n", "matrix", "n", "nnz", "P",
           "partition", "order", "cut", "imbal", "solver", "its", "reason", "setup_s", "solve_s", "us/it", "relres", "xdiff",
           "cpu_us/it", "rss_max_MB", "rss_sum_MB", "ksp");
}

static void print_row(const row_t *r)
{
    char k[32];
    if (r->restart) snprintf(k, sizeof k, "%s(%d)", r->ksp, r->restart);
    else snprintf(k, sizeof k, "%s", r->ksp);
    printf("%-24.24s %9d %10d %3d %-9s %-7s %8lld %6.3f %-6s %6d %-22s %9.4f %9.4f %10.2f %9.2e %9.2e %10.2f %11.1f %11.1f %-9s\n", r->matrix, r->n,
           r->nnz, r->P, r->partition, r->order, r->cut, r->imbalance, r->solver, r->its, r->reason, r->setup_s, r->solve_s,
           r->per_it_s * 1e6, r->relres, r->xdiff, r->cpu_per_it_s * 1e6, r->rss_max_mb, r->rss_sum_mb, k);
    fflush(stdout);
}

static int write_csv(const char *path, const row_t *R, int nr)
{
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "ata-mpi-pcg: --csv %s: cannot write\n", path); return -1; }
    fprintf(f, "matrix,n,nnz,P,partition,order,cut,imbalance,solver,iterations,reason,setup_s,solve_s,time_per_iteration_s,relres,xdiff,cpu_time_per_iteration_s,rss_max_mb,rss_sum_mb,ksp,restart\n");
    for (int i = 0; i < nr; i++) {
        const row_t *r = &R[i];
        fprintf(f, "\"%s\",%d,%d,%d,%s,%s,%lld,%.6g,%s,%d,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%d\n", r->matrix, r->n, r->nnz, r->P,
                r->partition, r->order, r->cut, r->imbalance, r->solver, r->its, r->reason, r->setup_s, r->solve_s, r->per_it_s,
                r->relres, r->xdiff, r->cpu_per_it_s, r->rss_max_mb, r->rss_sum_mb, r->ksp, r->restart);
    }
    return fclose(f) ? -1 : 0;
}

static int write_json(const char *path, const row_t *R, int nr, const opts_t *o)
{
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "ata-mpi-pcg: --json %s: cannot write\n", path); return -1; }
    fprintf(f, "{\n  \"command\": \"ata-mpi-pcg\",\n  \"pc\": \"%s\",\n  \"rtol\": %g,\n  \"ksp\": \"%s\",\n  \"restart\": %d,\n  \"runs\": [\n",
            o->pc, o->rtol, ksp_petsc_name(o->ksp), o->ksp == ATA_KSP_GMRES ? o->restart : 0);
    for (int i = 0; i < nr; i++) {
        const row_t *r = &R[i];
        fprintf(f,
                "    {\"matrix\": \"%s\", \"n\": %d, \"nnz\": %d, \"P\": %d, \"partition\": \"%s\", \"order\": \"%s\", \"cut\": %lld, "
                "\"imbalance\": %.6g, \"solver\": \"%s\", \"iterations\": %d, \"reason\": \"%s\", \"setup_s\": %.6g, "
                "\"solve_s\": %.6g, \"time_per_iteration_s\": %.6g, \"relres\": %.6g, \"xdiff\": %.6g, \"cpu_time_per_iteration_s\": %.6g, "
                "\"rss_max_mb\": %.6g, \"rss_sum_mb\": %.6g, \"ksp\": \"%s\", \"restart\": %d}%s\n",
                r->matrix, r->n, r->nnz, r->P, r->partition, r->order, r->cut, r->imbalance, r->solver, r->its, r->reason,
                r->setup_s, r->solve_s, r->per_it_s, r->relres, r->xdiff, r->cpu_per_it_s, r->rss_max_mb, r->rss_sum_mb,
                r->ksp, r->restart, i + 1 < nr ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* One matrix: every partition, every solver                           */
/* ------------------------------------------------------------------ */
static PetscErrorCode run_matrix(const opts_t *o, int in, row_t *rows, int *nrows, int *failed)
{
    int rank, P, n = 0, nnz = 0, ok = 1;
    ata_csr *A = NULL;
    double *x0 = NULL, *xo = NULL, *ax = NULL;
    PetscFunctionBeginUser;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    MPI_Comm_size(PETSC_COMM_WORLD, &P);
    if (!rank) {
        ata_status st = o->is_gen[in] ? ata_gen_from_spec(o->inputs[in], &A) : ata_matrix_read(o->inputs[in], &A);
        if (st == ATA_OK && A->nrows != A->ncols) st = ATA_ERR_NOT_SQUARE;
        if (st != ATA_OK) {
            fprintf(stderr, "ata-mpi-pcg: %s: %s: %s\n", o->inputs[in], ata_status_string(st), ata_last_error());
            ok = 0;
        } else {
            n = A->nrows;
            nnz = A->nnz;
            x0 = malloc((size_t)n * sizeof *x0);
            xo = malloc((size_t)n * sizeof *xo);
            ax = malloc((size_t)n * sizeof *ax);
        }
    }
    PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    if (!ok) { *failed = 1; PetscFunctionReturn(0); }
    PetscCallMPI(MPI_Bcast(&n, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    /* PETSc's own ILU(0) stops the program on a missing diagonal (an error,
     * not a converged reason): its rows are skipped, ATA's still run. */
    int nodiag = -1;
    for (int i = 0; !rank && nodiag < 0 && i < n; i++) {
        int q = A->rowptr[i];
        while (q < A->rowptr[i + 1] && A->col[q] < i) q++;
        if (q == A->rowptr[i + 1] || A->col[q] != i) nodiag = i;
    }
    PetscCallMPI(MPI_Bcast(&nodiag, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    if (nodiag >= 0 && !rank)
        fprintf(stderr, "ata-mpi-pcg: %s: no diagonal entry in row %d: PETSc's ILU(0) would stop the run, its rows are skipped\n",
                o->inputs[in], nodiag);
    int first = *nrows;
    for (int q = 0; q < o->nparts; q++) {
        int *part = NULL, *perm = NULL, *nloc = NULL;
        long long cut = 0;
        double imb = 1.0;
        ata_csr *B = NULL;
        if (!rank) {
            part = malloc((size_t)n * sizeof *part);
            perm = malloc((size_t)n * sizeof *perm);
            nloc = malloc((size_t)P * sizeof *nloc);
            ok = part && perm && nloc && !partition(A, P, o->parts[q], part, &cut, &imb) && !relabel(A, P, part, o->level_order, perm, nloc) &&
                 ata_csr_permute_sym(A, perm, &B) == ATA_OK;
        }
        PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, PETSC_COMM_WORLD));
        if (!ok) { *failed = 1; free(part); free(perm); free(nloc); continue; }
        Mat M;
        Vec b, x;
        PetscCall(distribute(B, nloc, n, &M));
        ata_csr_free(B);
        PetscCall(MatCreateVecs(M, &x, &b));
        PetscCall(VecSet(b, 1.0));
        for (int s = 0; s < o->nsolvers; s++) {
            row_t *r = &rows[(*nrows)++];
            memset(r, 0, sizeof *r);
            const char *base = strrchr(o->inputs[in], '/');
            snprintf(r->matrix, sizeof r->matrix, "%s", base ? base + 1 : o->inputs[in]);
            r->n = n;
            r->nnz = nnz;
            r->P = P;
            snprintf(r->partition, sizeof r->partition, "%s", o->parts[q]);
            snprintf(r->order, sizeof r->order, "%s", o->level_order ? "level" : "natural");
            snprintf(r->solver, sizeof r->solver, "%s", !strcmp(o->pc, "jacobi") ? "-" : o->solvers[s]);
            r->cut = cut;
            r->imbalance = imb;
            r->setup_s = r->solve_s = r->cpu_per_it_s = 1e300;
            KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
            if (nodiag >= 0 && !strcmp(r->solver, "petsc")) {
                (*nrows)--;
                continue;
            }
            for (int rep = 0; rep < o->reps; rep++) {
                double su = 0, so = 0, cs = 0;
                PetscCall(solve_once(M, b, x, o, o->solvers[s], &r->its, &reason, &su, &so, &cs, r));
                r->setup_s = su < r->setup_s ? su : r->setup_s;
                r->solve_s = so < r->solve_s ? so : r->solve_s;
                r->cpu_per_it_s = cs < r->cpu_per_it_s ? cs : r->cpu_per_it_s; /* whole solve, divided below */
            }
            snprintf(r->reason, sizeof r->reason, "%s", KSPConvergedReasons[reason]);
            r->per_it_s = r->its ? r->solve_s / r->its : 0.0;
            PetscCall(peak_rss(&r->rss_max_mb, &r->rss_sum_mb));
            r->cpu_per_it_s = r->its ? r->cpu_per_it_s / r->its : 0.0;
            PetscCall(gather(x, perm, n, xo));
            if (!rank) { /* in the original numbering: ||1 - A x|| / ||1||, and x vs the first row's x */
                double rr = 0, d = 0, mx = 0;
                ata_ref_spmv(A, xo, ax);
                for (int i = 0; i < n; i++) rr += (1.0 - ax[i]) * (1.0 - ax[i]);
                r->relres = sqrt(rr / n);
                if (*nrows - 1 == first) memcpy(x0, xo, (size_t)n * sizeof *x0);
                for (int i = 0; i < n; i++) {
                    double e = fabs(xo[i] - x0[i]), a = fabs(x0[i]);
                    d = e > d || e != e ? e : d;
                    mx = a > mx ? a : mx;
                }
                r->xdiff = mx > 0 ? d / mx : d;
                if (!o->quiet) print_row(r);
            }
            if (reason < 0) *failed = 1;
        }
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&b));
        PetscCall(MatDestroy(&M));
        free(part);
        free(perm);
        free(nloc);
    }
    ata_csr_free(A);
    free(x0);
    free(xo);
    free(ax);
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse(&argc, argv, &o), rank, P, failed = 0, nrows = 0;
    if (rc) return rc < 0 ? 0 : rc;
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(ata_petsc_register());
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    MPI_Comm_size(PETSC_COMM_WORLD, &P);
    if (!strcmp(o.pc, "ilu") && P > 1) {
        if (!rank) fprintf(stderr, "ata-mpi-pcg: --pc ilu needs one rank (use bjacobi)\n");
        PetscCall(PetscFinalize());
        return 2;
    }
    row_t *rows = calloc((size_t)o.ninputs * o.nparts * o.nsolvers, sizeof *rows);
    if (!rank && !o.quiet) print_header();
    for (int in = 0; in < o.ninputs; in++) PetscCall(run_matrix(&o, in, rows, &nrows, &failed));
    if (!rank) {
        if (o.csv && write_csv(o.csv, rows, nrows)) failed = 1;
        if (o.json && write_json(o.json, rows, nrows, &o)) failed = 1;
    }
    free(rows);
    PetscCall(PetscFinalize());
    return failed ? 1 : 0;
}
