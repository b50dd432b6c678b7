/* gpu_device.c - the GPU backend's context (device, stream, occupancy, the
 * pinned words a solve reads back), device memory and copies, and the T_l
 * probe (Eq. 5.2: the cost of one more launch in stream order). */
#include <limits.h>
#include "gpu_internal.h"

/* Every runtime call goes through GCHECK and friends: a failure becomes
 * ATA_ERR_BACKEND naming the call and the runtime's message. The runtime
 * also records the error for its next GetLastError, which the kernel
 * launchers return: left there, a failed stream creation made the next
 * context's first launch fail with it (found by `make faults`). Reported
 * here, it is consumed here (a sticky error stays, as it must). */
ata_status gpu_fail(gpu_err e, const char *what)
{
    (void)GPU(GetLastError)();
    return ata_fail(ATA_ERR_BACKEND, GPU_NAME " %s: %s", what, GPU(GetErrorString)(e));
}

static int env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : dflt;
}

ata_status gpu_malloc(void **p, size_t bytes, const char *what)
{
    *p = NULL;
    gpu_err e = GPU(Malloc)(p, bytes ? bytes : 8);
    if (e != GPU_OK) {
        (void)GPU(GetLastError)();
        *p = NULL;
        return ata_fail(e == GPU(ErrorMemoryAllocation) ? ATA_ERR_NOMEM : ATA_ERR_BACKEND,
                        GPU_NAME " malloc of %zu bytes for %s: %s", bytes, what, GPU(GetErrorString)(e));
    }
    return ATA_OK;
}
void gpu_free(void *p) { if (p) (void)GPU(Free)(p); }

ata_status gpu_upload(gpu_ctx *g, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return ATA_OK;
    GCHECK(GPU(MemcpyAsync)(dst, src, bytes, GPU(MemcpyHostToDevice), g->stream));
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

ata_status gpu_download(gpu_ctx *g, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return ATA_OK;
    GCHECK(GPU(MemcpyAsync)(dst, src, bytes, GPU(MemcpyDeviceToHost), g->stream));
    GCHECK(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
}

int gpu_resident_blocks(const gpu_ctx *g, int mode)
{
    int b = g->blocks_per_sm[mode] > 0 ? g->blocks_per_sm[mode] : 1;
    return g->sms * b;
}

int gpu_pick_group(const gpu_ctx *g, double mean)
{
    int G = 1;
    if (g->group_override > 0) {
        while (G < g->group_override && G < g->warp) G *= 2;
        return G;
    }
    while (G < mean && G < g->warp) G *= 2;
    return G;
}

/* ---------------------------------------------------------------- context */
void gpu_ctx_fini(ata_context *ctx)
{
    gpu_ctx *g = GC(ctx);
    if (!g) return;
    (void)GPU(SetDevice)(g->device);
    if (g->stream) (void)GPU(StreamSynchronize)(g->stream);
    if (g->have_sparse) SP(Destroy)(g->sparse);
    gpu_free(g->dot_partial);
    gpu_free(g->dot_out);
    if (g->host_state) (void)GPU_HOSTFREE(g->host_state);
    if (g->host_scalar) (void)GPU_HOSTFREE(g->host_scalar);
    if (g->stream) (void)GPU(StreamDestroy)(g->stream);
    free(g);
    ctx->dev = NULL;
}

ata_status gpu_ctx_init(ata_context *ctx)
{
    int count = 0;
    gpu_err e = GPU(GetDeviceCount)(&count);
    if (e != GPU_OK || count <= 0) {
        (void)GPU(GetLastError)();
        return ata_fail(ATA_ERR_BACKEND, "no " GPU_NAME " device (%sGetDeviceCount: %s)",
                        GPU_NAME[0] == 'C' ? "cuda" : "hip",
                        e != GPU_OK ? GPU(GetErrorString)(e) : "0 devices");
    }
    if (ctx->opt.device < 0 || ctx->opt.device >= count)
        return ata_fail(ATA_ERR_BACKEND, GPU_NAME " device %d does not exist (%d device%s)",
                        ctx->opt.device, count, count == 1 ? "" : "s");
    gpu_ctx *g = calloc(1, sizeof *g);
    if (!g) return ata_fail(ATA_ERR_NOMEM, "gpu context: out of memory");
    ctx->dev = g;
    ata_status st = ATA_OK;
    g->device = ctx->opt.device;
    GCHECK_GO(GPU(SetDevice)(g->device));
    GCHECK_GO(GPU(DeviceGetAttribute)(&g->sms, GPU_ATTR_SMS, g->device));
    g->warp = ata_gpu_warp_size();
    g->wpb = ATA_GPU_BLOCK / g->warp;
    for (int m = 0; m < 4; m++) {
        int e2 = ata_gpu_occupancy(m, &g->blocks_per_sm[m]);
        if (e2 != 0) { st = gpu_fail((gpu_err)e2, "occupancy query"); goto fail; }
        if (g->blocks_per_sm[m] < 1) g->blocks_per_sm[m] = 1;
    }
    g->timer_hz = ata_gpu_timer_hz();
#if defined(ATA_HAVE_HIP) && (defined(ATA_EMU) || (defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6))
    {   /* the rate of s_memrealtime, as the device reports it (kHz) */
        int khz = 0;
        if (hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, g->device) == hipSuccess && khz > 0)
            g->timer_hz = khz * 1e3;
        (void)hipGetLastError();
    }
#endif
    GCHECK_GO(GPU(StreamCreateWithFlags)(&g->stream, GPU(StreamNonBlocking)));
    GCHECK_GO(GPU_HOSTALLOC(&g->host_state, sizeof *g->host_state));
    GCHECK_GO(GPU_HOSTALLOC(&g->host_scalar, sizeof *g->host_scalar));
    g->dot_grid = 4 * g->sms;
    if (g->dot_grid > 1024) g->dot_grid = 1024;
    if ((st = gpu_malloc((void **)&g->dot_partial, (size_t)g->dot_grid * sizeof(double), "dot partials")) != ATA_OK)
        goto fail;
    if ((st = gpu_malloc((void **)&g->dot_out, sizeof(double), "dot result")) != ATA_OK) goto fail;
    g->use_graph = env_int("ATA_GPU_GRAPH", GPU_GRAPH_DEFAULT) != 0;
    g->group_override = env_int("ATA_GPU_GROUP", 0);
    const char *wait = getenv("ATA_GPU_WAIT");
    if (wait && *wait && strcmp(wait, "value") && strcmp(wait, "flag")) {
        st = ata_fail(ATA_ERR_ARG, "ATA_GPU_WAIT=%s: expected value or flag", wait);
        goto fail;
    }
    g->wait = wait && !strcmp(wait, "flag") ? ATA_GPU_WAIT_FLAG : ATA_GPU_WAIT_VALUE;
    const char *map = getenv("ATA_GPU_MAP");
    if (map && *map && strcmp(map, "elastic") && strcmp(map, "elastic-warp") && strcmp(map, "fixed")) {
        st = ata_fail(ATA_ERR_ARG, "ATA_GPU_MAP=%s: expected elastic, elastic-warp or fixed", map);
        goto fail;
    }
    g->elastic = !(map && !strcmp(map, "fixed"));
    g->hub_block = g->elastic && !(map && !strcmp(map, "elastic-warp"));
    const char *pcg = getenv("ATA_GPU_PCG");
    if (pcg && *pcg && strcmp(pcg, "device") && strcmp(pcg, "host")) {
        st = ata_fail(ATA_ERR_ARG, "ATA_GPU_PCG=%s: expected device or host", pcg);
        goto fail;
    }
    g->pcg_device = !(pcg && !strcmp(pcg, "host"));
    /* How long a waiting warp polls before it pauses between polls. The
     * first GPU run (H200, lap3d:100, ca) saw L2 79% busy with DRAM idle
     * while the critical path took 4.4 us a level; our guess, not yet
     * measured, is that the polls of warps far ahead crowd the loads the
     * next level waits on. Selectable until a GPU run picks
     * (bench/gpu-check.sh sweeps it). */
    g->spin_rounds = 32;
    g->pause_ns = 64;
    const char *bo = getenv("ATA_GPU_BACKOFF");
    if (bo && *bo) {
        /* digits only: no sign, blank or wrap that strtoul/sscanf would take */
        char *colon, *end;
        unsigned long r = 0, ns = 0;
        const int digits = bo[0] >= '0' && bo[0] <= '9' && (colon = strchr(bo, ':')) && colon[1] >= '0' &&
                           colon[1] <= '9';
        if (digits) {
            r = strtoul(bo, &end, 10);
            if (end != colon) r = ULONG_MAX;
            ns = strtoul(colon + 1, &end, 10);
            if (*end) ns = 0;
        }
        if (!digits || ns < 1 || ns > 100000 || r > 1000000) {
            st = ata_fail(ATA_ERR_ARG, "ATA_GPU_BACKOFF=%s: expected ROUNDS:NS (polls before pausing, "
                          "0..1000000; pause 1..100000 ns)", bo);
            goto fail;
        }
        g->spin_rounds = (unsigned)r;
        g->pause_ns = (unsigned)ns;
    }
    g->epoch0 = (uint32_t)strtoul(getenv("ATA_GPU_EPOCH0") ? getenv("ATA_GPU_EPOCH0") : "0", NULL, 10);
    /* Eq. 5.1: S_min = the user tasks the device runs at once: rows in
     * flight, not warps. The pull kernel's resident warps times the rows a
     * warp holds: with the elastic map a short row has a lane of its own
     * (W rows per warp; plans of longer rows have fewer, W / G); with the
     * fixed map, as first designed, one (S_min = warps). ca cuts the level
     * order into atasks of at least S_min rows, la into chunks of S_min
     * consecutive rows, greedy into chunks of `capacity`: on an H100 shape
     * 135168 rows instead of 4224, so ca runs lap3d:64 in a handful of
     * launches instead of ~50 (bench/EMU-COUNTS.md). */
    const long long warps = (long long)g->sms * g->blocks_per_sm[ATA_GPU_PULL] * g->wpb;
    const long long rows = warps * (g->elastic ? g->warp : 1);
    ctx->S_min = rows > 1 << 30 ? 1 << 30 : (int)rows;
    ctx->capacity = ctx->S_min;
    return ATA_OK;
fail:
    gpu_ctx_fini(ctx);
    return st;
}

/* ----------------------------------------------------------------- probes */
/* T_l: cost of one coarse dependency, i.e. one more kernel in stream order
 * (a graph node when graphs are on), measured back to back with events. */
ata_status gpu_probe_sync_cost(ata_context *ctx, double *T_l)
{
    gpu_ctx *g = GC(ctx);
    const int grid = gpu_resident_blocks(g, ATA_GPU_PULL), reps = 200;
    GPU(Event_t) e0 = NULL, e1 = NULL;
    GPU(Graph_t) graph = NULL;
    GPU(GraphExec_t) exec = NULL;
    ata_status st = ATA_OK;
    float ms = 0;
    GCHECK(GPU(SetDevice)(g->device));
    GCHECK_GO(GPU(EventCreate)(&e0));
    GCHECK_GO(GPU(EventCreate)(&e1));
    for (int r = 0; r < 20; r++) {
        int e = ata_gpu_empty(grid, SV(g));
        if (e) { st = gpu_fail((gpu_err)e, "empty kernel"); goto fail; }
    }
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    if (g->use_graph && GPU(StreamBeginCapture)(g->stream, GPU(StreamCaptureModeThreadLocal)) == GPU_OK) {
        int bad = 0;
        for (int r = 0; r < reps / 4; r++) bad |= ata_gpu_empty(grid, SV(g));
        if (GPU(StreamEndCapture)(g->stream, &graph) != GPU_OK || bad || GPU_GRAPH_INSTANTIATE(&exec, graph) != GPU_OK)
            exec = NULL;
        (void)GPU(GetLastError)();
    }
    if (exec) {
        GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        for (int r = 0; r < 4; r++) GCHECK_GO(GPU(GraphLaunch)(exec, g->stream));
        GCHECK_GO(GPU(EventRecord)(e1, g->stream));
    } else {
        GCHECK_GO(GPU(EventRecord)(e0, g->stream));
        for (int r = 0; r < reps; r++) {
            int e = ata_gpu_empty(grid, SV(g));
            if (e) { st = gpu_fail((gpu_err)e, "empty kernel"); goto fail; }
        }
        GCHECK_GO(GPU(EventRecord)(e1, g->stream));
    }
    GCHECK_GO(GPU(EventSynchronize)(e1));
    GCHECK_GO(GPU(EventElapsedTime)(&ms, e0, e1));
    *T_l = ms * 1e-3 / reps;
    if (!(*T_l > 1e-7)) *T_l = 1e-7;
fail:
    if (exec) (void)GPU(GraphExecDestroy)(exec);
    if (graph) (void)GPU(GraphDestroy)(graph);
    if (e0) (void)GPU(EventDestroy)(e0);
    if (e1) (void)GPU(EventDestroy)(e1);
    return st;
}
