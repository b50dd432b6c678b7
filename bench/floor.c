/* floor.c - the bandwidth floor of a PCG iteration and the peak RSS.
 *
 * The floor is a model, not a measurement of traffic: the bytes an
 * iteration must move at least (every array it touches read or written
 * once, as pcg.c and krylov_ops.c do the operations; no cache reuse across
 * operations, no write-allocate) divided by the triad bandwidth measured in
 * the same run at the same thread count. ms/it over the floor then says how
 * far an iteration is from streaming its compulsory bytes.
 *
 * The triad (STREAM's a[i] = b[i] + s c[i], 3 x 64 MB, counted as 24 bytes
 * per element like STREAM) runs in a child process (ata-bench started again
 * with ATA_BENCH_TRIAD_CHILD set), so its 192 MB do not count in the bench's
 * peak RSS. */
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

extern char **environ;

#define TRIAD_N ((size_t)8 << 20)       /* doubles per array: 64 MB, 2x a 32 MB L3 each */
#define TRIAD_REPS 3                    /* best of */
#define TRIAD_MAX_THREADS 64

typedef struct {
    double *a, *b, *c;
    size_t lo, hi;
    int init;
} triad_job;

static void *triad_worker(void *arg)
{
    triad_job *J = arg;
    double *restrict a = J->a;
    const double *restrict b = J->b, *restrict c = J->c;
    if (J->init) {      /* first touch by the thread that streams the slice */
        for (size_t i = J->lo; i < J->hi; i++) { J->a[i] = 0; J->b[i] = 1; J->c[i] = 2; }
        return NULL;
    }
    for (size_t i = J->lo; i < J->hi; i++) a[i] = b[i] + 3.0 * c[i];
    return NULL;
}

/* One pass over the arrays with nt threads (the caller is one of them);
 * its wall time, or -1 if a thread could not start. */
static double triad_pass(double *a, double *b, double *c, int nt, int init)
{
    pthread_t th[TRIAD_MAX_THREADS];
    triad_job J[TRIAD_MAX_THREADS];
    for (int t = 0; t < nt; t++)
        J[t] = (triad_job){ a, b, c, TRIAD_N * (size_t)t / (size_t)nt, TRIAD_N * ((size_t)t + 1) / (size_t)nt, init };
    double t0 = now_s();
    int started = 1, ok = 1;
    for (int t = 1; t < nt; t++, started++)
        if (pthread_create(&th[t], NULL, triad_worker, &J[t])) { ok = 0; break; }
    triad_worker(&J[0]);
    for (int t = 1; t < started; t++) pthread_join(th[t], NULL);
    double dt = now_s() - t0;
    return ok ? dt : -1;
}

/* An array on 2 MB pages where the kernel gives them (THP "madvise"):
 * 96 page faults instead of 49152 make the first touch cheap. */
static double *triad_alloc(void)
{
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, TRIAD_N * sizeof(double))) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, TRIAD_N * sizeof(double), MADV_HUGEPAGE);
#endif
    return p;
}

/* Best triad bandwidth (GB/s) at 1 and at `threads` threads. */
static void triad_measure(int threads, double gbs[2])
{
    gbs[0] = gbs[1] = NAN;
    double *a = triad_alloc(), *b = triad_alloc(), *c = triad_alloc();
    if (a && b && c && triad_pass(a, b, c, threads, 1) >= 0) {
        const int nts[2] = { 1, threads };
        for (int k = 0; k < 2; k++) {
            double best = INFINITY;
            for (int rep = 0; rep < TRIAD_REPS; rep++) {
                double t = triad_pass(a, b, c, nts[k], 0);
                if (t > 0 && t < best) best = t;
            }
            if (isfinite(best)) gbs[k] = 3.0 * sizeof(double) * TRIAD_N / best / 1e9;
        }
    }
    free(a);
    free(b);
    free(c);
}

/* The child: ata-bench itself, started again with this variable set (a
 * fresh process: no fork of a threaded one, which POSIX and TSan forbid). */
#define TRIAD_ENV "ATA_BENCH_TRIAD_CHILD"

int floor_triad_child(void)
{
    const char *e = getenv(TRIAD_ENV);
    if (!e) return -1;
    double g[2];
    triad_measure(atoi(e) > 0 ? atoi(e) : 1, g);
    printf("%.17g %.17g\n", g[0], g[1]);
    return fflush(stdout) ? 1 : 0;
}

int floor_triad(int threads, double gbs[2])
{
    gbs[0] = gbs[1] = NAN;
    if (threads < 1) threads = 1;
    if (threads > TRIAD_MAX_THREADS) threads = TRIAD_MAX_THREADS;
    char var[64];
    snprintf(var, sizeof var, TRIAD_ENV "=%d", threads);
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **env = malloc((ne + 2) * sizeof *env);
    int fd[2];
    if (!env) return -1;
    if (pipe(fd)) { free(env); return -1; }
    for (size_t i = 0; i < ne; i++) env[i] = environ[i];
    env[ne] = var;
    env[ne + 1] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    char *argv[] = { (char *)BENCH_NAME, NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    close(fd[1]);
    if (rc) { close(fd[0]); return -1; }
    char buf[128];
    size_t got = 0;
    ssize_t k;
    while (got < sizeof buf - 1 && (k = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)k;
    buf[got] = '\0';
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    double g[2];
    if (!WIFEXITED(status) || WEXITSTATUS(status) || sscanf(buf, "%lf %lf", &g[0], &g[1]) != 2) return -1;
    gbs[0] = g[0];
    gbs[1] = g[1];
    return isfinite(g[0]) && isfinite(g[1]) ? 0 : -1;
}

/* CSR arrays of an n-row triangle with nnz entries: rowptr, col, val. */
static double csr_bytes(long long n, long long nnz)
{
    return 4.0 * (double)(n + 1) + 12.0 * (double)nnz;
}

double floor_pcg_bytes(const ata_csr *A, ata_precond pc, int fused, const ata_plan_info *L, const ata_plan_info *U)
{
    const double n = A->nrows, v = 8.0 * n;     /* one vector */
    /* q = A p, p'q: A, read p, write q (serial: then the dot reads p and q). */
    double bytes = csr_bytes(A->nrows, A->nnz) + 2 * v + (fused ? 0 : 2 * v);
    /* x += a p, r -= a q, r'r: read p, q, x, r, write x, r (serial: two
     * axpbys, 3 vectors each, and a dot reading r once). */
    bytes += fused ? 6 * v : 7 * v;
    /* z = M^-1 r: each triangle's arrays, read its right side, write its
     * solution (ILU0/IC0: L then U through a temporary; Jacobi: one
     * diagonal; none: a copy). Without plans (serial) the triangles are
     * counted as the plans would store them: CSR of A's upper triangle with
     * its diagonal and of the lower one, without it for ILU0's unit L. */
    if (pc == ATA_PC_NONE) {
        bytes += 2 * v;
    } else if (L && L->n > 0) {
        bytes += (double)L->matrix_bytes + 2 * v;
        if (U && U->n > 0) bytes += (double)U->matrix_bytes + 2 * v;
    } else if (pc == ATA_PC_JACOBI) {
        bytes += csr_bytes(A->nrows, A->nrows) + 2 * v;
    } else {
        long long lo = 0, up = 0;
        for (int i = 0; i < A->nrows; i++)
            for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
                lo += pc == ATA_PC_ILU0 ? A->col[q] < i : A->col[q] <= i;
                up += A->col[q] >= i;
            }
        bytes += csr_bytes(A->nrows, lo) + csr_bytes(A->nrows, up) + 4 * v;
    }
    bytes += 2 * v;     /* r'z */
    bytes += 3 * v;     /* p = z + beta p */
    return bytes;
}

double peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return NAN;
    return (double)ru.ru_maxrss / 1024.0;      /* Linux: kilobytes */
}
