/* emu.cc - the host SIMT emulator: device, block slots, lane fibers,
 * collectives, a device clock, and the runtime/sparse calls of emu_api.h.
 *
 * Execution model. The device has ATA_EMU_SLOTS resident block slots (OS
 * threads, default 2) but reports ATA_EMU_SMS x ATA_EMU_BLOCKS_PER_SM
 * resident blocks (default 1 x 3) to occupancy queries, so a persistent
 * grid is larger than what truly runs at once: a block beyond the slots does
 * not start until a slot frees (blocks are taken in blockIdx order). In a
 * slot every lane of the block is a fiber with its own stack; a lane runs
 * until it reaches a collective (ballot, shuffle, __syncwarp, __syncthreads)
 * or exits; the last lane to arrive completes the collective and goes on,
 * the others resume from the run queue. When no lane of a block can run and
 * some have not exited, no collective can ever complete: the emulator prints
 * every lane's state and aborts (so does a launch that outlives the
 * ATA_EMU_WATCHDOG seconds). Stream operations run synchronously, in order;
 * a capturing stream records them into a graph instead.
 *
 * Device clock: emulated. Each slot counts 1 us (ATA_EMU_STEP_NS) per warp
 * collective it completes; the device clock is the count of the slowest
 * slot that is running blocks (never going back). So the kernels' timeouts
 * count the device's own work, not host time: a slot thread the host
 * deschedules stops the clock instead of letting the others time out
 * waiting for it, and a spin that never progresses still times out.
 *
 * This file is compiled without -fsanitize=thread even in the TSan variant:
 * the scheduler's own bookkeeping is single-threaded per slot and must not
 * be seen as races between lanes. It tells TSan about fibers
 * (__tsan_switch_to_fiber: no synchronisation between lanes except the
 * block start/end and the barriers below) and about barriers
 * (__tsan_release/__tsan_acquire on one address per barrier). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <vector>
#include "emu.h"
#include "emu_counts.h"
#include "ata.h"
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

thread_local emu_lane_pub *emu_self;
#if ATA_EMU_TSAN
extern "C" void __tsan_ignore_thread_begin(void);
extern "C" void __tsan_ignore_thread_end(void);
#endif

namespace {

constexpr int W = ATA_EMU_WARP;
constexpr int MAXT = 1024;              /* threads per block */
enum { L_READY, L_RUNNING, L_BLOCKED, L_EXITED };
enum { C_NONE, C_BALLOT, C_SHFL, C_SYNCWARP, C_SYNCTHREADS };

struct elane : emu_lane_pub {
    int idx, warp, state, kind, src;      /* idx: thread in the block */
    uint64_t mask, val, res;
    char *stack;
    void *sp;                           /* saved context (x86-64) */
#if !defined(__x86_64__)
    ucontext_t uc;
#endif
#if ATA_EMU_TSAN
    void *fiber;
    int started;
#endif
};

/* Counted work of one slot (emu_counts.h), summed into the device's after
 * each kernel. Written by the slot's thread only. */
struct cnt_acc {
    long long loads, load_bytes, stores, store_bytes, polls_failed;
    long long fences_gpu, releases, acquires, fences_cta, barriers;
    long long atomics, atomic_addrs, atomics_hottest;
    double tmax;                        /* latest model clock of a lane that exited */
};

struct slot {
    int id;
    cnt_acc acc;
    int vw[MAXT / W];                   /* virtual warp each warp of the block holds, -1: none */
    /* A fence, release or acquire is one instruction of its warp however
     * many lanes execute it together: counted once between two collectives
     * of the warp (coll[w]: collectives completed; done[w][k]: the value of
     * coll[w] when kind k was last counted, + 1). */
    unsigned coll[MAXT / W], done_kind[MAXT / W][3];
    elane *lanes;
    int nalloc;                         /* lanes with a stack */
    void *sched_sp;
#if !defined(__x86_64__)
    ucontext_t sched_uc;
#endif
#if ATA_EMU_TSAN
    void *sched_fiber;
#endif
    int nthreads, exited, bar_arrived;
    unsigned block;
    int runq[MAXT], rq_head, rq_len;
    /* Pending warp collectives, by exact mask: groups of a warp may sit in
     * their own __syncwarp while other lanes already wait in a full-warp
     * ballot (independent thread scheduling). */
    struct { uint64_t mask; int count; } pend[MAXT / W][W];
    char sync_obj[MAXT / W][W];         /* TSan: one address per warp barrier */
    char bar_obj;                       /* TSan: __syncthreads */
    unsigned pauses;
    /* Device clock: this slot's collectives (ticks), while it runs blocks
     * (busy); both read by other slots, written by this one (atomics). */
    unsigned long long ticks;
    int busy;
};

struct kernel_node {
    std::shared_ptr<emu_closure> k;
    const char *name;
    unsigned grid, block;
    bool racy;                          /* launched under emu_expect_races(1) */
};
bool expect_races;

struct device {
    int nslots = 3, sms = 2, bps = 2;
    size_t stack_bytes = 256 << 10;
    double watchdog_s = 300;
    unsigned long long step = 1000;     /* clock ticks per collective */
    std::vector<slot *> slots;
    std::mutex mu, launch_mu;
    std::condition_variable cv_work, cv_done;
    unsigned long gen = 0;
    const kernel_node *k = nullptr;
    std::atomic<unsigned> next_block{0};
    int slots_done = 0, tickets = 0;
    std::atomic<double> launch_t0{0};
    std::atomic<unsigned long long> clock{0};
    /* Counted work: totals since the last reset, the model clock of the
     * stream (when the last kernel ended), the virtual warps of the running
     * launch (free ones in a min-heap by clock). */
    ata_emu_counts tot{};
    double T = 0, T0 = 0;
    std::mutex vw_mu;
    std::vector<std::pair<double, int>> vw_free;
    bool vw_ready = false;
    unsigned vw_count = 0;
};

device *dev;
std::once_flag dev_once;
thread_local slot *cur_slot;
thread_local int last_error;

int env_int(const char *n, int d)
{
    const char *e = getenv(n);
    return e && *e ? atoi(e) : d;
}

elane *self() { return static_cast<elane *>(emu_self); }

/* ------------------------------------------------------------- switching */
#if defined(__x86_64__)
extern "C" void emu_ctx_swap(void **save, void *to);
extern "C" void emu_fiber_start(void);
/* Callee-saved registers only: lanes never change the FP control words. */
asm(".text\n"
    ".globl emu_ctx_swap\n.type emu_ctx_swap,@function\n"
    "emu_ctx_swap:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n.size emu_ctx_swap,.-emu_ctx_swap\n"
    ".globl emu_fiber_start\n.type emu_fiber_start,@function\n"
    "emu_fiber_start:\n  movq %rbx, %rdi\n  call emu_fiber_main\n  ud2\n"
    ".size emu_fiber_start,.-emu_fiber_start\n");
#endif
extern "C" void emu_fiber_main(elane *L);

[[maybe_unused]] void tsan_switch(void *fiber, bool sync)
{
#if ATA_EMU_TSAN
    __tsan_switch_to_fiber(fiber, sync ? 0 : __tsan_switch_to_fiber_no_sync);
#else
    (void)fiber; (void)sync;
#endif
}

/* Fresh context for L: starts in emu_fiber_main(L). */
void lane_prepare(slot *S, elane *L)
{
    const size_t sz = dev->stack_bytes;
    if (!L->stack) {
        void *m = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) { perror("emu: lane stack"); abort(); }
        mprotect(m, 4096, PROT_NONE);   /* guard page */
        L->stack = (char *)m;
#if ATA_EMU_TSAN
        L->fiber = __tsan_create_fiber(0);
#endif
    }
#if ATA_EMU_TSAN
    L->started = 0;
#endif
#if defined(__x86_64__)
    uintptr_t top = ((uintptr_t)(L->stack + sz) & ~(uintptr_t)15) - 16;
    uint64_t *sp = (uint64_t *)top;
    *--sp = (uint64_t)(uintptr_t)emu_fiber_start;   /* ret target; rsp % 16 == 0 after it */
    *--sp = 0;                                      /* rbp */
    *--sp = (uint64_t)(uintptr_t)L;                 /* rbx */
    for (int r = 0; r < 4; r++) *--sp = 0;          /* r12..r15 */
    L->sp = sp;
#else
    getcontext(&L->uc);
    L->uc.uc_stack.ss_sp = L->stack + 4096;
    L->uc.uc_stack.ss_size = sz - 4096;
    L->uc.uc_link = nullptr;
    makecontext(&L->uc, (void (*)(void))emu_fiber_main, 1, L);
#endif
    (void)S;
}

/* Switch from the current context (the scheduler, or lane `from`) to lane
 * L. TSan: a lane's first entry in a block synchronises with the slot (the
 * launch happened before it); every other switch does not, so lanes are
 * unordered unless a barrier or an atomic orders them. */
void enter_lane(slot *S, elane *from, elane *L)
{
    emu_self = L;
    L->state = L_RUNNING;
#if ATA_EMU_TSAN
    tsan_switch(L->fiber, !L->started);
    L->started = 1;
#endif
#if defined(__x86_64__)
    emu_ctx_swap(from ? &from->sp : &S->sched_sp, L->sp);
#else
    swapcontext(from ? &from->uc : &S->sched_uc, &L->uc);
#endif
}

elane *pop_ready(slot *S)
{
    if (!S->rq_len) return nullptr;
    elane *L = &S->lanes[S->runq[S->rq_head]];
    S->rq_head = (S->rq_head + 1) % MAXT;
    S->rq_len--;
    return L;
}

/* Lane L stops (blocked in a collective, or exited): the next ready lane of
 * the block runs, or the scheduler when there is none. Returns when L is
 * resumed (never after an exit). */
void lane_switch_out(elane *L)
{
    slot *S = cur_slot;
    elane *N = L->state == L_EXITED ? nullptr : pop_ready(S);
    if (N) { enter_lane(S, L, N); return; }
    emu_self = nullptr;
#if ATA_EMU_TSAN
    tsan_switch(S->sched_fiber, L->state == L_EXITED);  /* exit: sync to the slot */
#endif
#if defined(__x86_64__)
    emu_ctx_swap(&L->sp, S->sched_sp);
#else
    swapcontext(&L->uc, &S->sched_uc);
#endif
}

/* ------------------------------------------------------------ diagnosis */
void lane_desc(const elane *L, char *buf, size_t n)
{
    switch (L->state) {
    case L_READY: snprintf(buf, n, "ready"); return;
    case L_RUNNING: snprintf(buf, n, "running"); return;
    case L_EXITED: snprintf(buf, n, "exited"); return;
    }
    switch (L->kind) {
    case C_BALLOT: snprintf(buf, n, "waits in ballot, mask %#llx", (unsigned long long)L->mask); return;
    case C_SHFL: snprintf(buf, n, "waits in shuffle from lane %d, mask %#llx", L->src, (unsigned long long)L->mask); return;
    case C_SYNCWARP: snprintf(buf, n, "waits in __syncwarp, mask %#llx", (unsigned long long)L->mask); return;
    case C_SYNCTHREADS: snprintf(buf, n, "waits in __syncthreads"); return;
    }
    snprintf(buf, n, "blocked");
}

/* Every lane of the slot's block, runs of equal state on one line. */
void dump_slot(const slot *S, const char *kname)
{
    fprintf(stderr, "emu: slot %d, kernel %s, block %u (%d threads):\n", S->id, kname ? kname : "?", S->block,
            S->nthreads);
    char cur[128], nxt[128];
    for (int t = 0; t < S->nthreads;) {
        lane_desc(&S->lanes[t], cur, sizeof cur);
        int e = t + 1;
        while (e < S->nthreads && e % W && (lane_desc(&S->lanes[e], nxt, sizeof nxt), !strcmp(cur, nxt))) e++;
        fprintf(stderr, "  threads %4d-%4d (warp %d, lanes %2d-%2d): %s\n", t, e - 1, t / W, t % W, (e - 1) % W,
                cur);
        t = e;
    }
}

[[noreturn]] void fatal(slot *S, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "emu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (S) dump_slot(S, dev->k ? dev->k->name : nullptr);
    fflush(stderr);
    abort();
}

/* ------------------------------------------------------------ the blocks */
void make_ready(slot *S, elane *M)
{
    M->state = L_READY;
    S->runq[(S->rq_head + S->rq_len++) % MAXT] = M->idx;
}

void run_block(slot *S, unsigned b, const kernel_node *k)
{
    const int nt = (int)k->block;
    S->nthreads = nt;
    S->block = b;
    S->exited = 0;
    S->bar_arrived = 0;
    S->rq_head = 0;
    S->rq_len = 0;
    memset(S->pend, 0, sizeof S->pend);
    for (int w = 0; w < MAXT / W; w++) {
        S->vw[w] = -1;
        S->coll[w] = 0;
        S->done_kind[w][0] = S->done_kind[w][1] = S->done_kind[w][2] = 0;
    }
    for (int t = 0; t < nt; t++) {
        elane *L = &S->lanes[t];
        lane_prepare(S, L);
        L->idx = t;
        L->warp = t / W;
        L->lane = t % W;
        L->tid = {(unsigned)t, 0, 0};
        L->bid = {b, 0, 0};
        L->bdim = {k->block, 1, 1};
        L->gdim = {k->grid, 1, 1};
        L->rel_fenced = 0;
        L->nrecent = 0;
        L->t = L->tr = dev->T0;
        L->untimed = 0;
        L->kind = C_NONE;
        make_ready(S, L);
    }
    for (elane *L; (L = pop_ready(S));) enter_lane(S, nullptr, L);
    if (S->exited < nt)
        fatal(S, "deadlock in kernel %s, block %u: no lane can run and no collective can complete", k->name, b);
}

void slot_bind(slot *S)
{
    cur_slot = S;
#if ATA_EMU_TSAN
    S->sched_fiber = __tsan_get_current_fiber();
#endif
}

void run_blocks(slot *S, const kernel_node *k)
{
    __atomic_store_n(&S->ticks, emu_clock(), __ATOMIC_RELAXED);    /* catch up */
    __atomic_store_n(&S->busy, 1, __ATOMIC_RELAXED);
    for (unsigned b; (b = dev->next_block.fetch_add(1)) < k->grid;) run_block(S, b, k);
    __atomic_store_n(&S->busy, 0, __ATOMIC_RELAXED);
}

/* Slots 1.. are worker threads; slot 0 is the launching thread itself, so a
 * one-block kernel wakes nobody. A worker takes a launch only while the
 * launch has tickets (min(grid, slots) - 1 of them). */
void *slot_main(void *arg)
{
    slot *S = (slot *)arg;
    slot_bind(S);
    unsigned long seen = 0;
    for (;;) {
        const kernel_node *k;
        {
            std::unique_lock<std::mutex> g(dev->mu);
            dev->cv_work.wait(g, [&] { return dev->gen != seen && dev->tickets > 0; });
            seen = dev->gen;
            dev->tickets--;
            k = dev->k;
        }
        run_blocks(S, k);
        std::lock_guard<std::mutex> g(dev->mu);
        dev->slots_done++;
        dev->cv_done.notify_all();
    }
    return nullptr;
}

/* Aborts with every lane's state when a launch outlives the watchdog. */
void *watchdog_main(void *)
{
    for (;;) {
        sleep(1);
        const double t0 = dev->launch_t0.load(std::memory_order_relaxed);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t0 > 0 && t.tv_sec + 1e-9 * t.tv_nsec - t0 > dev->watchdog_s) {
            const kernel_node *k = dev->k;
            fprintf(stderr, "emu: watchdog: kernel %s still running after %g s (ATA_EMU_WATCHDOG); every lane:\n",
                    k ? k->name : "?", dev->watchdog_s);
            for (slot *S : dev->slots) dump_slot(S, k ? k->name : nullptr);   /* racy snapshot: diagnosis only */
            fflush(stderr);
            abort();
        }
    }
    return nullptr;
}

void spawn(void *(*fn)(void *), void *arg)
{
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, fn, arg)) { perror("emu: thread"); abort(); }
    pthread_attr_destroy(&at);
}

void dev_init()
{
    dev = new device;
    dev->nslots = env_int("ATA_EMU_SLOTS", 2);
    /* ATA_EMU_SHAPE=h100: what an H100 SXM reports for the pull kernel (132
     * SMs; 4 resident blocks of 256 threads: ptxas gives the tracked pull
     * kernel 49 registers at sm_90, 56 allocated, so 36 warps fit in the
     * 64K registers of an SM: 4 blocks of 8 warps). Counts only: the host
     * still runs ATA_EMU_SLOTS blocks at a time. */
    const char *shape = getenv("ATA_EMU_SHAPE");
    const bool h100 = shape && !strcmp(shape, "h100");
    dev->sms = env_int("ATA_EMU_SMS", h100 ? 132 : 1);
    dev->bps = env_int("ATA_EMU_BLOCKS_PER_SM", h100 ? 4 : 3);
    dev->stack_bytes = (size_t)env_int("ATA_EMU_STACK_KB", 256) << 10;
    dev->watchdog_s = env_int("ATA_EMU_WATCHDOG", 300);
    /* ticks of ATA_TIMER_HZ: 1 GHz (CUDA's ns timer) or 100 MHz (HIP) */
    dev->step = (unsigned long long)env_int("ATA_EMU_STEP_NS", 1000) / (W == 64 ? 10 : 1);
    if (dev->nslots < 1) dev->nslots = 1;
    for (int s = 0; s < dev->nslots; s++) {
        slot *S = (slot *)calloc(1, sizeof(slot));
        S->id = s;
        S->lanes = new elane[MAXT]();
        dev->slots.push_back(S);
        if (s > 0) spawn(slot_main, S);
    }
    spawn(watchdog_main, nullptr);
}

device *D()
{
    std::call_once(dev_once, dev_init);
    return dev;
}

/* After a kernel: its slots' counts into the device's, and the stream's
 * model clock moves to the kernel's end. */
void cnt_collect(device *d, bool from_graph, bool racy)
{
    double end = d->T0;
    ata_emu_counts &c = d->tot;
    if (racy) {             /* the T_u probe: no part of any solve's work */
        for (slot *S : d->slots) S->acc = cnt_acc{};
        return;
    }
    for (slot *S : d->slots) {
        cnt_acc &a = S->acc;
        end = std::max(end, a.tmax);
        c.loads += a.loads; c.load_bytes += a.load_bytes;
        c.stores += a.stores; c.store_bytes += a.store_bytes;
        c.polls_failed += a.polls_failed;
        c.fences_gpu += a.fences_gpu; c.releases += a.releases; c.acquires += a.acquires;
        c.fences_cta += a.fences_cta; c.barriers += a.barriers;
        c.atomics += a.atomics; c.atomic_addrs += a.atomic_addrs;
        c.atomics_hottest = std::max(c.atomics_hottest, a.atomics_hottest);
        a = cnt_acc{};
    }
    d->T = end;
    c.rtt = end;
    c.launches++;
    if (from_graph) c.graph_nodes++;
}

void run_kernel(const kernel_node &k, bool from_graph = false)
{
    device *d = D();
    std::lock_guard<std::mutex> one(d->launch_mu);
    d->T0 = d->T;
    d->vw_ready = false;
    d->vw_count = k.grid * (k.block / W);
    const int nwork = (int)(k.grid < (unsigned)d->nslots ? k.grid : (unsigned)d->nslots) - 1;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    {
        std::lock_guard<std::mutex> g(d->mu);
        d->k = &k;
        d->next_block = 0;
        d->slots_done = 0;
        d->tickets = nwork;
        d->gen++;
        d->launch_t0 = t.tv_sec + 1e-9 * t.tv_nsec;
    }
    if (nwork > 0) d->cv_work.notify_all();
    slot *S0 = d->slots[0];
    slot *keep = cur_slot;
    slot_bind(S0);
    run_blocks(S0, &k);
    cur_slot = keep;
    std::unique_lock<std::mutex> g(d->mu);
    d->cv_done.wait(g, [&] { return d->slots_done == nwork; });
    d->launch_t0 = 0;
    d->k = nullptr;
    cnt_collect(d, from_graph, k.racy);
}

/* ------------------------------------------------------------- streams */
struct op {
    kernel_node k;                      /* k.k set: a kernel */
    std::function<void()> fn;           /* otherwise a copy or set */
};
void run_op(const op &o, bool from_graph = false)
{
    if (o.k.k) run_kernel(o.k, from_graph);
    else o.fn();
}

} /* namespace */

struct emu_graph { std::vector<op> ops; };
struct emu_stream { emu_graph *capture; };
struct emu_event { double t; };
static emu_stream default_stream = { nullptr };

static int enqueue(void *stream, op &&o)
{
    emu_stream *s = stream ? (emu_stream *)stream : &default_stream;
    if (s->capture) s->capture->ops.push_back(std::move(o));
    else run_op(o);
    return 0;
}

/* ------------------------------------------------- device-side entries */
extern "C" void emu_fiber_main(elane *L)
{
#if ATA_EMU_TSAN
    if (dev->k->racy) __tsan_ignore_thread_begin();
#endif
    dev->k->k->run();
#if ATA_EMU_TSAN
    if (dev->k->racy) __tsan_ignore_thread_end();
#endif
    L->state = L_EXITED;
    cur_slot->acc.tmax = std::max(cur_slot->acc.tmax, std::max(L->t, L->tr));
    cur_slot->exited++;
    lane_switch_out(L);
    abort();                            /* never resumed */
}

static uint64_t warp_coll(int kind, uint64_t mask, uint64_t val, int src)
{
    elane *L = self();
    slot *S = cur_slot;
    if (!L) { fprintf(stderr, "emu: warp collective outside a kernel\n"); abort(); }
    if (!((mask >> L->lane) & 1))
        fatal(S, "thread %d: warp collective with mask %#llx that excludes its own lane %d", L->idx,
              (unsigned long long)mask, L->lane);
    L->kind = kind;
    L->mask = mask;
    L->val = val;
    L->src = src;
    [[maybe_unused]] const int lo = __builtin_ctzll(mask);
    const int need = __builtin_popcountll(mask);
    elane *wl = &S->lanes[L->warp * W];
#if ATA_EMU_TSAN
    if (kind == C_SYNCWARP) __tsan_release(&S->sync_obj[L->warp][lo]);
#endif
    auto *pe = S->pend[L->warp], *e = (decltype(pe))nullptr;
    for (int q = 0; q < W && !e; q++)
        if (pe[q].count && pe[q].mask == mask) e = &pe[q];
    for (int q = 0; q < W && !e; q++)
        if (!pe[q].count) { e = &pe[q]; e->mask = mask; }
    if (++e->count == need) {
        e->count = 0;
        S->coll[L->warp]++;
        uint64_t bal = 0;
        /* Model clock: lanes are coupled by the data they exchange, not
         * by the warp's lock step (emu_counts.h): a shuffle waits for its
         * source lane, __syncwarp for every lane of its mask; a ballot
         * (loop control) couples nothing. So the counts do not depend on
         * the order the emulator happens to run the lanes in. */
        if (L->untimed) {
            /* bookkeeping: no clock moves */
        } else if (kind == C_SYNCWARP) {
            double tm = 0;
            for (int l = 0; l < W; l++)
                if ((mask >> l) & 1) tm = std::max(tm, std::max(wl[l].t, wl[l].tr));
            for (int l = 0; l < W; l++)
                if ((mask >> l) & 1) wl[l].t = wl[l].tr = tm;
        } else if (kind == C_SHFL) {
            double tn[W];
            for (int l = 0; l < W; l++) {
                tn[l] = 0;
                if (!((mask >> l) & 1)) continue;
                const elane *M = &wl[l];
                tn[l] = std::max(M->t, M->tr);
                if (M->src >= 0 && M->src < W) tn[l] = std::max(tn[l], std::max(wl[M->src].t, wl[M->src].tr));
            }
            for (int l = 0; l < W; l++)
                if ((mask >> l) & 1) wl[l].t = wl[l].tr = tn[l];
        }
        for (int l = 0; l < W; l++) {
            if (!((mask >> l) & 1)) continue;
            const elane *M = &wl[l];
            if (M->state == L_EXITED || M->kind != kind || M->mask != mask) {
                char a[128], b[128];
                lane_desc(L, a, sizeof a);
                lane_desc(M, b, sizeof b);
                fatal(S, "divergent warp collective in warp %d: thread %d %s, thread %d %s", L->warp, L->idx, a,
                      M->idx, b);
            }
            bal |= (uint64_t)(M->val & 1) << l;
        }
        for (int l = 0; l < W; l++) {
            if (!((mask >> l) & 1)) continue;
            elane *M = &wl[l];
            if (kind == C_BALLOT) M->res = bal;
            else if (kind == C_SHFL) {
                if (M->src < 0 || M->src >= W || !((mask >> M->src) & 1))
                    fatal(S, "thread %d: shuffle from lane %d outside the mask %#llx", M->idx, M->src,
                          (unsigned long long)mask);
                M->res = wl[M->src].val;
            }
            M->kind = C_NONE;
            if (M != L) make_ready(S, M);
        }
        __atomic_store_n(&S->ticks, S->ticks + dev->step, __ATOMIC_RELAXED);
    } else {
        L->state = L_BLOCKED;
        lane_switch_out(L);
    }
#if ATA_EMU_TSAN
    if (kind == C_SYNCWARP) __tsan_acquire(&S->sync_obj[L->warp][lo]);
#endif
    return L->res;
}

extern "C" uint64_t emu_ballot(int pred) { return warp_coll(C_BALLOT, W == 64 ? ~0ull : 0xffffffffull, pred != 0, 0); }
extern "C" uint64_t emu_shfl_bits(uint64_t v, int src)
{
    return warp_coll(C_SHFL, W == 64 ? ~0ull : 0xffffffffull, v, src);
}
extern "C" void emu_syncwarp(uint64_t mask) { (void)warp_coll(C_SYNCWARP, mask, 0, 0); }

extern "C" void emu_syncthreads(void)
{
    elane *L = self();
    slot *S = cur_slot;
    L->kind = C_SYNCTHREADS;
#if ATA_EMU_TSAN
    __tsan_release(&S->bar_obj);
#endif
    if (++S->bar_arrived == S->nthreads) {
        S->bar_arrived = 0;
        S->acc.barriers++;
        double tm = 0;
        for (int t = 0; t < S->nthreads; t++) tm = std::max(tm, std::max(S->lanes[t].t, S->lanes[t].tr));
        for (int t = 0; t < S->nthreads; t++) S->lanes[t].t = S->lanes[t].tr = tm;
        for (int t = 0; t < S->nthreads; t++) {
            elane *M = &S->lanes[t];
            if (M->kind != C_SYNCTHREADS) fatal(S, "__syncthreads: thread %d is elsewhere", M->idx);
            M->kind = C_NONE;
            if (M != L) make_ready(S, M);
        }
    } else {
        L->state = L_BLOCKED;
        lane_switch_out(L);
    }
#if ATA_EMU_TSAN
    __tsan_acquire(&S->bar_obj);
#endif
}

/* A spinning elane: let the other slots (OS threads) have the CPU now and then. */
extern "C" void emu_pause(void)
{
    static const int every = env_int("ATA_EMU_PAUSE_EVERY", 256), us = env_int("ATA_EMU_PAUSE_US", 0);
    if (++cur_slot->pauses % every) return;
    if (us > 0) {
        struct timespec t = {0, us * 1000L};
        nanosleep(&t, nullptr);
    } else {
        sched_yield();
    }
}

extern "C" unsigned long long emu_clock(void)
{
    device *d = D();
    unsigned long long m = ~0ull, c = d->clock.load(std::memory_order_relaxed);
    for (slot *S : d->slots)
        if (__atomic_load_n(&S->busy, __ATOMIC_RELAXED)) {
            const unsigned long long t = __atomic_load_n(&S->ticks, __ATOMIC_RELAXED);
            if (t < m) m = t;
        }
    while (m != ~0ull && m > c && !d->clock.compare_exchange_weak(c, m, std::memory_order_relaxed)) {}
    return m != ~0ull && m > c ? m : c;
}
extern "C" int emu_blocks_per_sm(void) { return D()->bps; }
extern "C" void emu_expect_races(int on) { expect_races = on != 0; }

/* ------------------------------------------------------- counted work
 * emu_counts.h says what is counted and the model behind the clock. Each
 * device allocation has a lazily made shadow, one entry per 4-byte word:
 * the model time its last counted synchronising store happened at, and
 * how many RMWs hit it since the last reset. */
namespace {
struct shadow {
    uintptr_t base;
    size_t bytes;
    float *ts;
    uint32_t *nat;
};
std::shared_mutex sh_mu;
std::vector<shadow> shadows;            /* sorted by base */

void shadow_add(const void *p, size_t bytes)
{
    std::unique_lock<std::shared_mutex> g(sh_mu);
    shadow s{(uintptr_t)p, bytes ? bytes : 1, nullptr, nullptr};
    auto it = std::lower_bound(shadows.begin(), shadows.end(), s,
                               [](const shadow &a, const shadow &b) { return a.base < b.base; });
    shadows.insert(it, s);
}

void shadow_del(const void *p)
{
    std::unique_lock<std::shared_mutex> g(sh_mu);
    for (auto it = shadows.begin(); it != shadows.end(); ++it)
        if (it->base == (uintptr_t)p) {
            free(__atomic_load_n(&it->ts, __ATOMIC_ACQUIRE));
            free(__atomic_load_n(&it->nat, __ATOMIC_ACQUIRE));
            shadows.erase(it);
            return;
        }
}

/* The shadow array `which` (0: ts, 1: nat) of p's allocation and p's word
 * in it; NULL when p is not device memory (a __shared__ array). */
void *shadow_word(const void *p, int which)
{
    std::shared_lock<std::shared_mutex> g(sh_mu);
    const uintptr_t a = (uintptr_t)p;
    auto it = std::upper_bound(shadows.begin(), shadows.end(), a,
                               [](uintptr_t x, const shadow &s) { return x < s.base; });
    if (it == shadows.begin()) return nullptr;
    shadow &s = *--it;
    if (a >= s.base + s.bytes) return nullptr;
    const size_t words = (s.bytes + 3) / 4, w = (a - s.base) / 4;
    void **slotp = which ? (void **)&s.nat : (void **)&s.ts;
    void *arr = __atomic_load_n(slotp, __ATOMIC_ACQUIRE);
    if (!arr) {
        void *fresh = calloc(words, 4), *none = nullptr;
        if (!fresh) return nullptr;
        if (__atomic_compare_exchange_n(slotp, &none, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) arr = fresh;
        else { free(fresh); arr = none; }
    }
    return (char *)arr + 4 * w;
}

double shadow_ts(const void *p)
{
    float *f = (float *)shadow_word(p, 0);
    float v = 0;
    if (f) __atomic_load(f, &v, __ATOMIC_RELAXED);
    return v;
}

void shadow_set_ts(const void *p, double t, bool keep_max)
{
    float *f = (float *)shadow_word(p, 0);
    if (!f) return;
    float v = (float)t, old;
    __atomic_load(f, &old, __ATOMIC_RELAXED);
    if (keep_max && old > v) return;
    __atomic_store(f, &v, __ATOMIC_RELAXED);
}

void shadow_clear(void)
{
    std::unique_lock<std::shared_mutex> g(sh_mu);
    for (shadow &s : shadows) {
        const size_t words = (s.bytes + 3) / 4;
        if (s.ts) memset(s.ts, 0, words * 4);
        if (s.nat) memset(s.nat, 0, words * 4);
    }
}

/* 1 when this lane's warp has not yet counted an instruction of kind k
 * (0 fence, 1 release, 2 acquire) since its last collective. */
bool warp_first(int k)
{
    slot *S = cur_slot;
    const int w = self()->warp;
    if (S->done_kind[w][k] == S->coll[w] + 1) return false;
    S->done_kind[w][k] = S->coll[w] + 1;
    return true;
}
} /* namespace */

extern "C" void emu_cnt_ld(const void *p, unsigned bytes)
{
    (void)p;
    elane *L = self();
    if (L->untimed) return;
    cnt_acc &a = cur_slot->acc;
    a.loads++;
    a.load_bytes += bytes;
    L->tr = std::max(L->tr, L->t + 1);
}

extern "C" void emu_cnt_sync_ld(const void *p, unsigned bytes, int seen, int acquire)
{
    elane *L = self();
    if (L->untimed) return;
    cnt_acc &a = cur_slot->acc;
    if (!seen) { a.polls_failed++; return; }
    a.loads++;
    a.load_bytes += bytes;
    const double r = std::max(L->t, shadow_ts(p)) + 1;
    if (acquire) {          /* later loads wait for it */
        if (warp_first(2)) a.acquires++;
        L->t = L->tr = std::max(std::max(L->t, L->tr), r);
    } else {
        L->tr = std::max(L->tr, r);
    }
}

extern "C" void emu_cnt_st(const void *p, unsigned bytes, int kind)
{
    elane *L = self();
    if (L->untimed) return;
    cnt_acc &a = cur_slot->acc;
    a.stores++;
    a.store_bytes += bytes;
    L->t = std::max(L->t, L->tr);       /* what it stores was loaded first */
    if (kind == 2) {
        if (warp_first(1)) a.releases++;
        L->t += 1;
    }
    L->tr = L->t;
    if (kind >= 1) shadow_set_ts(p, L->t, false);
}

extern "C" void emu_cnt_fence(int gpu_scope)
{
    elane *L = self();
    if (L->untimed) return;
    cnt_acc &a = cur_slot->acc;
    if (!gpu_scope) { a.fences_cta++; return; }
    if (warp_first(0)) a.fences_gpu++;
    L->t = L->tr = std::max(L->t, L->tr) + 1;   /* waits for its stores to be acknowledged */
}

extern "C" void emu_cnt_rmw(const void *p, unsigned bytes, int ret, int release)
{
    (void)bytes;
    elane *L = self();
    if (L->untimed) return;
    cnt_acc &a = cur_slot->acc;
    a.atomics++;
    uint32_t *n = (uint32_t *)shadow_word(p, 1);
    const uint32_t before = n ? __atomic_fetch_add(n, 1u, __ATOMIC_RELAXED) : 0;
    if (before == 0) a.atomic_addrs++;
    if ((long long)before + 1 > a.atomics_hottest) a.atomics_hottest = before + 1;
    if (release) {
        if (warp_first(1)) a.releases++;
        L->t = L->tr = std::max(L->t, L->tr) + 1;
    }
    /* Same-address RMWs pipeline in L2: a waiter on the word sees the
     * latest one; the issuer waits only for its own result. */
    shadow_set_ts(p, L->t, true);
    if (ret) L->tr = std::max(L->tr, L->t + 1);
}

extern "C" void emu_cnt_untimed(int on) { self()->untimed = on; }

extern "C" void emu_cnt_dep(void)
{
    elane *L = self();
    if (L->untimed) return;
    L->t = L->tr = std::max(L->t, L->tr);
}

/* The free virtual warps, a heap by the time each is free, made at the
 * first claim of a launch (every one free at T0). Under d->vw_mu. */
template <class Later> static void vw_heap_ready(device *d, Later later)
{
    if (d->vw_ready) return;
    d->vw_free.clear();
    for (unsigned v = 0; v < d->vw_count; v++) d->vw_free.push_back({d->T0, (int)v});
    std::make_heap(d->vw_free.begin(), d->vw_free.end(), later);
    d->vw_ready = true;
}

/* Lane 0 of a warp of a persistent grid is about to claim work: the warp
 * gives back the virtual warp it held (free from now on, in model time)
 * and takes the one that is free first, whose clock every lane of the warp
 * now carries (emu_counts.h). */
extern "C" void emu_cnt_claim(void)
{
    elane *L = self();
    slot *S = cur_slot;
    device *d = dev;
    const int w = L->warp;
    double now = 0;         /* the warp is free when its last lane is */
    for (int l = 0; l < W && w * W + l < S->nthreads; l++)
        now = std::max(now, std::max(S->lanes[w * W + l].t, S->lanes[w * W + l].tr));
    double c = now;
    {
        std::lock_guard<std::mutex> g(d->vw_mu);
        auto later = std::greater<std::pair<double, int>>();
        vw_heap_ready(d, later);
        if (S->vw[w] >= 0) {
            d->vw_free.push_back({now, S->vw[w]});
            std::push_heap(d->vw_free.begin(), d->vw_free.end(), later);
            S->vw[w] = -1;
        }
        if (!d->vw_free.empty()) {
            std::pop_heap(d->vw_free.begin(), d->vw_free.end(), later);
            c = d->vw_free.back().first;
            S->vw[w] = d->vw_free.back().second;
            d->vw_free.pop_back();
        }
    }
    for (int l = 0; l < W && w * W + l < S->nthreads; l++) {
        elane *M = &S->lanes[w * W + l];
        M->t = M->tr = c;
    }
}

/* Thread 0 of a block of a persistent grid is about to claim work for the
 * whole block (ata_exec.cu, block claims; every lane is at a barrier): the
 * block gives back its warps' virtual warps and takes the WPB that are
 * free first; the block starts when the last of them is free, so a block
 * holds a virtual block of warps, not warps of different times. */
extern "C" void emu_cnt_claim_block(void)
{
    slot *S = cur_slot;
    device *d = dev;
    const int nw = (S->nthreads + W - 1) / W;
    double now = 0;
    for (int t = 0; t < S->nthreads; t++) now = std::max(now, std::max(S->lanes[t].t, S->lanes[t].tr));
    double c = now;
    {
        std::lock_guard<std::mutex> g(d->vw_mu);
        auto later = std::greater<std::pair<double, int>>();
        vw_heap_ready(d, later);
        for (int w = 0; w < nw; w++) {
            if (S->vw[w] < 0) continue;
            d->vw_free.push_back({now, S->vw[w]});
            std::push_heap(d->vw_free.begin(), d->vw_free.end(), later);
            S->vw[w] = -1;
        }
        double latest = -1;
        for (int w = 0; w < nw && !d->vw_free.empty(); w++) {
            std::pop_heap(d->vw_free.begin(), d->vw_free.end(), later);
            latest = std::max(latest, d->vw_free.back().first);
            S->vw[w] = d->vw_free.back().second;
            d->vw_free.pop_back();
        }
        if (latest >= 0) c = latest;
    }
    for (int t = 0; t < S->nthreads; t++) S->lanes[t].t = S->lanes[t].tr = c;
}

extern "C" __attribute__((visibility("default"))) int ata_emu_counts_get(ata_emu_counts *c, int reset)
{
    device *d = D();
    std::lock_guard<std::mutex> one(d->launch_mu);
    if (c) {
        *c = d->tot;
        c->rtt = d->T;
        c->sms = d->sms;
        c->blocks_per_sm = d->bps;
        c->warp = W;
    }
    if (reset) {
        d->tot = ata_emu_counts{};
        d->T = d->T0 = 0;
        shadow_clear();
    }
    return 0;
}

void emu_launch_raw(unsigned grid, unsigned block, void *stream, const char *name, emu_closure *c)
{
    std::shared_ptr<emu_closure> k(c);
    if (grid == 0 || block == 0 || block > MAXT || block % W) {
        last_error = 1;
        return;
    }
    op o;
    o.k = kernel_node{k, name, grid, block, expect_races};
    enqueue(stream, std::move(o));
}

/* --------------------------------------------------------------- runtime */
typedef EMU_RT(Error_t) err_t;
static double host_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

extern "C" {
err_t EMU_RT(GetDeviceCount)(int *n) { *n = 1; return 0; }
err_t EMU_RT(SetDevice)(int d) { return d == 0 ? 0 : EMU_RT(ErrorInvalidDevice); }
err_t EMU_RT(DeviceSynchronize)(void) { D()->tot.host_syncs++; return 0; }
err_t EMU_RT(DeviceGetAttribute)(int *v, int attr, int d)
{
    if (d != 0) return EMU_RT(ErrorInvalidDevice);
#if ATA_EMU_WARP == 64
    if (attr == hipDeviceAttributeMultiprocessorCount) { *v = D()->sms; return 0; }
    if (attr == hipDeviceAttributeWallClockRate) { *v = 100000; return 0; }   /* kHz */
    if (attr == hipDeviceAttributeWarpSize) { *v = W; return 0; }
#else
    if (attr == cudaDevAttrMultiProcessorCount) { *v = D()->sms; return 0; }
    if (attr == cudaDevAttrWarpSize) { *v = W; return 0; }
#endif
    return EMU_RT(ErrorInvalidValue);
}
err_t EMU_RT(GetLastError)(void) { int e = last_error; last_error = 0; return e; }
const char *EMU_RT(GetErrorString)(err_t e)
{
    switch (e) {
    case 0: return "no error (emulated device)";
    case 1: return "invalid argument (emulated device)";
    case 2: return "out of memory (emulated device)";
    case 101: return "invalid device ordinal (emulated device)";
    default: return "error (emulated device)";
    }
}
/* Device faults for tests (tests/faults/): ATA_EMU_FAULT=R:N makes the N-th
 * device allocation, stream, event or graph instantiation of run R fail (a
 * new R starts the count again); the count so far is left in
 * ATA_EMU_FAULT_COUNT, which the sweep reads to know it has covered every
 * site. Runtime calls come from the thread that called the library. */
static bool emu_fault(void)
{
    static char run[32];
    static long count;
    const char *e = getenv("ATA_EMU_FAULT");
    if (!e || !*e) return false;
    const char *colon = strchr(e, ':');
    if (!colon || colon - e >= (long)sizeof run) return false;
    if (strncmp(run, e, colon - e) || run[colon - e]) {
        memcpy(run, e, colon - e);
        run[colon - e] = 0;
        count = 0;
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", ++count);
    setenv("ATA_EMU_FAULT_COUNT", buf, 1);
    return count == atol(colon + 1);
}

err_t EMU_RT(Malloc)(void **p, size_t bytes)
{
    *p = emu_fault() ? nullptr : aligned_alloc(256, (bytes + 255) & ~(size_t)255);
    if (*p) shadow_add(*p, bytes);
    return *p ? 0 : (last_error = 2);
}
err_t EMU_RT(Free)(void *p)
{
    if (p) shadow_del(p);
    free(p);
    return 0;
}
#if ATA_EMU_WARP == 64
err_t hipHostMalloc(void **p, size_t bytes, unsigned flags) { (void)flags; return hipMalloc(p, bytes); }
err_t hipHostFree(void *p) { return hipFree(p); }
#else
err_t cudaMallocHost(void **p, size_t bytes) { return cudaMalloc(p, bytes); }
err_t cudaFreeHost(void *p) { return cudaFree(p); }
#endif
err_t EMU_RT(Memcpy)(void *dst, const void *src, size_t bytes, EMU_RT(MemcpyKind) k)
{
    (void)k;
    if (bytes) memmove(dst, src, bytes);
    D()->tot.copy_bytes += (long long)bytes;
    D()->tot.host_syncs++;      /* a synchronous copy waits for the device */
    return 0;
}
err_t EMU_RT(MemcpyAsync)(void *dst, const void *src, size_t bytes, EMU_RT(MemcpyKind) k, EMU_RT(Stream_t) s)
{
    (void)k;
    op o;
    o.fn = [=] {
        if (bytes) memmove(dst, src, bytes);
        D()->tot.copy_bytes += (long long)bytes;
    };
    return enqueue(s, std::move(o));
}
err_t EMU_RT(MemsetAsync)(void *dst, int v, size_t bytes, EMU_RT(Stream_t) s)
{
    op o;
    o.fn = [=] { memset(dst, v, bytes); };
    return enqueue(s, std::move(o));
}
err_t EMU_RT(StreamCreateWithFlags)(EMU_RT(Stream_t) *s, unsigned f)
{
    (void)f;
    if (emu_fault()) return last_error = 2;
    *s = new emu_stream{nullptr};
    return 0;
}
err_t EMU_RT(StreamDestroy)(EMU_RT(Stream_t) s) { delete s; return 0; }
err_t EMU_RT(StreamSynchronize)(EMU_RT(Stream_t) s) { (void)s; D()->tot.host_syncs++; return 0; }
err_t EMU_RT(StreamBeginCapture)(EMU_RT(Stream_t) s, EMU_RT(StreamCaptureMode) m)
{
    (void)m;
    if (!s || s->capture) return EMU_RT(ErrorInvalidValue);
    s->capture = new emu_graph;
    return 0;
}
err_t EMU_RT(StreamEndCapture)(EMU_RT(Stream_t) s, EMU_RT(Graph_t) *g)
{
    if (!s || !s->capture) return EMU_RT(ErrorInvalidValue);
    *g = s->capture;
    s->capture = nullptr;
    return 0;
}
#if ATA_EMU_WARP == 64
err_t hipGraphInstantiateWithFlags(hipGraphExec_t *e, hipGraph_t g, unsigned long long f)
#else
err_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long f)
#endif
{
    (void)f;
    if (emu_fault()) return last_error = 2;
    *e = new emu_graph(*g);
    return 0;
}
err_t EMU_RT(GraphLaunch)(EMU_RT(GraphExec_t) e, EMU_RT(Stream_t) s)
{
    if (s && s->capture) return EMU_RT(ErrorStreamCaptureUnsupported);
    D()->tot.graph_launches++;
    for (const op &o : e->ops) run_op(o, true);
    return 0;
}
err_t EMU_RT(GraphExecDestroy)(EMU_RT(GraphExec_t) e) { delete e; return 0; }
err_t EMU_RT(GraphDestroy)(EMU_RT(Graph_t) g) { delete g; return 0; }
err_t EMU_RT(EventCreate)(EMU_RT(Event_t) *e)
{
    if (emu_fault()) return last_error = 2;
    *e = new emu_event{0};
    return 0;
}
err_t EMU_RT(EventCreateWithFlags)(EMU_RT(Event_t) *e, unsigned flags) { (void)flags; return EMU_RT(EventCreate)(e); }
/* Work on a stream has finished when its call returns here: nothing to wait for. */
err_t EMU_RT(StreamWaitEvent)(EMU_RT(Stream_t) s, EMU_RT(Event_t) e, unsigned flags)
{ (void)s; (void)e; (void)flags; return 0; }
err_t EMU_RT(EventDestroy)(EMU_RT(Event_t) e) { delete e; return 0; }
err_t EMU_RT(EventRecord)(EMU_RT(Event_t) e, EMU_RT(Stream_t) s)
{
    if (s && s->capture) return EMU_RT(ErrorStreamCaptureUnsupported);
    e->t = host_now();
    return 0;
}
err_t EMU_RT(EventSynchronize)(EMU_RT(Event_t) e) { (void)e; D()->tot.host_syncs++; return 0; }
err_t EMU_RT(EventElapsedTime)(float *ms, EMU_RT(Event_t) a, EMU_RT(Event_t) b)
{
    *ms = (float)((b->t - a->t) * 1e3);
    return 0;
}
} /* extern "C" */

/* ------------------------------------------------ sparse: the reference */
struct emu_sp_handle { int dummy; };
struct emu_sp_mat { ata_csr A; int fill, diag; };
struct emu_sp_vec { double *v; int64_t n; };
struct emu_sp_spsv { int dummy; };
struct emu_sp_descr { int dummy; };
struct emu_sp_ilu { int pivot; };
typedef EMU_SP(Status_t) sp_st;

static void vendor_notice(void)
{
    static std::once_flag once;
    std::call_once(once, [] {
        fprintf(stderr, "emu: policy 'vendor' runs ATA's serial reference here (%s is not emulated)\n",
                W == 64 ? "hipSPARSE" : "cuSPARSE");
    });
}

extern "C" {
sp_st EMU_SP(Create)(EMU_SP(Handle_t) *h) { *h = new emu_sp_handle(); return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(Destroy)(EMU_SP(Handle_t) h) { delete h; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SetStream)(EMU_SP(Handle_t) h, EMU_RT(Stream_t) s) { (void)h; (void)s; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(CreateCsr)(EMU_SP(SpMatDescr_t) *m, int64_t rows, int64_t cols, int64_t nnz, void *rowptr, void *col,
                        void *val, EMU_SP(IndexType_t) it, EMU_SP(IndexType_t) jt, EMU_SP(IndexBase_t) base,
                        emu_data_type t)
{
    (void)it; (void)jt; (void)base; (void)t;
    *m = new emu_sp_mat{{(int)rows, (int)cols, (int)nnz, (int *)rowptr, (int *)col, (double *)val}, 0, 0};
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(DestroySpMat)(EMU_SP(SpMatDescr_t) m) { delete m; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SpMatSetAttribute)(EMU_SP(SpMatDescr_t) m, EMU_SP(SpMatAttribute_t) a, void *v, size_t size)
{
    int x = 0;
    memcpy(&x, v, size < sizeof x ? size : sizeof x);
    if (a == EMU_SPC(SPMAT_FILL_MODE)) m->fill = x;
    else m->diag = x;
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(CreateDnVec)(EMU_SP(DnVecDescr_t) *v, int64_t n, void *val, emu_data_type t)
{
    (void)t;
    *v = new emu_sp_vec{(double *)val, n};
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(DestroyDnVec)(EMU_SP(DnVecDescr_t) v) { delete v; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(DnVecSetValues)(EMU_SP(DnVecDescr_t) v, void *val) { v->v = (double *)val; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SpSV_createDescr)(EMU_SP(SpSVDescr_t) *d) { *d = new emu_sp_spsv(); return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SpSV_destroyDescr)(EMU_SP(SpSVDescr_t) d) { delete d; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SpSV_bufferSize)(EMU_SP(Handle_t), EMU_SP(Operation_t), const void *, EMU_SP(SpMatDescr_t),
                              EMU_SP(DnVecDescr_t), EMU_SP(DnVecDescr_t), emu_data_type, EMU_SP(SpSVAlg_t),
                              EMU_SP(SpSVDescr_t), size_t *bytes)
{
    *bytes = 8;
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(SpSV_analysis)(EMU_SP(Handle_t), EMU_SP(Operation_t), const void *, EMU_SP(SpMatDescr_t),
                            EMU_SP(DnVecDescr_t), EMU_SP(DnVecDescr_t), emu_data_type, EMU_SP(SpSVAlg_t),
                            EMU_SP(SpSVDescr_t), void *)
{
    vendor_notice();
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(SpSV_solve)(EMU_SP(Handle_t), EMU_SP(Operation_t), const void *alpha, EMU_SP(SpMatDescr_t) m,
                         EMU_SP(DnVecDescr_t) b, EMU_SP(DnVecDescr_t) x, emu_data_type, EMU_SP(SpSVAlg_t),
                         EMU_SP(SpSVDescr_t))
{
    if (*(const double *)alpha != 1.0) return EMU_SPC(STATUS_INVALID_VALUE);
    /* The reference stops at the first non-finite row: the rows it did not
     * reach stay NaN, so the runtime's own check of x names a row. */
    for (int64_t i = 0; i < x->n; i++) x->v[i] = NAN;
    (void)ata_ref_sptrsv_csr(&m->A, m->fill == EMU_SPC(FILL_MODE_LOWER) ? ATA_LOWER : ATA_UPPER,
                             m->diag == EMU_SPC(DIAG_TYPE_UNIT) ? ATA_UNIT : ATA_NON_UNIT, b->v, x->v);
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(CreateMatDescr)(EMU_SP(MatDescr_t) *d) { *d = new emu_sp_descr(); return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(DestroyMatDescr)(EMU_SP(MatDescr_t) d) { delete d; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SetMatIndexBase)(EMU_SP(MatDescr_t), EMU_SP(IndexBase_t)) { return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(SetMatType)(EMU_SP(MatDescr_t), EMU_SP(MatrixType_t)) { return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(CreateCsrilu02Info)(csrilu02Info_t *i) { *i = new emu_sp_ilu{-1}; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(DestroyCsrilu02Info)(csrilu02Info_t i) { delete i; return EMU_SPC(STATUS_SUCCESS); }
sp_st EMU_SP(Dcsrilu02_bufferSize)(EMU_SP(Handle_t), int, int, const EMU_SP(MatDescr_t), double *, const int *,
                                   const int *, csrilu02Info_t, int *bytes)
{
    *bytes = 8;
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(Dcsrilu02_analysis)(EMU_SP(Handle_t), int m, int, const EMU_SP(MatDescr_t), const double *,
                                 const int *rowptr, const int *col, csrilu02Info_t info, EMU_SP(SolvePolicy_t),
                                 void *)
{
    vendor_notice();
    info->pivot = -1;
    for (int i = 0; i < m && info->pivot < 0; i++) {    /* structural: a missing diagonal */
        int found = 0;
        for (int q = rowptr[i]; q < rowptr[i + 1]; q++) found |= col[q] == i;
        if (!found) info->pivot = i;
    }
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(Dcsrilu02)(EMU_SP(Handle_t), int m, int nnz, const EMU_SP(MatDescr_t), double *val, const int *rowptr,
                        const int *col, csrilu02Info_t info, EMU_SP(SolvePolicy_t), void *)
{
    ata_csr A = {m, m, nnz, (int *)rowptr, (int *)col, val};
    info->pivot = -1;
    if (ata_ref_ilu0(&A) != ATA_OK)
        for (int i = 0; i < m && info->pivot < 0; i++)
            for (int q = rowptr[i]; q < rowptr[i + 1]; q++)
                if (col[q] == i && !(val[q] != 0 && val[q] - val[q] == 0)) info->pivot = i;
    return EMU_SPC(STATUS_SUCCESS);
}
sp_st EMU_SP(Xcsrilu02_zeroPivot)(EMU_SP(Handle_t), csrilu02Info_t info, int *pos)
{
    *pos = info->pivot;
    return info->pivot >= 0 ? EMU_SPC(STATUS_ZERO_PIVOT) : EMU_SPC(STATUS_SUCCESS);
}
} /* extern "C" */
