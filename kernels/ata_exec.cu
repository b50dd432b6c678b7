/* ata_exec.cu - the adaptive-task kernels (paper sec. 5.3.2, Alg. 6): pull
 * (CSR, done flags), push (CSC, pending counters) and ILU0 (pull, IKJ), one
 * source for nvcc and hipcc.
 *
 * Workers. A launch runs SET positions [pos_lo, pos_hi) of the plan (one
 * adaptive task, or consecutive ones of a barrier segment). Each warp is split
 * into NG = W / G groups of G lanes; a group runs one user task at a time.
 * The warp works on a "window" of NG consecutive positions (group g takes the
 * g-th), and finishes the whole window before it takes the next.
 *
 * Claiming. Tracked launches (ATASK_TRACKED: internal dependencies) run on a
 * persistent grid; lane 0 of a warp claims `chunk` positions (whole windows)
 * from the launch's own cursor with one atomicAdd, so the cursor is touched
 * once per chunk, not per row. Untracked launches never wait: warps take
 * windows by a grid-stride loop, no atomics, no flags read.
 *
 * Deadlock freedom (any grid, any occupancy, either warp width). Positions are
 * claimed in increasing order, and every predecessor of a row stands earlier
 * in the SET order (agg.h). Let k be the smallest claimed, unfinished position.
 * Every smaller position is claimed, hence finished; so all predecessors of k
 * are finished. The warp that claimed k is resident (it claimed it while
 * running) and has finished every earlier window of its chunk (they hold only
 * smaller positions), so it is polling k's window, where k's group sees its
 * predecessors done and completes. Waiting is never a divergent spin: all
 * groups of a warp poll in one warp-uniform loop (each iteration: every
 * waiting group polls once, every ready group advances), so groups of the
 * same warp can wait on each other even where the warp runs in lock step
 * (HIP, and pre-Volta CUDA). No block-wide barrier is ever taken after a
 * warp's claim; launches with hubs split over a block claim a block at a
 * time and take barriers only where every warp of the block has finished
 * its windows or works on the one hub (pull_block_claims has the argument).
 *
 * Memory order, pull (ATA_GPU_WAIT=value, the default): the wait on the
 * value. The begin kernel sets every x_i to a sentinel (a signalling NaN,
 * gpu_port.h). Row i is published by one 64-bit relaxed store of x_i at
 * GPU scope (ata_st_value: st.relaxed.gpu / an agent-scope atomic), with no
 * fence; a consumer polls x_j itself with relaxed 64-bit loads at GPU scope
 * (ata_ld_value: served by L2, never a stale L1 line) until it is not the
 * sentinel, and uses the value it loaded. Why this is enough: the only
 * datum that flows from the producer of row i to its consumers inside the
 * kernel is x_i, and x_i is the flag. A 64-bit morally strong access is
 * single-copy atomic, so a poll returns the sentinel or the final x_i, never
 * a mix; x_i is written once per solve (rows are published once), so a
 * value that is not the sentinel is final; the sentinel itself was written
 * by the begin kernel, which happens before this kernel (stream order), so
 * coherence of x_i's one location forbids a poll from seeing the previous
 * solve's value. Everything else a row reads (b, the matrix, the order) was
 * written before the launch. So no acquire per dependency and no release
 * (no fence) per row: ordering would only be needed to make *other* data
 * visible, and there is none. A row whose x_i has the sentinel's bits (a
 * b_i of those bits passed through) publishes the quiet NaN instead; every
 * other non-finite x_i is published as it is and named by the host, as
 * before. Untracked launches store and load x plainly: their readers and
 * writers are in other kernels. make gpu-emu-tsan-bug shows that a plain
 * (non-atomic) store or load of the value is reported.
 *
 * Memory order, pull with ATA_GPU_WAIT=flag (the first design, kept for a
 * GPU to decide), push and ILU0: flags and counters. A row's producer
 * writes its results with plain stores (a group: then a group sync), then
 * its leader fences and stores done[i] relaxed (push: decrements its
 * successors' counters relaxed); the leaders finishing in one warp round
 * execute one fence together (one instruction). A consumer lane polls
 * done[j] relaxed and, once it sees the epoch, acquires it once (one
 * acquire load) before it reads row j's results; the lanes of a consuming
 * group sync before they read what each acquired. ILU0 hands over a whole
 * row of U (many values), so it needs this release/acquire pair, and it is
 * the cheapest correct one: a release (here the fence, shared by the warp's
 * finishing rows) is needed to order the row's many stores before the flag;
 * an acquire per dependency, issued once the relaxed poll saw the flag (so
 * no L1 invalidation per spin, and the acquires of a group's lanes overlap),
 * costs one round trip more per level and is cheaper than a GPU-scope fence
 * per row (a fence waits for every outstanding store of the warp). Dropping
 * either side is a race (make gpu-emu-tsan-bug injects each).
 * Bounded spin. A warp that polls without progress checks, every 128 idle
 * rounds, the clock, the plan's error word and the device-wide progress
 * count (windows finished by any warp of the solve, added per warp every
 * PROGRESS_EVERY windows and whenever a warp starts to wait or leaves: off
 * the hot path, see progress_flush). It times out only after
 * timeout_ticks in which nothing finished anywhere, so a long but live
 * critical path never does: it records ATA_GPU_ERR_TIMEOUT (first one wins)
 * with the row and dependency it waited on and returns; seeing another
 * warp's error it returns too. The host reports "no progress for N s".
 *
 * Arithmetic. Pull: x_i = (b_i - sum of t_ij x_j over the row's off-diagonal
 * entries far to near: far_first) / t_ii, exactly the serial reference's
 * order: the G lanes of a group form G products at once (after each lane's
 * own acquire of its predecessor), then every lane of the group subtracts
 * them in that order from shuffles, so the sum is bitwise the reference's. ILU0: one k at a
 * time in stored order (IKJ), lanes update distinct entries of row i, so every
 * entry sees the reference's sequence of operations. Push accumulates with
 * fp64 atomics (order-dependent; 1e-12 relative). */
#include "gpu_port.h"
#include "gpu_kernels.h"

#define WPB (ATA_GPU_BLOCK / ATA_WARP)
#define GUARD_EVERY 128u

struct warp_ctx {
    int lane;       /* 0..W-1 */
    int G;          /* lanes per group */
    int g;          /* group in the warp */
    int lig;        /* lane in group */
    int NG;         /* groups per warp */
};

struct spin_guard {
    unsigned idle;
    int seen;                   /* device progress count at t0 */
    unsigned long long t0;
    int pend;                   /* lane 0: windows finished, not yet added to state->progress */
};

/* Progress is counted per warp and added to the device-wide count rarely:
 * every PROGRESS_EVERY windows, when the warp starts to wait (its first
 * guard check) and when it exits. So a wait that sees the count unchanged
 * for the whole timeout still means nothing finished anywhere (a warp that
 * finished a window adds it before it can itself wait or leave), and the
 * count costs one atomic per PROGRESS_EVERY windows, not one per window. */
#define PROGRESS_EVERY 32
__device__ __forceinline__ void progress_flush(spin_guard &sg, const ata_gpu_args &a, const warp_ctx &w)
{
    if (w.lane == 0 && sg.pend) {
        ata_red_add_relaxed(&a.state->progress, sg.pend);
        sg.pend = 0;
    }
}

/* Called convergently by the whole warp once per polling round. Returns 1
 * when the warp must stop: a timeout (recorded here, with the row and the
 * dependency of the first waiting lane) or another warp's error. */
__device__ __forceinline__ int guard_round(spin_guard &sg, int progressed, int waiting,
                                           int row, int dep, const ata_gpu_args &a,
                                           const warp_ctx &w)
{
    if (ata_any(progressed)) { sg.idle = 0; return 0; }
    sg.idle++;
    if (sg.idle > a.spin_rounds) ata_pause_ns(a.pause_ns);
    if (sg.idle % GUARD_EVERY) return 0;
    if (sg.idle == GUARD_EVERY) progress_flush(sg, a, w);
    ata_untimed(1);         /* bookkeeping: no part of the work's count */
    unsigned long long now = 0;
    int err = 0, done = 0;
    if (w.lane == 0) {
        now = ata_timer();
        err = ata_ld_relaxed_s32(&a.state->err);
        done = ata_ld_relaxed_s32(&a.state->progress);
    }
    now = ata_shfl_full(now, 0);
    err = ata_shfl_full(err, 0);
    done = ata_shfl_full(done, 0);
    ata_untimed(0);
    if (err) return 1;
    if (sg.idle == GUARD_EVERY || done != sg.seen) {   /* start, or progress elsewhere */
        sg.t0 = now;
        sg.seen = done;
        return 0;
    }
    if (now - sg.t0 <= a.timeout_ticks) return 0;
    /* Timed out: report the first lane still waiting. */
    ata_lanemask m = ata_ballot(waiting);
    int src = 0;
    while (m && !((m >> src) & 1)) src++;
    row = ata_shfl_full(row, src);
    dep = ata_shfl_full(dep, src);
    if (w.lane == 0 && atomicCAS(&a.state->err, 0, ATA_GPU_ERR_TIMEOUT) == 0) {
        a.state->stuck_row = row;
        a.state->stuck_dep = dep;
    }
    return 1;
}

/* Done flag of row i by the lanes with `mine` (group leaders that finished
 * a row this round, after their group's writes): one fence for all of them,
 * then relaxed stores. Untracked launches store plainly: their flags are
 * read only by later kernels. */
template <bool TRACKED>
__device__ __forceinline__ void publish_flag(const ata_gpu_args &a, bool mine, int i, uint32_t epoch)
{
    if (!mine) return;
    if (TRACKED) {
        ata_fence_acq_rel();
        ata_st_relaxed(&a.done[i], epoch);
    } else {
        ata_st(&a.done[i], epoch);
    }
}

/* ------------------------------------------------------------------ pull */
/* Where a row's q-th entry in summation order is stored (q in [lo, hi),
 * the off-diagonal entries): far to near, as the reference (lower rows
 * forwards, upper rows backwards), so x solved just before comes last. */
__device__ __forceinline__ int far_first(const ata_gpu_args &a, int lo, int hi, int q)
{
    return a.lower ? q : lo + hi - 1 - q;
}

/* Rows at positions p0 .. p0+cnt-1 (cnt <= NG). Returns 1 to abort.
 * VALUE: the wait on the value (the file comment); else on done flags. */
template <bool TRACKED, bool VALUE>
__device__ __forceinline__ int pull_window(const ata_gpu_args &a, int p0, int cnt,
                                           const warp_ctx &w, uint32_t epoch, spin_guard &sg)
{
    const bool has = w.g < cnt;
    int i = 0, lo = 0, hi = 0, dpos = -1;
    double s = 0.0, diag = 1.0;
    if (has) {
        i = ata_ldg(&a.order[p0 + w.g]);
        ata_dep();
        lo = ata_ldg(&a.ptr[i]);
        hi = ata_ldg(&a.ptr[i + 1]);
        if (a.nonunit) {
            if (a.lower) dpos = --hi;   /* diagonal last in a lower row */
            else dpos = lo++;           /* first in an upper row */
        }
        s = ata_ldg(&a.b[i]);
        if (VALUE && dpos >= 0) diag = ata_ldg(&a.val[dpos]);  /* before the wait, not after */
    }
    ata_dep();
    int base = lo;
    bool fin = !has;
    int q = base + w.lig;
    bool inr = has && q < hi;
    int j = inr ? ata_ldg(&a.idx[far_first(a, lo, hi, q)]) : 0;
    double v = inr ? ata_ldg(&a.val[far_first(a, lo, hi, q)]) : 0.0;
    bool rdy = !inr;
    double prod = 0.0;
    if (!TRACKED && inr) { ata_dep(); prod = ATA_DMUL(v, ata_ld(&a.x[j])); rdy = true; }
    for (;;) {
        if (!ata_any(!fin)) return 0;
        int prog = 0;
        if (TRACKED && VALUE && !rdy) {
            /* !rdy implies inr: this lane's predecessor j; x_j is its own
             * flag (one relaxed L2 load, no acquire: the file comment). */
            const double xj = ata_ld_value(&a.x[j]);
            if (!ata_is_sentinel(xj)) {
                prod = ATA_DMUL(v, xj);
                rdy = true;
                prog = 1;
            }
        } else if (TRACKED && !rdy) {
            /* !rdy implies inr: this lane's predecessor j. Poll relaxed; once
             * seen, one acquire pairs with the release of j's producer. */
            if (ata_poll_flag(&a.done[j], epoch)) {
                (void)ata_ld_acquire(&a.done[j]);
                prod = ATA_DMUL(v, ata_ld(&a.x[j]));
                rdy = true;
                prog = 1;
            }
        }
        const bool grdy = TRACKED ? ata_group_all(rdy, w.lane, w.G) != 0 : true;
        const bool step = !fin && grdy;
        const int left = hi - base;
        bool publish = false;
        /* Ordered subtraction: every lane of the group runs the same chain. */
        for (int r = 0; r < w.G; r++) {
            const double t = ata_shfl(prod, r, w.G);
            if (step && r < left) s -= t;
        }
        if (step) {
            base += w.G;
            if (base >= hi) {
                if (w.lig == 0 && VALUE) {
                    double xi = dpos >= 0 ? s / diag : s;
                    if (TRACKED) {
                        /* published as it is, a non-finite x too (the host
                         * names the row); only the sentinel's own bits
                         * (b_i passed through) become the quiet NaN */
                        if (ata_is_sentinel(xi)) xi = ata_bitsd(ATA_X_QNAN_BITS);
                        ata_st_value(&a.x[i], xi);
                    } else {
                        ata_st(&a.x[i], xi);   /* read by later kernels only */
                    }
                } else if (w.lig == 0) {
                    ata_st(&a.x[i], dpos >= 0 ? s / ata_ldg(&a.val[dpos]) : s);
                    publish = true;
                }
                fin = true;
            } else {
                q = base + w.lig;
                inr = q < hi;
                j = inr ? ata_ldg(&a.idx[far_first(a, lo, hi, q)]) : 0;
                v = inr ? ata_ldg(&a.val[far_first(a, lo, hi, q)]) : 0.0;
                rdy = !inr;
                prod = 0.0;
                if (!TRACKED && inr) { ata_dep(); prod = ATA_DMUL(v, ata_ld(&a.x[j])); rdy = true; }
            }
            prog = 1;
        }
        if (!VALUE) publish_flag<TRACKED>(a, publish, i, epoch);
        if (TRACKED && guard_round(sg, prog, !rdy && !fin, i, j, a, w)) return 1;
    }
}

/* x_i published by the row's finishing lane: tracked value wait, one
 * relaxed store of the value (the file comment), the sentinel's own bits
 * as the quiet NaN; otherwise a plain store (a flag follows, or the
 * readers are later kernels). Returns what was stored. */
template <bool TRACKED, bool VALUE>
__device__ __forceinline__ double store_x(const ata_gpu_args &a, int i, double xi)
{
    if (TRACKED && VALUE) {
        if (ata_is_sentinel(xi)) xi = ata_bitsd(ATA_X_QNAN_BITS);
        ata_st_value(&a.x[i], xi);
    } else {
        ata_st(&a.x[i], xi);
    }
    return xi;
}

/* A hub split over a block (WIN_BLOCK): each warp leaves its partial sum,
 * thread 0 also its row, for the combine after the block's barrier. */
struct block_hub {
    double part[WPB];
    double s, diag;
    int i, dpos;
};

/* --------------------------------------------------------- pull, elastic */
/* One window of the elastic map (gpu_kernels.h): `cnt` rows at positions
 * p0.., G lanes each (or one hub row on the whole warp: split). A lane
 * works on a stage of up to ROW_K entries of its row at a time (entries
 * base + lig + GL k): it polls every entry of the stage not yet seen in
 * one batch (independent loads, one round trip for all), and the stage is
 * consumed once all of it is ready:
 *   G = 1 (a thread per row): subtracted in far_first order by the lane;
 *   G > 1: the group subtracts the G x ROW_K products in far_first order from
 *     shuffles (every lane the same chain): bitwise the reference's;
 *   split: each lane accumulates its own entries (l, l + W, ..) in order,
 *     then a fixed xor tree sums the lanes (the same bits every run);
 *   block split (WIN_BLOCK, every warp of the block calls this with `bh`):
 *     thread t takes entries t, t + BLOCK, .., each warp sums its lanes by
 *     the xor tree and leaves the result in bh; the caller combines.
 * WIN_FWD (G = 1): before polling L2, a lane takes a predecessor that
 * another lane of the window has finished from that lane by a shuffle.
 * Returns 1 to abort (timeout, or another warp's error). */
#define ROW_K ATA_GPU_ROW_K
template <bool TRACKED, bool VALUE>
__device__ __forceinline__ int pull_elastic(const ata_gpu_args &a, int p0, int meta, int lane, uint32_t epoch,
                                            spin_guard &sg, block_hub *bh)
{
    const int cnt = meta & ATA_GPU_WIN_ROWS;
    const bool split = (meta & ATA_GPU_WIN_SPLIT) != 0, fwd = (meta & ATA_GPU_WIN_FWD) != 0;
    const bool blk = (meta & ATA_GPU_WIN_BLOCK) != 0;
    const int G = blk ? ATA_GPU_BLOCK : split ? ATA_WARP : 1 << ATA_GPU_WIN_LOG2G(meta);
    const int g = blk ? 0 : lane / G, lig = blk ? (int)threadIdx.x : lane % G;
    warp_ctx w;                                 /* for the spin guard */
    w.lane = lane; w.G = G; w.g = g; w.lig = lig; w.NG = ATA_WARP / G;
    const bool has = g < cnt;
    int i = 0, lo = 0, hi = 0, dpos = -1;
    double s = 0.0, diag = 1.0;
    if (has) {
        i = ata_ldg(&a.order[p0 + g]);
        ata_dep();
        lo = ata_ldg(&a.ptr[i]);
        hi = ata_ldg(&a.ptr[i + 1]);
        if (a.nonunit) {
            if (a.lower) dpos = --hi;
            else dpos = lo++;
        }
        s = ata_ldg(&a.b[i]);
        if (dpos >= 0) diag = ata_ldg(&a.val[dpos]);
    }
    ata_dep();
    int jk[ROW_K];
    unsigned own = ~0u;                         /* fwd: byte k the lane holding entry k's row, 0xff none */
    double vk[ROW_K];                           /* values, then (in place) products with x */
    unsigned need = 0, inr = 0;                 /* bit k: entry k of the stage is in the row / not yet seen */
    int base = lo;
    double part = 0.0;                          /* split: this lane's partial sum */
    bool fin = !has, ldone = !has;              /* ldone: this lane has consumed its entries */
    double xpub = ata_bitsd(ATA_X_SENTINEL_BITS);   /* fwd: this lane's x_i once published */
    for (int k = 0; k < ROW_K; k++) { jk[k] = 0; vk[k] = 0.0; }
    /* Entries of the stage at `base`: indices and values (one batch). */
#define LOAD_STAGE()                                                                   \
    do {                                                                               \
        need = inr = 0;                                                                \
        for (int k = 0; k < ROW_K; k++) {                                              \
            const int q = base + lig + G * k;                                          \
            if (!ldone && q < hi) {                                                    \
                jk[k] = ata_ldg(&a.idx[far_first(a, lo, hi, q)]);                      \
                vk[k] = ata_ldg(&a.val[far_first(a, lo, hi, q)]);                      \
                need |= 1u << k;                                                       \
            }                                                                          \
        }                                                                              \
        inr = need;                                                                    \
        if (fwd && need) {                                                             \
            ata_dep();                                                                 \
            own = ~0u;                                                                 \
            for (int k = 0; k < ROW_K; k++) {                                          \
                if ((need >> k) & 1) {                                                 \
                    const int o = ata_ldg(&a.posof[jk[k]]) - p0;                       \
                    if (o >= 0 && o < cnt) own &= ~(0xffu << 8 * k) | (unsigned)o << 8 * k; \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        if (!TRACKED && need) {     /* predecessors are in earlier kernels */          \
            ata_dep();                                                                 \
            for (int k = 0; k < ROW_K; k++)                                            \
                if ((need >> k) & 1) vk[k] = ATA_DMUL(vk[k], ata_ld(&a.x[jk[k]]));     \
            need = 0;                                                                  \
        }                                                                              \
    } while (0)
    LOAD_STAGE();
    for (;;) {
        if (!ata_any(!fin)) return 0;
        int prog = 0;
        if (TRACKED && fwd) {
            /* a lane of this window that published: its value by shuffle */
            for (int k = 0; k < ROW_K; k++) {
                const int o = (int)((own >> 8 * k) & 0xff);
                const bool mine = ((need >> k) & 1) && o != 0xff;
                const double xv = ata_shfl_full(xpub, mine ? o : lane);
                if (mine && !ata_is_sentinel(xv)) {
                    vk[k] = ATA_DMUL(vk[k], xv);
                    need &= ~(1u << k);
                    prog = 1;
                }
            }
        }
        if (TRACKED && need) {
            /* every entry of the stage not yet seen, in one batch; not
             * those a lane of this window solves (they come by shuffle) */
            for (int k = 0; k < ROW_K; k++) {
                if (!((need >> k) & 1) || (fwd && ((own >> 8 * k) & 0xff) != 0xff)) continue;
                if (VALUE) {
                    const double xv = ata_ld_value(&a.x[jk[k]]);
                    if (ata_is_sentinel(xv)) continue;
                    vk[k] = ATA_DMUL(vk[k], xv);
                } else {
                    if (!ata_poll_flag(&a.done[jk[k]], epoch)) continue;
                    (void)ata_ld_acquire(&a.done[jk[k]]);
                    vk[k] = ATA_DMUL(vk[k], ata_ld(&a.x[jk[k]]));
                }
                need &= ~(1u << k);
                prog = 1;
            }
        }
        bool publish = false;
        if (split) {
            /* lanes go through their own entries independently */
            if (!ldone && !need) {
                for (int k = 0; k < ROW_K; k++)
                    if ((inr >> k) & 1) part += vk[k];
                base += G * ROW_K;
                if (base + lig >= hi) ldone = true;
                else LOAD_STAGE();
                prog = 1;
            }
            if (!fin && ata_group_all(ldone, lane, ATA_WARP)) {
                /* the fixed tree: lane l adds lane l ^ m for m = W/2 .. 1 */
                for (int m = ATA_WARP / 2; m > 0; m /= 2) part += ata_shfl_xor(part, m, ATA_WARP);
                if (blk) {
                    if (lane == 0) bh->part[threadIdx.x / ATA_WARP] = part;
                    if (threadIdx.x == 0) {
                        bh->s = s; bh->diag = diag; bh->i = i; bh->dpos = dpos;
                    }
                } else if (lane == 0) {
                    s -= part;
                    publish = true;
                }
                fin = true;
                prog = 1;
            }
        } else {
            const bool grdy = G == 1 ? need == 0 : ata_group_all(need == 0, lane, G) != 0;
            const bool step = !fin && grdy;
            if (G == 1) {
                if (step) {
                    for (int k = 0; k < ROW_K; k++)
                        if ((inr >> k) & 1) s -= vk[k];
                }
            } else {
                /* ordered subtraction of the stage: entry base + G k + r
                 * is lane r's k-th; every lane runs the same chain */
                for (int k = 0; k < ROW_K; k++)
                    for (int r = 0; r < G; r++) {
                        const double t = ata_shfl(vk[k], r, G);
                        if (step && base + G * k + r < hi) s -= t;
                    }
            }
            if (step) {
                base += G * ROW_K;
                if (base >= hi) {
                    if (lig == 0) publish = true;
                    fin = ldone = true;
                } else {
                    LOAD_STAGE();
                }
                prog = 1;
            }
        }
        if (publish) xpub = store_x<TRACKED, VALUE>(a, i, dpos >= 0 ? s / diag : s);
        if (!VALUE) publish_flag<TRACKED>(a, publish, i, epoch);
        if (TRACKED) {
            int dep = 0;                        /* the first entry still waited on */
            for (int k = ROW_K - 1; k >= 0; k--)
                if ((need >> k) & 1) dep = jk[k];
            if (guard_round(sg, prog, !fin && need, i, dep, a, w)) return 1;
        }
    }
#undef LOAD_STAGE
}

/* ------------------------------------------------------------------ push */
template <bool TRACKED>
__device__ __forceinline__ int push_window(const ata_gpu_args &a, int p0, int cnt,
                                           const warp_ctx &w, spin_guard &sg)
{
    const bool has = w.g < cnt;
    int j = 0, lo = 0, hi = 0, dpos = -1;
    if (has) {
        j = ata_ldg(&a.order[p0 + w.g]);
        ata_dep();
        lo = ata_ldg(&a.ptr[j]);
        hi = ata_ldg(&a.ptr[j + 1]);
        if (a.nonunit) {
            if (a.lower) dpos = lo++;   /* diagonal first in a lower column */
            else dpos = --hi;           /* last in an upper one */
        }
    }
    bool fin = !has;
    for (;;) {
        if (!ata_any(!fin)) return 0;
        int rdy = 0;
        if (!fin && w.lig == 0) {
            /* Poll relaxed; acquire once when the counter reaches 0. */
            rdy = TRACKED ? ata_poll_zero_s32(&a.pending[j]) : 1;
            if (TRACKED && rdy) (void)ata_ld_acquire_s32(&a.pending[j]);
        }
        const int grdy = ata_shfl(rdy, 0, w.G);
        /* The leader reads x[j] after its acquire of pending[j] == 0: every
         * predecessor's atomic update of x[j] came before its fenced
         * decrement, and the decrements (RMWs) form one release sequence. */
        double xl = 0.0;
        if (!fin && grdy && w.lig == 0) {
            xl = ata_ld(&a.x[j]);
            if (dpos >= 0) xl = xl / ata_ldg(&a.val[dpos]);
            ata_st(&a.x[j], xl);
        }
        const double xj = ata_shfl(xl, 0, w.G);
        const int prog = !fin && grdy;
        if (prog) {
            for (int q = lo + w.lig; q < hi; q += w.G) {
                const int r = ata_ldg(&a.idx[q]);
                ata_atomic_add_f64(&a.x[r], -ATA_DMUL(ata_ldg(&a.val[q]), xj));
            }
            /* Release: this lane's x updates before its decrements; the
             * progressing lanes execute it together, one fence per warp
             * round. Untracked launches need none: their successors run in
             * later kernels. */
            if (TRACKED) ata_fence_acq_rel();
            for (int q = lo + w.lig; q < hi; q += w.G) ata_red_add_relaxed(&a.pending[ata_ldg(&a.idx[q])], -1);
            fin = true;
        }
        if (TRACKED && guard_round(sg, prog, !fin, j, -1, a, w)) return 1;
    }
}

/* ------------------------------------------------------------------ ILU0 */
/* Position of column c in idx[lo, hi) (sorted), or -1. */
__device__ __forceinline__ int find_col(const int *idx, int lo, int hi, int c)
{
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        const int v = ata_ldg(&idx[mid]);
        ata_dep();                          /* the next probe depends on it */
        if (v == c) return mid;
        if (v < c) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* Row i of ILU0 (IKJ, as src/ilu0_row.h) by the G lanes of one group;
 * group-uniform control flow, called in a branch taken by whole groups. */
__device__ __forceinline__ void ilu0_row_group(const ata_gpu_args &a, int lo, int di,
                                               int hi, int moff, const warp_ctx &w, ata_lanemask gm)
{
    double *Ax = a.val;
    if (moff >= 0) {
        /* The position map (item 4 of issue 22): where each u_kj lands in
         * row i is one load, not a binary search (a chain of dependent
         * loads per pair). A lane takes entries dk+1+lig, +G, .. of row k,
         * ROW_K at a time; the first ROW_K targets and u values are loaded
         * before l_ik (they do not depend on it). Each a_ij still gets
         * l_ik u_kj subtracted once, by one lane, in the order of k:
         * bitwise the reference. */
        int m = moff;
        for (int p = lo; p < di; p++) {
            const int k = ata_ldg(&a.idx[p]);
            ata_dep();
            const int dk = ata_ldg(&a.diag[k]), ek = ata_ldg(&a.ptr[k + 1]);
            ata_dep();
            int wp[ROW_K];
            double uv[ROW_K];
            for (int t = 0; t < ROW_K; t++) {
                const int q = dk + 1 + w.lig + w.G * t;
                wp[t] = q < ek ? ata_ldg(&a.umap[m + q - dk - 1]) : -1;
                uv[t] = q < ek ? ata_ld(&Ax[q]) : 0.0;
            }
            ata_group_sync(gm);             /* the previous k's updates of row i are in */
            const double lik = ata_ld(&Ax[p]) / ata_ld(&Ax[dk]);
            ata_group_sync(gm);             /* all lanes read Ax[p] before it changes */
            if (w.lig == 0) ata_st(&Ax[p], lik);
            for (int q0 = dk + 1 + w.lig; q0 < ek; q0 += w.G * ROW_K) {
                if (q0 != dk + 1 + w.lig) {
                    for (int t = 0; t < ROW_K; t++) {
                        const int q = q0 + w.G * t;
                        wp[t] = q < ek ? ata_ldg(&a.umap[m + q - dk - 1]) : -1;
                        uv[t] = q < ek ? ata_ld(&Ax[q]) : 0.0;
                    }
                }
                ata_dep();
                double av[ROW_K];
                for (int t = 0; t < ROW_K; t++) av[t] = wp[t] >= 0 ? ata_ld(&Ax[wp[t]]) : 0.0;
                for (int t = 0; t < ROW_K; t++)
                    if (wp[t] >= 0) ata_st(&Ax[wp[t]], av[t] - ATA_DMUL(lik, uv[t]));
            }
            m += ek - dk - 1;
        }
        ata_group_sync(gm);
        return;
    }
    for (int p = lo; p < di; p++) {
        const int k = ata_ldg(&a.idx[p]);
        ata_dep();
        const int dk = ata_ldg(&a.diag[k]), ek = ata_ldg(&a.ptr[k + 1]);
        ata_group_sync(gm);                 /* the previous k's updates of row i are in */
        const double lik = ata_ld(&Ax[p]) / ata_ld(&Ax[dk]);
        ata_group_sync(gm);                 /* all lanes read Ax[p] before it changes */
        if (w.lig == 0) ata_st(&Ax[p], lik);
        if ((long long)(hi - p - 1) * 16 < ek - dk - 1) {
            /* Row k is much longer than the rest of row i (a dense early
             * row): look row i's columns up in row k instead, so the row
             * costs O(rest of i * log k), not O(k) (src/ilu0_row.h does the
             * same). Each a_ij still gets l_ik * u_kj subtracted once, by one
             * lane: bitwise the other branch. */
            for (int wq = p + 1 + w.lig; wq < hi; wq += w.G) {
                const int q = find_col(a.idx, dk + 1, ek, ata_ldg(&a.idx[wq]));
                if (q >= 0) ata_st(&Ax[wq], ata_ld(&Ax[wq]) - ATA_DMUL(lik, ata_ld(&Ax[q])));
            }
        } else {
            for (int q = dk + 1 + w.lig; q < ek; q += w.G) {
                const int wpos = find_col(a.idx, p + 1, hi, ata_ldg(&a.idx[q]));
                if (wpos >= 0) ata_st(&Ax[wpos], ata_ld(&Ax[wpos]) - ATA_DMUL(lik, ata_ld(&Ax[q])));
            }
        }
    }
    ata_group_sync(gm);
}

template <bool TRACKED>
__device__ __forceinline__ int ilu0_window(const ata_gpu_args &a, int p0, int cnt,
                                           const warp_ctx &w, uint32_t epoch, spin_guard &sg)
{
    const bool has = w.g < cnt;
    int i = 0, lo = 0, hi = 0, di = 0, moff = -1;
    if (has) {
        i = ata_ldg(&a.order[p0 + w.g]);
        ata_dep();
        lo = ata_ldg(&a.ptr[i]);
        hi = ata_ldg(&a.ptr[i + 1]);
        di = ata_ldg(&a.diag[i]);
        if (a.umap_row) moff = ata_ldg(&a.umap_row[i]);
    }
    ata_dep();
    const ata_lanemask gm = ata_group_mask(w.lane, w.G);
    /* Wait phase over the row's predecessors (positions lo .. di-1), G at a
     * time; untracked rows skip it. */
    int base = TRACKED ? lo : di;
    bool fin = !has;
    int q = base + w.lig;
    bool rdy = !(TRACKED && has && q < di);
    int k = rdy ? 0 : ata_ldg(&a.idx[q]);
    for (;;) {
        if (!ata_any(!fin)) return 0;
        int prog = 0;
        if (TRACKED && !rdy && ata_poll_flag(&a.done[k], epoch)) {
            (void)ata_ld_acquire(&a.done[k]);   /* once, when seen */
            rdy = true;
            prog = 1;
        }
        const bool grdy = TRACKED ? ata_group_all(rdy, w.lane, w.G) != 0 : true;
        bool go = false;
        if (!fin && grdy) {
            base += w.G;
            if (base >= di) go = true;
            else {
                q = base + w.lig;
                rdy = !(q < di);
                k = rdy ? 0 : ata_ldg(&a.idx[q]);
            }
            prog = 1;
        }
        bool publish = false;
        if (go) {   /* whole groups */
            /* Each lane acquired its own predecessors; the group sync hands
             * them to every lane of the group (no per-lane fence). */
            if (TRACKED) ata_group_sync(gm);
            ilu0_row_group(a, lo, di, hi, moff, w, gm);   /* ends with a group sync */
            if (w.lig == 0) {
                const double u = ata_ld(&a.val[di]);
                if (!(u != 0 && u - u == 0)) atomicMin(&a.state->pivot_row, i);
                publish = true;     /* the leader releases the group's writes */
            }
            fin = true;
        }
        publish_flag<TRACKED>(a, publish, i, epoch);
        if (TRACKED && guard_round(sg, prog, !rdy && !fin, i, k, a, w)) return 1;
    }
}

/* ---------------------------------------------------------------- driver */
template <int MODE, bool TRACKED, bool VALUE>
__device__ __forceinline__ int run_window(const ata_gpu_args &a, int p0, int cnt,
                                          const warp_ctx &w, uint32_t epoch, spin_guard &sg)
{
    if (MODE == ATA_GPU_PULL) return pull_window<TRACKED, VALUE>(a, p0, cnt, w, epoch, sg);
    if (MODE == ATA_GPU_PUSH) return push_window<TRACKED>(a, p0, cnt, w, sg);
    return ilu0_window<TRACKED>(a, p0, cnt, w, epoch, sg);
}

/* Window k of the plan (elastic map): pull by pull_elastic, ILU0 by its
 * group code at the window's G. */
template <int MODE, bool TRACKED, bool VALUE>
__device__ __forceinline__ int run_elastic(const ata_gpu_args &a, int k, int lane, uint32_t epoch, spin_guard &sg)
{
    const int pos = ata_ldg(&a.win[k].pos), meta = ata_ldg(&a.win[k].meta);
    ata_dep();
    if (MODE == ATA_GPU_PULL) return pull_elastic<TRACKED, VALUE>(a, pos, meta, lane, epoch, sg, nullptr);
    warp_ctx w;
    w.lane = lane;
    w.G = 1 << ATA_GPU_WIN_LOG2G(meta);
    w.g = lane / w.G;
    w.lig = lane % w.G;
    w.NG = ATA_WARP / w.G;
    return run_window<MODE, TRACKED, VALUE>(a, pos, meta & ATA_GPU_WIN_ROWS, w, epoch, sg);
}

/* Launches with hubs split over a block (L.block; pull only): a block
 * takes `chunk` windows at a time (thread 0 claims, a barrier hands the
 * start to every warp; untracked: a block-stride loop). The host put each
 * hub first and alone in its chunk (empty windows pad it), so a chunk is
 * either one hub, run by every warp (their partials combined by thread 0
 * after a barrier, in a fixed tree: the same bits every run), or windows
 * without hubs, warp w running windows w, w + WPB, .. of it in order.
 * Deadlock freedom with these barriers: the argument of the file comment,
 * blocks for warps. Let k be the smallest claimed, unfinished position; its
 * block is resident. In a chunk of windows, the warp holding k has finished
 * its earlier windows (smaller positions), so it is not at the chunk's
 * barrier but polling k, whose predecessors are finished. A hub chunk: every
 * warp polls its share of k's predecessors, all finished, and reaches the
 * barrier. A warp that aborts (timeout, error) skips to the barrier and
 * says so in shared memory; the others abort at their next guard check (the
 * error word is set) and the block leaves together after the barrier. */
/* Not inlined: the hub path's registers would otherwise push the common
 * path's to spill (ptxas, sm_90, 64 registers: 64 bytes of spills with it
 * inlined, none without it). The spin guard comes by value (the caller
 * returns after this), so the caller's stays in registers. */
template <bool TRACKED, bool VALUE>
__device__ __noinline__ void pull_block_claims(const ata_gpu_args &a, const ata_gpu_launch &L, int lane,
                                                  uint32_t epoch, spin_guard sg)
{
    __shared__ block_hub bh;
    __shared__ int start_sh, pos_sh, meta_sh;  /* the chunk and its first window */
    __shared__ int abort_sh[WPB], hub_ab[WPB]; /* per warp; two arrays: no write races a read */
    const int warp = (int)(threadIdx.x / ATA_WARP), nwin = L.win_hi - L.win_lo;
    warp_ctx w;                                 /* progress_flush reads the lane */
    w.lane = lane;
    int next = (int)blockIdx.x * L.chunk;
    int ab = 0;
    for (;;) {
        if (lane == 0) abort_sh[warp] = ab;
        __syncthreads();                        /* the last start read, every abort written */
        int any_ab = 0;
        for (int k = 0; k < WPB; k++) any_ab |= abort_sh[k];
        if (threadIdx.x == 0 && !any_ab) {
            /* the chunk and its first window, for the whole block */
            const int st = TRACKED ? (int)ata_claim_block(&a.counters[L.counter], (unsigned)L.chunk) : next;
            start_sh = st;
            if (st >= 0 && st < nwin) {
                pos_sh = ata_ldg(&a.win[L.win_lo + st].pos);
                meta_sh = ata_ldg(&a.win[L.win_lo + st].meta);
                ata_dep();
            }
        }
        __syncthreads();
        const int start = start_sh;
        next += (int)gridDim.x * L.chunk;
        if (any_ab || start >= nwin || start < 0) break;
        const int end = min(start + L.chunk, nwin), pos = pos_sh, meta = meta_sh;
        if (meta & ATA_GPU_WIN_BLOCK) {
            ab = pull_elastic<TRACKED, VALUE>(a, pos, meta, lane, epoch, sg, &bh);
            if (lane == 0) hub_ab[warp] = ab;
            __syncthreads();                    /* every warp's partial is in bh */
            for (int k = 0; k < WPB; k++) ab |= hub_ab[k];
            if (!ab && threadIdx.x == 0) {
                const double s = bh.s - ata_warps_tree<WPB>(bh.part);
                store_x<TRACKED, VALUE>(a, bh.i, bh.dpos >= 0 ? s / bh.diag : s);
                if (!VALUE) publish_flag<TRACKED>(a, true, bh.i, epoch);
            }
            if (ab) break;                      /* block-uniform: every warp read every abort */
            if (lane == 0) sg.pend++;
        } else {
            for (int k = start + warp; k < end && !ab; k += WPB) {
                ab = run_elastic<ATA_GPU_PULL, TRACKED, VALUE>(a, L.win_lo + k, lane, epoch, sg);
                if (lane == 0) sg.pend++;
            }
        }
        if (TRACKED && lane == 0 && sg.pend >= PROGRESS_EVERY) progress_flush(sg, a, w);
    }
    if (TRACKED) progress_flush(sg, a, w);
}

template <int MODE, bool TRACKED, bool VALUE, bool ELASTIC>
__global__ void ATA_BOUNDS(ATA_GPU_BLOCK) k_exec(const ATA_GRID_CONST ata_gpu_args a, const ATA_GRID_CONST ata_gpu_launch L)
{
    if (a.stop && ata_ld(a.stop)) return;      /* PCG on the device has stopped (gpu_kernels.h) */
    warp_ctx w;
    w.lane = (int)(threadIdx.x % ATA_WARP);
    w.G = L.group;
    w.g = w.lane / w.G;
    w.lig = w.lane % w.G;
    w.NG = ATA_WARP / w.G;
    const int warp = (int)(threadIdx.x / ATA_WARP);
    const uint32_t epoch = MODE == ATA_GPU_PUSH || VALUE ? 0u : ata_ld(&a.state->epoch); /* set by the begin kernel */
    const int nrows = L.pos_hi - L.pos_lo;
    spin_guard sg;
    sg.idle = 0;
    sg.seen = 0;
    sg.t0 = 0;
    sg.pend = 0;
    if (ELASTIC && MODE == ATA_GPU_PULL && L.block) {
        pull_block_claims<TRACKED, VALUE>(a, L, w.lane, epoch, sg);
        return;
    }
    if (ELASTIC) {
        /* windows [win_lo, win_hi), claimed `chunk` at a time (tracked) */
        const int nwin = L.win_hi - L.win_lo;
        if (TRACKED) {
            for (;;) {
                int start = 0;
                if (w.lane == 0) start = (int)ata_claim(&a.counters[L.counter], (unsigned)L.chunk);
                start = ata_shfl_full(start, 0);
                if (start >= nwin || start < 0) break;
                const int end = min(start + L.chunk, nwin);
                for (int k = start; k < end; k++) {
                    if (run_elastic<MODE, true, VALUE>(a, L.win_lo + k, w.lane, epoch, sg)) return;
                    if (w.lane == 0 && ++sg.pend >= PROGRESS_EVERY) progress_flush(sg, a, w);
                }
            }
            progress_flush(sg, a, w);
        } else {
            for (int k = (int)blockIdx.x * WPB + warp; k < nwin; k += (int)gridDim.x * WPB)
                run_elastic<MODE, false, VALUE>(a, L.win_lo + k, w.lane, epoch, sg);
        }
        return;
    }
    if (TRACKED) {
        for (;;) {
            int start = 0;
            if (w.lane == 0) start = (int)ata_claim(&a.counters[L.counter], (unsigned)L.chunk);
            start = ata_shfl_full(start, 0);
            if (start >= nrows || start < 0) break;
            const int end = min(start + L.chunk, nrows);
            for (int r = start; r < end; r += w.NG) {
                if (run_window<MODE, true, VALUE>(a, L.pos_lo + r, min(w.NG, end - r), w, epoch, sg)) return;
                if (w.lane == 0 && ++sg.pend >= PROGRESS_EVERY) progress_flush(sg, a, w);
            }
        }
        progress_flush(sg, a, w);
    } else {
        const long long stride = (long long)gridDim.x * WPB * w.NG;
        for (long long r = ((long long)blockIdx.x * WPB + warp) * w.NG; r < nrows; r += stride)
            run_window<MODE, false, VALUE>(a, L.pos_lo + (int)r, min(w.NG, nrows - (int)r), w, epoch, sg);
    }
}

__global__ void __launch_bounds__(ATA_GPU_BLOCK) k_begin(ata_gpu_args a, int push)
{
    if (a.stop && ata_ld(a.stop)) return;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    if (tid == 0) {
        uint32_t e = ata_ld(&a.state->epoch) + 1;
        ata_st(&a.state->epoch, e ? e : 1u);    /* 0 is the value of a never-run row */
        if (!a.stop) {      /* device PCG keeps an error until the host reads it */
            ata_st(&a.state->err, 0);
            ata_st(&a.state->stuck_row, -1);
            ata_st(&a.state->stuck_dep, -1);
        }
        ata_st(&a.state->pivot_row, a.n);
        ata_st(&a.state->progress, 0);
    }
    for (long long c = tid; c < a.ncounters; c += stride) ata_st(&a.counters[c], 0u);
    if (a.mode == ATA_GPU_PULL && a.wait == ATA_GPU_WAIT_VALUE)   /* no row solved yet */
        for (long long i = tid; i < a.n; i += stride) ata_st(&a.x[i], ata_bitsd(ATA_X_SENTINEL_BITS));
    if (push)
        for (long long i = tid; i < a.n; i += stride) {
            ata_st(&a.pending[i], ata_ldg(&a.indeg[i]));
            ata_st(&a.x[i], ata_ldg(&a.b[i]));
        }
}

/* ------------------------------------------------------------- wrappers */
extern "C" int ata_gpu_begin(const ata_gpu_args *a, int push, void *stream)
{
    long long work = push || (a->mode == ATA_GPU_PULL && a->wait == ATA_GPU_WAIT_VALUE) ? (long long)a->n : 0;
    if (a->ncounters > work) work = a->ncounters;
    long long grid = (work + ATA_GPU_BLOCK - 1) / ATA_GPU_BLOCK;
    if (grid < 1) grid = 1;
    if (grid > 4096) grid = 4096;
    ATA_LAUNCH(k_begin, (unsigned)grid, ATA_GPU_BLOCK, 0, stream, *a, push);
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_run(const ata_gpu_args *a, const ata_gpu_launch *l, void *stream)
{
    const unsigned grid = (unsigned)(l->grid > 0 ? l->grid : 1);
    const bool value = a->mode == ATA_GPU_PULL && a->wait == ATA_GPU_WAIT_VALUE;
    const bool elastic = a->mode != ATA_GPU_PUSH && l->win_hi > l->win_lo;
#define EXEC_CASE(M, T, V, E) \
    case (M) * 8 + (V) * 4 + (E) * 2 + (T): \
        ATA_LAUNCH((k_exec<M, T, V, E>), grid, ATA_GPU_BLOCK, 0, stream, *a, *l); break;
    switch (a->mode * 8 + (value ? 4 : 0) + (elastic ? 2 : 0) + (l->tracked ? 1 : 0)) {
    EXEC_CASE(ATA_GPU_PULL, false, false, false) EXEC_CASE(ATA_GPU_PULL, true, false, false)
    EXEC_CASE(ATA_GPU_PULL, false, true, false)  EXEC_CASE(ATA_GPU_PULL, true, true, false)
    EXEC_CASE(ATA_GPU_PULL, false, false, true)  EXEC_CASE(ATA_GPU_PULL, true, false, true)
    EXEC_CASE(ATA_GPU_PULL, false, true, true)   EXEC_CASE(ATA_GPU_PULL, true, true, true)
    EXEC_CASE(ATA_GPU_PUSH, false, false, false) EXEC_CASE(ATA_GPU_PUSH, true, false, false)
    EXEC_CASE(ATA_GPU_ILU0, false, false, false) EXEC_CASE(ATA_GPU_ILU0, true, false, false)
    EXEC_CASE(ATA_GPU_ILU0, false, false, true)  EXEC_CASE(ATA_GPU_ILU0, true, false, true)
    default: return -1;
    }
#undef EXEC_CASE
    return (int)ata_gpu_get_last_error();
}

extern "C" int ata_gpu_warp_size(void) { return ATA_WARP; }
extern "C" double ata_gpu_timer_hz(void) { return ATA_TIMER_HZ; }

/* Resident blocks per SM of the tracked kernel of each mode (the persistent
 * grid); mode 3: the vector kernels (see ata_blas.cu). */
extern "C" int ata_gpu_occupancy_blas(int *blocks_per_sm);
extern "C" int ata_gpu_occupancy(int mode, int *blocks_per_sm)
{
    ata_gpu_err e;
    switch (mode) {
    case ATA_GPU_PULL: e = ata_occupancy(blocks_per_sm, k_exec<ATA_GPU_PULL, true, true, true>, ATA_GPU_BLOCK, 0); break;
    case ATA_GPU_PUSH: e = ata_occupancy(blocks_per_sm, k_exec<ATA_GPU_PUSH, true, false, false>, ATA_GPU_BLOCK, 0); break;
    case ATA_GPU_ILU0: e = ata_occupancy(blocks_per_sm, k_exec<ATA_GPU_ILU0, true, false, true>, ATA_GPU_BLOCK, 0); break;
    default: return ata_gpu_occupancy_blas(blocks_per_sm);
    }
    return (int)e;
}
