/* emu_counts.h - the work the host SIMT emulator counts while it runs the
 * kernels: what decides GPU time, as counts on the emulator, never as
 * times (README, "GPU emulator: counted work"). C, so that ata-bench and
 * test_gpu read them from the emulated module (libata_cuda.so built with
 * ATA_GPU=emu32, libata_hip.so with emu64), which exports
 * ata_emu_counts_get; a real GPU module does not, and the lookup below then
 * says so (NULL).
 *
 * The model behind `rtt`. Every lane carries a clock in units of one
 * dependent global-memory round trip (L2 and back). A load returns at
 * max(issue, when its value was stored) + 1; loads issued without a use of
 * an earlier load's result in between (a batch) overlap, and the lane waits
 * for them at a use point: a shuffle (which also waits for its source
 * lane), a __syncwarp (for every lane of its mask), __syncthreads, a store,
 * a fence, an acquire, or an explicit ata_dep() where a later address comes
 * from a loaded value. Lanes are coupled only by the data they exchange: a
 * ballot (loop control) waits for nobody, so lanes of different rows keep
 * their own clocks and the counts do not depend on the order the emulator
 * happens to run the lanes in (the warp's lock step is left out: a bound
 * from below). A GPU-scope fence (and a release, which is one) costs
 * a round trip; a poll that does not yet see what it waits for costs
 * nothing (the count is of the dependence chain, not of how often the
 * emulator's lanes happened to spin). A kernel starts when the one before
 * it in the stream ends. A persistent grid's claims are given, in claim
 * order, to the virtual warp (of grid x warps-per-block) whose clock is
 * smallest, so `rtt` is the makespan of the reported device shape
 * (ATA_EMU_SMS x ATA_EMU_BLOCKS_PER_SM, or ATA_EMU_SHAPE=h100), not of the
 * two host threads that run it. Launch and host-synchronisation costs are
 * not in `rtt`: they are counted apart; so are shuffles (free: a value
 * forwarded between lanes costs no round trip). The T_u probe's kernels
 * (every row at once, results discarded) are not counted. Bytes are what
 * the lanes ask for (a load of one address by several lanes counts for
 * each: no coalescing or cache). */
#ifndef ATA_EMU_COUNTS_H
#define ATA_EMU_COUNTS_H

typedef struct {
    double rtt;                 /* dependent round trips on the critical path (model clock at the end) */
    long long loads, load_bytes;    /* global loads that returned what the kernel used */
    long long stores, store_bytes;  /* global stores (plain, relaxed, release) */
    long long polls_failed;     /* polls that did not see what they waited for (emulator-scheduled; info) */
    /* Fences, releases and acquires are instructions of a warp: lanes that
     * execute one together (between two collectives) count once. */
    long long fences_gpu;       /* fence.acq_rel.gpu (GPU scope) */
    long long releases;         /* release stores / RMWs at GPU scope (a fence each on the hardware) */
    long long acquires;         /* acquire loads at GPU scope (each invalidates L1) */
    long long fences_cta;       /* warp / block-scope syncs with memory ordering (__syncwarp, HIP's group fence) */
    long long barriers;         /* __syncthreads */
    long long atomics;          /* RMWs: atomicAdd/CAS/Min, red, fp64 adds */
    long long atomic_addrs;     /* distinct addresses they hit: atomics - atomic_addrs hit an address again */
    long long atomics_hottest;  /* the most RMWs on one address */
    long long launches;         /* kernels run (directly or from a graph) */
    long long graph_launches;   /* graph launches (each runs graph_nodes / graph_launches kernels) */
    long long graph_nodes;      /* kernels run from a graph */
    long long host_syncs;       /* stream / event / device synchronisations and synchronous copies */
    long long copy_bytes;       /* host <-> device copies */
    int sms, blocks_per_sm, warp; /* the device shape the counts were made on */
} ata_emu_counts;

/* In the emulated module: copy the counts since the last reset to *c (may
 * be NULL), then zero them when `reset` is set. Returns 0. */
typedef int (*ata_emu_counts_fn)(ata_emu_counts *c, int reset);

#ifndef __cplusplus
/* The loaded emulated module's ata_emu_counts_get, or NULL (no GPU module
 * loaded yet, or a real one): looked up among the objects the process has
 * loaded (the module is dlopened RTLD_LOCAL, so not by name). */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
static inline int ata_emu_counts_phdr_(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *nm = info->dlpi_name, *slash = nm ? strrchr(nm, '/') : NULL;
    const char *base = slash ? slash + 1 : nm;
    if (!base || (strcmp(base, "libata_cuda.so") && strcmp(base, "libata_hip.so"))) return 0;
    void *h = dlopen(nm, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return 0;
    void *f = dlsym(h, "ata_emu_counts_get");
    dlclose(h);     /* RTLD_NOLOAD took a reference; the module stays loaded */
    if (!f) return 0;
    memcpy(arg, &f, sizeof f);
    return 1;
}
static inline ata_emu_counts_fn ata_emu_counts_find(void)
{
    void *f = NULL;
    dl_iterate_phdr(ata_emu_counts_phdr_, &f);
    ata_emu_counts_fn fn;
    memcpy(&fn, &f, sizeof fn);
    return f ? fn : NULL;
}
#endif

#endif
