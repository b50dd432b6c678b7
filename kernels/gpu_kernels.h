/* gpu_kernels.h - the extern "C" launch API of the kernels/ .cu files, shared by the
 * device code (nvcc or hipcc) and the host backend (src/gpu/, plain
 * C). Streams travel as void*; every wrapper returns the runtime's error code
 * of the launch (cudaError_t / hipError_t as int, 0 = success).
 *
 * One "launch" runs a contiguous range [pos_lo, pos_hi) of the plan's SET
 * order: one adaptive task, or consecutive adaptive tasks of one barrier
 * segment with the same tracking and the same group width (no coarse edge
 * joins them, so one kernel may run them together). */
#ifndef ATA_GPU_KERNELS_H
#define ATA_GPU_KERNELS_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATA_GPU_BLOCK 256           /* threads per block of every ATA kernel */

enum { ATA_GPU_OK = 0, ATA_GPU_ERR_TIMEOUT = 1 };

/* Per-plan device state, reset by the begin kernel of every solve. */
typedef struct {
    uint32_t epoch;         /* pull/ILU0: done[i] == epoch once row i is final */
    int err;                /* ATA_GPU_ERR_*: first failure wins (CAS from 0) */
    int stuck_row, stuck_dep; /* timeout detail (dep -1: push counter) */
    int pivot_row;          /* ILU0: smallest row with a zero / non-finite pivot, n if none */
    int progress;           /* windows finished in this solve (resets the wait timeout) */
    int pad[2];
} ata_gpu_state;

enum { ATA_GPU_PULL = 0, ATA_GPU_PUSH = 1, ATA_GPU_ILU0 = 2 };
/* How a pull solve waits for a predecessor (ATA_GPU_WAIT): on its done flag
 * (poll, acquire, then load x_j) or on x_j itself (x starts as a sentinel;
 * see ata_exec.cu). ILU0 always waits on flags, push on counters. */
enum { ATA_GPU_WAIT_FLAG = 0, ATA_GPU_WAIT_VALUE = 1 };

/* The elastic map (ATA_GPU_MAP=elastic): rows sized to their work. The
 * host cuts each launch's SET range into windows, the rows one warp runs
 * at once: W / G consecutive rows of one class, G lanes each, a lane
 * loading up to ATA_GPU_ROW_K entries of its row per round (a thread per
 * row up to ROW_K entries, then groups of 2, 4, .. W lanes), or one row
 * split between the whole warp (a hub: more than ATA_GPU_HUB(W) entries;
 * partial sums per lane far to near, then a fixed tree: the same bits
 * every run, not the reference's). WIN_FWD: a thread-per-row window whose
 * rows depend on each other; the values pass between its lanes by
 * shuffles, not through L2. WIN_BLOCK (with WIN_SPLIT; ATA_GPU_MAP=elastic,
 * not elastic-warp): a row of more than ATA_GPU_BLOCK_HUB entries split
 * between the warps of a whole block (each warp's partial sum as above,
 * then the warps' partials in a fixed tree through shared memory); a
 * launch holding one is claimed a block at a time (ata_gpu_launch.block). */
#define ATA_GPU_ROW_K 4
#define ATA_GPU_HUB(warp) (4 * (warp) * ATA_GPU_ROW_K)
/* a block split from two full stages of the whole block (a warp would need
 * 8 W / 32 .. : 16 stages at W = 32) */
#define ATA_GPU_BLOCK_HUB (2 * ATA_GPU_BLOCK * ATA_GPU_ROW_K)
typedef struct {
    int pos;                /* first SET position (pull/ILU0) or row (SpMV) */
    int meta;               /* rows | log2(G) << 8 | WIN_SPLIT | WIN_FWD | WIN_BLOCK; 0: empty */
} ata_gpu_window;
enum { ATA_GPU_WIN_ROWS = 0xff, ATA_GPU_WIN_SPLIT = 1 << 12, ATA_GPU_WIN_FWD = 1 << 13, ATA_GPU_WIN_BLOCK = 1 << 14 };
#define ATA_GPU_WIN_LOG2G(meta) (((meta) >> 8) & 0xf)

typedef struct {
    int mode;               /* ATA_GPU_PULL / PUSH / ILU0 */
    int n;
    int lower;              /* 1: lower triangle (or ILU0) */
    int nonunit;            /* 1: the diagonal is stored (see plan.h for where) */
    const int *ptr;         /* pull: CSR rowptr; push: CSC colptr; ILU0: A rowptr */
    const int *idx;
    double *val;            /* ILU0 factors in place; read-only otherwise */
    const int *diag;        /* ILU0: position of each row's diagonal */
    /* ILU0's position map (made at analysis): for row i, umap_row[i] (-1:
     * none, the binary searches) is where its entries start in umap: for
     * each predecessor k of row i in order, for each entry q of row k right
     * of its diagonal, the position of column idx[q] in row i, or -1. */
    const int *umap_row, *umap;
    const int *order;       /* SET order */
    const int *posof;       /* elastic, WIN_FWD windows: SET position of each row */
    const ata_gpu_window *win;  /* elastic: the plan's windows (launches index them) */
    uint32_t *done;         /* pull, ILU0 */
    int *pending;           /* push */
    const int *indeg;       /* push: reset value of pending */
    unsigned *counters;     /* one claim cursor per launch */
    int ncounters;
    ata_gpu_state *state;
    const double *b;        /* sptrsv right-hand side (device) */
    double *x;              /* sptrsv solution (device) */
    int wait;               /* pull: ATA_GPU_WAIT_FLAG / VALUE */
    const int *stop;        /* device CG: every kernel returns at once while *stop (NULL: never) */
    unsigned long long timeout_ticks; /* bound on a wait with no progress anywhere (ata_timer ticks) */
    unsigned spin_rounds;   /* ATA_GPU_BACKOFF: polling rounds with no progress before a warp */
    unsigned pause_ns;      /* pauses pause_ns between rounds (CUDA; HIP sleeps its shortest) */
} ata_gpu_args;

typedef struct {
    int pos_lo, pos_hi;     /* SET positions */
    int group;              /* fixed map: lanes per user task: power of two, 1..warp */
    int tracked;            /* 0: no waiting at all (untracked adaptive tasks) */
    int grid;               /* blocks */
    int chunk;              /* tracked: rows (fixed: a multiple of warp/group) or windows (elastic) per claim */
    int counter;            /* tracked: index of this launch's claim cursor */
    int win_lo, win_hi;     /* elastic: its windows (win_hi > win_lo), else the fixed map */
    int block;              /* elastic pull with WIN_BLOCK hubs: `chunk` windows per block
                             * claim (a multiple of the warps per block), each hub
                             * first in its chunk and alone (empty windows pad it) */
} ata_gpu_launch;

/* Device facts the host needs: the kernels' compile-time warp width, and the
 * rate of the clock the kernels' bounded waits read (ticks per second). */
int ata_gpu_warp_size(void);
double ata_gpu_timer_hz(void);
/* Resident blocks per SM of the kernel of `mode` (PULL/PUSH/ILU0), or of the
 * vector kernels (mode 3), at ATA_GPU_BLOCK threads. */
int ata_gpu_occupancy(int mode, int *blocks_per_sm);

/* Start of a solve: epoch++, err = 0, pivot_row = n, counters = 0; push also
 * pending = indeg and x = b. */
int ata_gpu_begin(const ata_gpu_args *a, int push, void *stream);
/* One launch of a pull, push or ILU0 plan (a->mode). */
int ata_gpu_run(const ata_gpu_args *a, const ata_gpu_launch *l, void *stream);

/* Empty kernel of `grid` blocks (T_l probe). */
int ata_gpu_empty(int grid, void *stream);

/* PCG vector kernels. spmv: y = A x with `group` lanes per row, or (win
 * not NULL) over nwin windows (the elastic map: a thread per short row,
 * sums in stored order; groups and whole warps sum in a fixed tree), then
 * win[nwin .. nwin + nhub): hub rows a block each (WIN_BLOCK: lanes of the
 * block, warp trees, then a fixed tree of the warps through shared memory). */
int ata_gpu_spmv(int n, const int *ptr, const int *idx, const double *val, int group,
                 const ata_gpu_window *win, int nwin, int nhub, const double *x, double *y, int grid,
                 void *stream);
/* Deterministic dot product: fixed grid of `grid` blocks writes `partial`
 * (grid doubles), then one block sums them in order into *out (device). */
int ata_gpu_dot(long long n, const double *x, const double *y, double *partial, int grid,
                double *out, void *stream);
/* y = a x + b y */
int ata_gpu_axpby(long long n, double a, const double *x, double b, double *y, int grid,
                  void *stream);

/* ---- PCG on the device (src/gpu/gpu_cg.c): CG's scalars live in device
 * memory; every kernel below returns at once when `stop` is set, so a
 * batch of iterations queued ahead costs only launches once CG stopped.
 * Reductions are the dot product's (fixed grid, fixed trees: the same bits
 * as ata_gpu_dot), finished by the last block to arrive (a ticket). */
enum { ATA_GPU_CG_RUN = 0, ATA_GPU_CG_STOP_START = 1, ATA_GPU_CG_STOP_ITER = 2 };
typedef struct {
    double bb, rr0, rz0;        /* b'b, r0'r0, r0'z0 */
    double tol, dtol_abs;       /* stop at sqrt(r'r) <= tol; diverged above dtol_abs (0: no test) */
    double rz, alpha, beta;     /* the iteration's */
    int m;                      /* iterations recorded in this batch */
    int stop;                   /* ATA_GPU_CG_* */
    unsigned ticket;            /* last-block reductions */
    int pad;
} ata_gpu_cg_state;
typedef struct { double pq, rr, rz; } ata_gpu_cg_rec;   /* p'Ap, r'r, r'z of one iteration */
enum { ATA_GPU_CG_BB, ATA_GPU_CG_RR0, ATA_GPU_CG_RZ0, ATA_GPU_CG_RR, ATA_GPU_CG_RZ };
/* *st: what = BB: bb = x'y; RR0: rr0 = x'y, tol = max(rtol sqrt(bb), atol),
 * dtol_abs = dtol sqrt(rr0), stop (START) when b or r0 is not finite or r0
 * already meets tol; RZ0: rz = rz0 = x'y, stop unless finite and > 0; RR
 * (with x += alpha p, r -= alpha q first: x, y, p, q are x, r, p, q):
 * rec[m].rr = r'r, stop (ITER) unless finite, at tol, past dtol_abs; RZ:
 * rec[m].rz = x'y, stop unless finite and > 0, else beta = rz'/rz, rz = rz'. */
int ata_gpu_cg_dot(long long n, int what, const double *x, const double *y, double *xu, const double *pu,
                   const double *qu, double *partial, int grid, ata_gpu_cg_state *st, ata_gpu_cg_rec *rec,
                   double rtol, double atol, double dtol, void *stream);
/* q = A p (as ata_gpu_spmv) and rec[m].pq = p'q; stop (ITER) unless finite
 * and > 0, else alpha = rz / pq. */
int ata_gpu_cg_spmv_dot(int n, const int *ptr, const int *idx, const double *val, int group,
                        const ata_gpu_window *win, int nwin, int nhub, const double *p, double *q, double *partial,
                        int grid, ata_gpu_cg_state *st, ata_gpu_cg_rec *rec, void *stream);
/* p = z + beta p (or p = z when first), then m++ (unless stopped). */
int ata_gpu_cg_p(long long n, const double *z, double *p, int first, int grid, ata_gpu_cg_state *st,
                 void *stream);
/* z = r (no preconditioner), unless stopped. */
int ata_gpu_cg_copy(long long n, const double *r, double *z, int grid, const ata_gpu_cg_state *st, void *stream);
/* v[i] = c */
int ata_gpu_fill(long long n, double c, double *v, void *stream);

#ifdef __cplusplus
}
#endif
#endif
