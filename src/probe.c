/* probe.c - medians of the S-auto probes and their cache file (probe.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "error.h"
#include "probe.h"

typedef struct { double med, min, max; int reps; } probe_stat;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(double *v, int n, probe_stat *s)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s->min = v[0];
    s->max = v[n - 1];
    s->med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s->reps = n;
}

/* The cache file's path, or 0 when the cache is off. */
static int cache_path(const ata_context *ctx, char *path, size_t cap)
{
    const char *env = getenv("ATA_PROBE_CACHE");
    if (env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "no"))) return 0;
    if (env && *env && strcmp(env, "1")) return snprintf(path, cap, "%s", env) < (int)cap;
    char dir[PATH_MAX];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/ata", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/ata", home);
    else return 0;
    char host[128] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == ' ') *c = '_';
    char who[32];
    if (ctx->backend == ATA_BACKEND_CPU) snprintf(who, sizeof who, "%d", ctx->threads);
    else snprintf(who, sizeof who, "dev%d", ctx->opt.device);
    return snprintf(path, cap, "%s/probe-%s-%s-%s.txt", dir, host, ata_backend_name(ctx->backend), who) < (int)cap;
}

static void make_dirs(const char *path)
{
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", path);
    for (char *c = d + 1; *c; c++) {
        if (*c != '/') continue;
        *c = '\0';
        if (mkdir(d, 0755) != 0 && errno != EEXIST) return;
        *c = '/';
    }
}

/* The last line "KEY med min max reps" of the file (later lines win). */
static int cache_read(const char *path, const char *key, probe_stat *s)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256], k[96];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        probe_stat t;
        if (line[0] == '#') continue;
        if (sscanf(line, "%95s %lg %lg %lg %d", k, &t.med, &t.min, &t.max, &t.reps) == 5 && !strcmp(k, key) &&
            t.med > 0 && t.min <= t.med && t.med <= t.max && t.reps > 0) {
            *s = t;
            found = 1;
        }
    }
    fclose(f);
    return found;
}

/* A probe taken while the machine is oversubscribed (1-minute load average
 * at or above its online CPUs) measures the other jobs, not the machine: a
 * synchronisation then costs microseconds instead of ~0.1 us and S comes
 * out hundreds of times too large. It is used for this run but not cached,
 * so it cannot become every later run's S. ATA_PROBE_CACHE_ANY_LOAD=1 keeps
 * it anyway. */
static int machine_busy(void)
{
    const char *any = getenv("ATA_PROBE_CACHE_ANY_LOAD");
    if (any && !strcmp(any, "1")) return 0;
    double load[1];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return getloadavg(load, 1) == 1 && cpus > 0 && load[0] >= (double)cpus;
}

/* One line, appended (a failure to write only costs the next run a probe). */
static void cache_write(const char *path, const char *key, const probe_stat *s)
{
    if (machine_busy()) return;
    make_dirs(path);
    int fresh = access(path, F_OK) != 0;
    FILE *f = fopen(path, "a");
    if (!f) return;
    if (fresh)
        fprintf(f, "# ATA S-auto probe cache (src/probe.h): KEY median min max probes, seconds.\n"
                   "# Delete this file to probe again; ATA_PROBE_CACHE=0 turns the cache off.\n");
    fprintf(f, "%s %.17g %.17g %.17g %d\n", key, s->med, s->min, s->max, s->reps);   /* exact round trip: S is a floor */
    fclose(f);
}

/* FNV-1a over the plan's triangle pattern and kind: T_u's cache key. */
static uint64_t pattern_hash(const ata_plan *p)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(x) do { h ^= (uint64_t)(uint32_t)(x); h *= 1099511628211ull; } while (0)
    const ata_csr *T = p->T;
    MIX(p->kind); MIX(p->opt.traversal); MIX(p->opt.uplo); MIX(p->opt.diag);
    MIX(T->nrows); MIX(T->nnz);
    for (int i = 0; i <= T->nrows; i++) MIX(T->rowptr[i]);
    for (int q = 0; q < T->nnz; q++) MIX(T->col[q]);
    if (p->Tu) {    /* split ILU0: U's part too */
        for (int i = 0; i <= p->Tu->nrows; i++) MIX(p->Tu->rowptr[i]);
        for (int q = 0; q < p->Tu->nnz; q++) MIX(p->Tu->col[q]);
    }
#undef MIX
    return h;
}

ata_status probe_costs(ata_plan *p, double *T_l, double *T_u)
{
    ata_context *ctx = p->ctx;
    char path[PATH_MAX];
    int cache = cache_path(ctx, path, sizeof path);
    double v[PROBE_REPS];
    if (ctx->T_l == 0) {
        probe_stat s;
        if (cache && cache_read(path, "T_l", &s)) {
            ctx->T_l_cached = 1;
        } else {
            for (int k = 0; k < PROBE_REPS; k++) ATA_TRY(ctx->ops->probe_sync_cost(ctx, &v[k]));
            summarise(v, PROBE_REPS, &s);
            if (cache) cache_write(path, "T_l", &s);
        }
        ctx->T_l = s.med;
        ctx->T_l_min = s.min;
        ctx->T_l_max = s.max;
    }
    char key[64];
    snprintf(key, sizeof key, "T_u:%016" PRIx64, pattern_hash(p));
    probe_stat u;
    int u_cached = cache && cache_read(path, key, &u);
    if (!u_cached) {
        for (int k = 0; k < PROBE_REPS; k++) ATA_TRY(ctx->ops->probe_task_cost(p, &v[k]));
        summarise(v, PROBE_REPS, &u);
        if (cache) cache_write(path, key, &u);
    }
    p->info.T_l = *T_l = ctx->T_l;
    p->info.T_l_min = ctx->T_l_min;
    p->info.T_l_max = ctx->T_l_max;
    p->info.T_u = *T_u = u.med;
    p->info.T_u_min = u.min;
    p->info.T_u_max = u.max;
    p->info.probe_reps = PROBE_REPS;
    p->info.probe_cached = ctx->T_l_cached && u_cached;
    return ATA_OK;
}
