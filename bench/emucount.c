/* emucount.c - the work the emulated GPU module counted (kernels/emu/
 * emu_counts.h), per run: counts on the emulator, never times. Found only
 * when the backend's module is the emulated one (make gpu-emu's
 * libata_cuda.so / libata_hip.so); a real GPU module, or the CPU, has none,
 * and ata-bench then prints and writes nothing of this. */
#include <math.h>
#include <stdio.h>
#include "bench.h"

static ata_emu_counts_fn counts_fn;

int emucount_init(void)
{
    counts_fn = ata_emu_counts_find();
    return counts_fn != NULL;
}

void emucount_reset(void)
{
    if (counts_fn) counts_fn(NULL, 1);
}

void emucount_take(bench_run *r)
{
    if (!counts_fn) return;
    counts_fn(&r->emu, 1);
    r->emu_ok = 1;
    snprintf(r->emu_shape, sizeof r->emu_shape, "%dx%dx%d", r->emu.sms, r->emu.blocks_per_sm, r->emu.warp);
}

/* The counts of run r, made per unit of what the run did (emucount_metrics
 * in bench.h). */
void emucount_metrics(const bench_results *R, const bench_run *r, emu_metrics *e)
{
    const bench_opts *o = R->opt;
    const bench_matrix *m = &R->mats[r->matrix];
    const ata_emu_counts *c = &r->emu;
    double solves = 1, rows = m->n, levels = m->nlevels[o->cmd == CMD_SPTRSV ? (int)o->uplo : 0], per = 1;
    e->unit = "solve";
    if (o->cmd == CMD_SPTRSV && r->ninfo > 0 && r->info[0].levels > 0) levels = r->info[0].levels;
    if (o->cmd == CMD_ILU0) e->unit = "factorisation";
    if (o->cmd == CMD_PCG) {
        /* iterations + 1 preconditioner applications, L and U each */
        const int its = r->emu_iterations > 0 ? r->emu_iterations : 1;
        const int tris = r->ninfo > 1 ? 2 : 1;
        solves = (double)(its + 1) * tris;
        levels = 0;
        for (int k = 0; k < r->ninfo; k++) levels += r->info[k].levels;
        levels *= its + 1;
        rows = (double)m->n * solves;
        per = its;
        e->unit = "iteration";
    }
    e->rtt_per_level = levels > 0 ? c->rtt / levels : NAN;
    e->fences_per_row = rows > 0 ? (double)(c->fences_gpu + c->releases) / rows : NAN;
    e->acquires_per_row = rows > 0 ? (double)c->acquires / rows : NAN;
    e->atomics_per_row = rows > 0 ? (double)c->atomics / rows : NAN;
    e->launches = c->launches / per;
    e->host_syncs = c->host_syncs / per;
    e->bytes = (double)(c->load_bytes + c->store_bytes) / per;
    e->same_addr = (double)(c->atomics - c->atomic_addrs) / per;
    e->hottest = (double)c->atomics_hottest;
    e->graph_nodes = c->graph_nodes / per;
    e->rtt = c->rtt / per;
}

void emucount_lines(FILE *f, const bench_results *R, int matrix)
{
    int any = 0;
    for (int k = 0; k < R->nruns; k++) {
        const bench_run *r = &R->runs[k];
        if (r->matrix != matrix || !r->emu_ok) continue;
        emu_metrics e;
        emucount_metrics(R, r, &e);
        if (!any++)
            fprintf(f, "  %s: work counted on the emulator (device %d SMs x %d blocks, warp %d; counts, not "
                    "times), per %s:\n", R->mats[matrix].label, r->emu.sms, r->emu.blocks_per_sm, r->emu.warp,
                    e.unit);
        fprintf(f, "    %-9s %7.2f round trips/level  %6.3f GPU fences/row  %6.3f acquires/row  %6.3f atomics/row "
                "(%.0f on an address hit before, hottest %.0f)  %.1f launches (%.1f from graphs)  %.2f host syncs  "
                "%.3g bytes\n", cli_policy_name(r->policy), e.rtt_per_level, e.fences_per_row, e.acquires_per_row,
                e.atomics_per_row, e.same_addr, e.hottest, e.launches, e.graph_nodes, e.host_syncs, e.bytes);
    }
}
