/* agg.c - aggregation policies (paper sec. 5.3.3) and the hierarchical DAG
 * they induce: adaptive tasks, coarse/fine edges, tracking and barriers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "agg.h"
#include "error.h"
#include "policy.h"
#include "mem.h"

void agg_free(agg_result *a)
{
    if (!a) return;
    free(a->order);
    free(a->atask_ptr);
    free(a->flags);
    free(a->run_ptr);
    free(a->block_ptr);
    free(a->atask_block);
    memset(a, 0, sizeof *a);
}

ata_status agg_copy(const agg_result *src, int n, agg_result *dst)
{
    *dst = *src;
    dst->order = mem_alloc(((size_t)n + 1) * sizeof *dst->order);
    dst->atask_ptr = mem_alloc(((size_t)src->natasks + 1) * sizeof *dst->atask_ptr);
    dst->flags = mem_alloc((size_t)src->natasks + 1);
    dst->run_ptr = mem_alloc(((size_t)src->nruns + 1) * sizeof *dst->run_ptr);
    dst->block_ptr = dst->atask_block = NULL;
    if (src->block_ptr) {
        dst->block_ptr = mem_alloc(((size_t)src->nblocks + 1) * sizeof *dst->block_ptr);
        dst->atask_block = mem_alloc(((size_t)src->natasks + 1) * sizeof *dst->atask_block);
    }
    if (!dst->order || !dst->atask_ptr || !dst->flags || !dst->run_ptr ||
        (src->block_ptr && (!dst->block_ptr || !dst->atask_block))) {
        agg_free(dst);
        return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
    }
    memcpy(dst->order, src->order, (size_t)n * sizeof *dst->order);
    memcpy(dst->atask_ptr, src->atask_ptr, ((size_t)src->natasks + 1) * sizeof *dst->atask_ptr);
    memcpy(dst->flags, src->flags, (size_t)src->natasks + 1);
    memcpy(dst->run_ptr, src->run_ptr, ((size_t)src->nruns + 1) * sizeof *dst->run_ptr);
    if (src->block_ptr) {
        memcpy(dst->block_ptr, src->block_ptr, ((size_t)src->nblocks + 1) * sizeof *dst->block_ptr);
        memcpy(dst->atask_block, src->atask_block, ((size_t)src->natasks + 1) * sizeof *dst->atask_block);
    }
    return ATA_OK;
}

/* Builders (policy.h): cut points over the level order, or (la) an order of
 * their own. Each returns the adaptive-task count; the table in policy.c
 * says which policy uses which. */
static void level_order(const dag *d, int *order)
{
    memcpy(order, d->level_rows, (size_t)d->n * sizeof *order);
}

int agg_cut_levelset(const dag *d, ata_uplo uplo, int size, int *order, int *aptr)
{
    (void)uplo; (void)size;
    level_order(d, order);
    aptr[0] = 0;
    for (int l = 0; l < d->nlevels; l++) aptr[l + 1] = d->level_ptr[l + 1];
    return d->n ? d->nlevels : 0;
}

int agg_cut_syncfree(const dag *d, ata_uplo uplo, int size, int *order, int *aptr)
{
    (void)uplo; (void)size;
    level_order(d, order);
    aptr[0] = 0;
    if (d->n == 0) return 0;
    aptr[1] = d->n;
    return 1;
}

/* ca (Alg. 7): merge whole levels until the task holds >= S. */
int agg_cut_ca(const dag *d, ata_uplo uplo, int S, int *order, int *aptr)
{
    (void)uplo;
    int p = 0;
    level_order(d, order);
    aptr[0] = 0;
    if (d->n == 0) return 0;
    for (int l = 0; l < d->nlevels; l++) {
        int end = d->level_ptr[l + 1];
        if (end - aptr[p] >= S || l == d->nlevels - 1) aptr[++p] = end;
    }
    return p;
}

/* greedy: fixed chunks of `cap` tasks, blind to level boundaries. */
int agg_cut_greedy(const dag *d, ata_uplo uplo, int cap, int *order, int *aptr)
{
    (void)uplo;
    const int n = d->n;
    int p = 0;
    level_order(d, order);
    aptr[0] = 0;
    for (int s = 0; s < n; s += cap) aptr[++p] = s + cap < n ? s + cap : n;
    return p;
}

/* la (Alg. 8): chunks of S neighbouring rows along the topological
 * direction; inside a chunk, level then index (a stable scatter of the
 * level order into chunk buckets). */
int agg_cut_la(const dag *d, ata_uplo uplo, int S, int *order, int *aptr)
{
    const int n = d->n, p = n ? (n + S - 1) / S : 0;
    /* Chunk a holds the S tasks t = a*S.. (the last one the rest). */
    aptr[0] = 0;
    for (int a = 0; a < p; a++) aptr[a + 1] = n - aptr[a] > S ? aptr[a] + S : n;
    int *cursor = mem_alloc(((size_t)p + 1) * sizeof *cursor);
    if (!cursor) return -1;
    memcpy(cursor, aptr, ((size_t)p + 1) * sizeof *cursor);
    for (int k = 0; k < n; k++) {
        int i = d->level_rows[k];
        int t = uplo == ATA_LOWER ? i : n - 1 - i;
        order[cursor[t / S]++] = i;
    }
    free(cursor);
    return p;
}

/* Distinct coarse pairs (a, b): an open-addressing set of a << 32 | b,
 * so c can be counted while the edges are visited in row order. */
typedef struct { uint64_t *slot; size_t cap, used; } pair_set;

static int pair_set_add(pair_set *h, uint64_t key)   /* 1: new, 0: seen, -1: no memory */
{
    if (2 * (h->used + 1) > h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        uint64_t *slot = mem_alloc(cap * sizeof *slot);
        if (!slot) return -1;
        for (size_t k = 0; k < cap; k++) slot[k] = UINT64_MAX;
        for (size_t k = 0; k < h->cap; k++) {
            if (h->slot[k] == UINT64_MAX) continue;
            size_t j = (size_t)((h->slot[k] * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
            while (slot[j] != UINT64_MAX) j = (j + 1) & (cap - 1);
            slot[j] = h->slot[k];
        }
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
    }
    size_t j = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (h->cap - 1);
    while (h->slot[j] != UINT64_MAX) {
        if (h->slot[j] == key) return 0;
        j = (j + 1) & (h->cap - 1);
    }
    h->slot[j] = key;
    h->used++;
    return 1;
}

/* The edge scan of classify_edges, one copy per edge side and owner map,
 * both constant once inlined. `below`: row i's edges are its entries j < i,
 * else j > i (one compare for dag_is_edge). The atask of row x is
 * map[lev[x]] when `mapped`, else lev[x]. lastb[a]: the last atask b a
 * coarse edge of a row of atask a came from; consecutive coarse edges of an
 * atask mostly repeat it (a row's predecessors lie in few atasks; in
 * levelset all in the previous level), and a repeat is neither a new pair
 * nor a new maxsrc, so only a change of b reaches the pair set. */
static inline __attribute__((always_inline)) int
scan_edges(agg_result *r, int n, const int *ptr, const int *idx, const int below,
           const int *lev, const int *map, const int mapped, int *maxsrc, int *lastb,
           pair_set *pairs)
{
    long long c = 0, f = 0;
    unsigned char *flags = r->flags;
    for (int i = 0; i < n; i++) {
        const int a = mapped ? map[lev[i]] : lev[i];
        const int qe = ptr[i + 1];
        int fine = 0;
        for (int q = ptr[i]; q < qe; q++) {
            const int j = idx[q];
            if (below ? j >= i : j <= i) continue;
            const int b = mapped ? map[lev[j]] : lev[j];
            if (b == a) { fine++; continue; }
            if (lastb[a] == b) continue;
            lastb[a] = b;
            int added = pair_set_add(pairs, (uint64_t)a << 32 | (uint32_t)b);
            if (added < 0) return -1;
            c += added;
            /* Edge src -> dst: src is the earlier atask. */
            int src = a < b ? a : b, dst = a < b ? b : a;
            if (src > maxsrc[dst]) maxsrc[dst] = src;
        }
        if (fine) { f += fine; flags[a] |= ATASK_TRACKED; }
    }
    r->c = c;
    r->f = f;
    return 0;
}

/* When `order` is the level order and no level straddles two atasks, the
 * atask of a row is a function of its level: fill l2a (nlevels) and return
 * 1 (no n-sized owner array to fill), else 0. */
static int level_atasks(const agg_result *r, const dag *d, int *l2a)
{
    int a = 0;
    for (int l = 0; l < d->nlevels; l++) {
        const int lo = d->level_ptr[l], hi = d->level_ptr[l + 1];
        while (a < r->natasks && r->atask_ptr[a + 1] <= lo) a++;
        if (a == r->natasks || hi > r->atask_ptr[a + 1]) return 0;
        l2a[l] = a;
    }
    return 1;
}

/* Tracking, c and f, and barriers, in one pass over the edges in row order
 * (the matrix read as a stream: visiting the rows atask by atask reads it
 * at random, the analysis's top cost for a natural-order ILU0 plan).
 * `lorder`: r->order is d->level_rows. */
static ata_status classify_edges(agg_result *r, const dag *d, int lorder, const int *ptr,
                                 const int *idx, int preds, ata_uplo uplo)
{
    const int n = d->n, p = r->natasks;
    int *owner = NULL, *l2a = NULL;
    int *maxsrc = mem_alloc(((size_t)p + 1) * sizeof *maxsrc);
    int *lastb = mem_alloc(((size_t)p + 1) * sizeof *lastb);
    pair_set pairs = { NULL, 0, 0 };
    if (!maxsrc || !lastb) goto nomem;
    for (int a = 0; a < p; a++) maxsrc[a] = lastb[a] = -1;
    if (p == 1) {
        /* One atask (syncfree, a chunk or S of n or more): every edge is
         * fine, and d->m counted them on this adjacency. */
        r->f = d->m;
        if (d->m) r->flags[0] |= ATASK_TRACKED;
        r->untracked = !d->m;
        free(maxsrc); free(lastb);
        return ATA_OK;
    }
    const int *lev = d->level, *map = NULL;
    if (lorder) {
        if (!(l2a = mem_alloc(((size_t)d->nlevels + 1) * sizeof *l2a))) goto nomem;
        if (!level_atasks(r, d, l2a)) lorder = 0;
        /* levelset: the atask is the level itself. */
        else if (p != d->nlevels) map = l2a;
    }
    if (!lorder) {
        if (!(owner = mem_alloc(((size_t)n + 1) * sizeof *owner))) goto nomem;
        for (int a = 0; a < p; a++)
            for (int k = r->atask_ptr[a]; k < r->atask_ptr[a + 1]; k++) owner[r->order[k]] = a;
        lev = owner;
    }
    /* dag_is_edge(uplo, preds, i, j) is j < i exactly when this holds. */
    const int below = (uplo == ATA_LOWER) == (preds != 0);
    int rc;
    if (map)
        rc = below ? scan_edges(r, n, ptr, idx, 1, lev, map, 1, maxsrc, lastb, &pairs)
                   : scan_edges(r, n, ptr, idx, 0, lev, map, 1, maxsrc, lastb, &pairs);
    else
        rc = below ? scan_edges(r, n, ptr, idx, 1, lev, NULL, 0, maxsrc, lastb, &pairs)
                   : scan_edges(r, n, ptr, idx, 0, lev, NULL, 0, maxsrc, lastb, &pairs);
    if (rc < 0) goto nomem;
    /* A barrier before b iff a coarse edge reaches b from the current
     * segment (atasks since the last barrier run concurrently). */
    int seg = 0;
    for (int b = 1; b < p; b++)
        if (maxsrc[b] >= seg) { r->flags[b] |= ATASK_BARRIER; seg = b; r->barriers++; }
    for (int a = 0; a < p; a++) r->untracked += !(r->flags[a] & ATASK_TRACKED);
    free(owner); free(l2a); free(maxsrc); free(lastb); free(pairs.slot);
    return ATA_OK;
nomem:
    free(owner); free(l2a); free(maxsrc); free(lastb); free(pairs.slot);
    return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
}

/* chain: blocks of consecutive rows (along the solve direction) in which
 * every row depends on the one before it, cut at `cap` rows: on a grid in
 * natural order, its lines. The serial solve of such a chain costs the
 * latency of each row (x[i-1] is needed at once); the level order breaks
 * the chains but gathers b and x row by row. Here a block is solved in
 * order, in place, by one worker, and blocks of one block level (the
 * longest path of blocks before it) in parallel, a barrier between levels:
 * on lap3d:100 in natural order 10000 blocks in 199 levels. t: a row's
 * place along the solve direction. */
static int t_row(int n, ata_uplo uplo, int t) { return uplo == ATA_LOWER ? t : n - 1 - t; }

static int has_entry(const int *ptr, const int *idx, int row, int col)
{
    for (int q = ptr[row]; q < ptr[row + 1]; q++)
        if (idx[q] == col) return 1;
    return 0;
}

/* Blocks (rows along the solve direction, each needing the one before,
 * cut at cap) into bstart[0..nb], blk[row], and their levels (the longest
 * path of blocks before each) into lev[0..nb) (zeroed by the caller). */
static void chain_blocks(int n, const int *ptr, const int *idx, int preds, ata_uplo uplo, int cap, int *bstart,
                         int *blk, int *lev, int *nb_out, int *nlev_out)
{
    int nb = 0, nlev = 0;
    for (int t = 0; t < n; t++) {
        const int i = t_row(n, uplo, t), prev = t ? t_row(n, uplo, t - 1) : -1;
        /* pull: row i lists its predecessors; push: row prev lists its successors */
        const int chained = t > 0 && (preds ? has_entry(ptr, idx, i, prev) : has_entry(ptr, idx, prev, i));
        if (!nb || !chained || t - bstart[nb - 1] >= cap) bstart[nb++] = t;
        blk[i] = nb - 1;
    }
    bstart[nb] = n;
    /* Blocks in solve order: a block's predecessors are in earlier ones. */
    for (int b = 0; b < nb; b++)
        for (int t = bstart[b]; t < bstart[b + 1]; t++) {
            const int i = t_row(n, uplo, t);
            for (int q = ptr[i]; q < ptr[i + 1]; q++) {
                const int j = idx[q];
                if (!dag_is_edge(uplo, preds, i, j) || blk[j] == b) continue;
                if (preds) { if (lev[blk[j]] + 1 > lev[b]) lev[b] = lev[blk[j]] + 1; }
                else if (lev[b] + 1 > lev[blk[j]]) lev[blk[j]] = lev[b] + 1;
            }
            if (lev[b] + 1 > nlev) nlev = lev[b] + 1;
        }
    *nb_out = nb;
    *nlev_out = nlev;
}

#define AGG_CHAIN_ALIGN 12      /* nodes of 1, 2, 3, 4 or 6 rows */

ata_status agg_chain_cap(int n, const int *ptr, const int *idx, int preds, ata_uplo uplo, int ways, int *cap,
                         int *mean_block)
{
    *cap = n > 0 ? n : 1;
    if (mean_block) *mean_block = n;
    if (n < 2) return ATA_OK;
    int *bstart = mem_alloc(((size_t)n + 1) * sizeof *bstart), *blk = mem_alloc(((size_t)n + 1) * sizeof *blk);
    int *lev = mem_calloc((size_t)n + 1, sizeof *lev), nb, nlev;
    if (!bstart || !blk || !lev) {
        free(bstart); free(blk); free(lev);
        return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
    }
    chain_blocks(n, ptr, idx, preds, uplo, n, bstart, blk, lev, &nb, &nlev);
    /* Too few whole chains a level for the workers: cut each into `ways`,
     * at a multiple of AGG_CHAIN_ALIGN rows, so that the cuts of every line
     * fall between the same nodes of a PDE system (a cut inside a node
     * makes a line's first piece wait for the last piece of the line
     * before: on ex19's factor, every level of blocks one block). */
    if (ways > 1 && (long long)nb < (long long)ways * nlev) {
        const long long mean = (n + (long long)nb - 1) / nb, piece = (mean + ways - 1) / ways;
        const long long c = (piece + AGG_CHAIN_ALIGN - 1) / AGG_CHAIN_ALIGN * AGG_CHAIN_ALIGN;
        *cap = (int)(c < n ? c : n);
    }
    if (mean_block) {
        long long pieces = 0;
        for (int b = 0; b < nb; b++) pieces += (bstart[b + 1] - bstart[b] + *cap - 1) / *cap;
        *mean_block = (int)(n / pieces);
    }
    free(bstart); free(blk); free(lev);
    return ATA_OK;
}

static ata_status build_chain(agg_result *r, const dag *d, const int *ptr, const int *idx, int preds,
                              ata_uplo uplo, int cap)
{
    const int n = d->n;
    int *bstart = mem_alloc(((size_t)n + 1) * sizeof *bstart), *blk = mem_alloc(((size_t)n + 1) * sizeof *blk);
    int *lev = NULL, *cnt = NULL, nb = 0, nlev = 0;
    if (!bstart || !blk || !(lev = mem_calloc((size_t)n + 1, sizeof *lev))) goto nomem;
    chain_blocks(n, ptr, idx, preds, uplo, cap, bstart, blk, lev, &nb, &nlev);
    r->natasks = nlev;
    r->nblocks = nb;
    r->block_ptr = mem_alloc(((size_t)nb + 1) * sizeof *r->block_ptr);
    r->atask_block = mem_alloc(((size_t)nlev + 1) * sizeof *r->atask_block);
    r->run_ptr = mem_alloc(((size_t)nlev + 1) * sizeof *r->run_ptr);
    r->flags = mem_calloc((size_t)nlev + 1, 1);
    if (!(cnt = mem_calloc((size_t)nlev + 1, sizeof *cnt)) || !r->block_ptr || !r->atask_block || !r->run_ptr || !r->flags)
        goto nomem;
    for (int b = 0; b < nb; b++) cnt[lev[b] + 1]++;
    for (int l = 0; l < nlev; l++) cnt[l + 1] += cnt[l];
    memcpy(r->atask_block, cnt, ((size_t)nlev + 1) * sizeof *cnt);
    /* blocks by level, in solve order inside a level (a stable sort) */
    int *sorted = blk;      /* row -> block is not needed any more */
    for (int b = 0; b < nb; b++) sorted[cnt[lev[b]]++] = b;
    int k = 0;
    for (int s = 0; s < nb; s++) {
        const int b = sorted[s];
        r->block_ptr[s] = k;
        for (int t = bstart[b]; t < bstart[b + 1]; t++) r->order[k++] = t_row(n, uplo, t);
    }
    r->block_ptr[nb] = n;
    for (int l = 0; l <= nlev; l++) r->atask_ptr[l] = r->block_ptr[r->atask_block[l]];
    memcpy(r->run_ptr, r->atask_ptr, ((size_t)nlev + 1) * sizeof *r->run_ptr);
    r->nruns = nlev;
    free(bstart); free(blk); free(lev); free(cnt);
    return ATA_OK;
nomem:
    free(bstart); free(blk); free(lev); free(cnt);
    return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
}

/* Runs: a new one at every atask start and every change of level. In the
 * level order (`lorder`) the level changes at the level_ptr cut points, so
 * the runs are the merged cut points of atasks and levels, read from no
 * n-sized array; otherwise one pass over the order (room for n runs,
 * trimmed: only what is written is touched). */
static ata_status build_runs(agg_result *r, const dag *d, int lorder)
{
    const int n = d->n, p = r->natasks;
    const size_t room = lorder ? (size_t)p + d->nlevels + 1 : (size_t)n + 1;
    int *run = mem_alloc(room * sizeof *run), nr = 0;
    if (!run) return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
    if (lorder) {
        /* Cut points below n (an empty last atask starts no run), each once. */
        int a = 0, l = 0;
        for (;;) {
            int x = a < p && r->atask_ptr[a] < n ? r->atask_ptr[a] : n;
            int y = l < d->nlevels && d->level_ptr[l] < n ? d->level_ptr[l] : n;
            int v = x < y ? x : y;
            if (v >= n) break;
            if (!nr || run[nr - 1] != v) run[nr++] = v;
            a += x == v;
            l += y == v;
        }
    } else {
        for (int a = 0; a < p; a++)
            for (int k = r->atask_ptr[a]; k < r->atask_ptr[a + 1]; k++)
                if (k == r->atask_ptr[a] || d->level[r->order[k]] != d->level[r->order[k - 1]])
                    run[nr++] = k;
    }
    run[nr] = n;
    int *trim = realloc(run, ((size_t)nr + 1) * sizeof *trim);
    r->run_ptr = trim ? trim : run;
    r->nruns = nr;
    return ATA_OK;
}

ata_status agg_build(const dag *d, const int *ptr, const int *idx, int preds,
                     ata_uplo uplo, ata_policy policy, int S, int capacity,
                     agg_result *out)
{
    memset(out, 0, sizeof *out);
    const int n = d->n;
    const policy_desc *pd = policy_get(policy);
    if (!pd) return ata_fail(ATA_ERR_ARG, "aggregation: unknown policy %d", (int)policy);
    if (S < 1) S = 1;
    out->S_in = S;
    if (capacity < S) capacity = S;
    out->S = pd->flags & POLICY_CAPACITY ? capacity : S;
    out->order = mem_alloc(((size_t)n + 1) * sizeof *out->order);
    /* Every adaptive task holds a row: n + 1 cut points at most (trimmed below). */
    out->atask_ptr = mem_alloc(((size_t)n + 2) * sizeof *out->atask_ptr);
    if (!out->order || !out->atask_ptr) goto nomem;
    if (pd->flags & POLICY_BLOCKS) {
        ata_status st = build_chain(out, d, ptr, idx, preds, uplo, out->S);
        /* c, f and the barriers as for any schedule; then no tracking: the
         * only edges inside a level of blocks are inside blocks, whose rows
         * one worker runs in order. */
        if (st == ATA_OK) {
            int *trim = realloc(out->atask_ptr, ((size_t)out->natasks + 1) * sizeof *trim);
            if (trim) out->atask_ptr = trim;
            st = classify_edges(out, d, 0, ptr, idx, preds, uplo);
        }
        if (st == ATA_OK) {
            out->untracked = out->natasks;
            for (int a = 0; a < out->natasks; a++) out->flags[a] &= (unsigned char)~ATASK_TRACKED;
        }
        if (st != ATA_OK) agg_free(out);
        return st;
    }
    out->natasks = pd->build(d, uplo, out->S, out->order, out->atask_ptr);
    if (out->natasks < 0) goto nomem;
    int *trim = realloc(out->atask_ptr, ((size_t)out->natasks + 1) * sizeof *trim);
    if (trim) out->atask_ptr = trim;
    out->flags = mem_calloc((size_t)out->natasks + 1, 1);
    if (!out->flags) goto nomem;
    const int lorder = (pd->flags & POLICY_LEVEL_ORDER) != 0;
    ata_status st = classify_edges(out, d, lorder, ptr, idx, preds, uplo);
    if (st == ATA_OK) st = build_runs(out, d, lorder);
    if (st != ATA_OK) agg_free(out);
    return st;
nomem:
    agg_free(out);
    return ata_fail(ATA_ERR_NOMEM, "aggregation: out of memory (n = %d)", n);
}

/* The block holding position k (bisection of block_ptr). */
static int block_of(const agg_result *a, int k)
{
    int lo = 0, hi = a->nblocks;
    while (hi - lo > 1) {
        const int m = lo + (hi - lo) / 2;
        if (a->block_ptr[m] <= k) lo = m; else hi = m;
    }
    return lo;
}

ata_status agg_check_order(const agg_result *a, int n, const int *ptr,
                           const int *idx, int preds, ata_uplo uplo)
{
    int *pos = mem_alloc(((size_t)n + 1) * sizeof *pos);
    int *owner = mem_alloc(((size_t)n + 1) * sizeof *owner);
    int *nbar = mem_alloc(((size_t)a->natasks + 1) * sizeof *nbar);
    ata_status st = ATA_OK;
    if (!pos || !owner || !nbar) { st = ata_fail(ATA_ERR_NOMEM, "check: out of memory"); goto out; }
    for (int t = 0; t < a->natasks; t++) {
        nbar[t] = (t ? nbar[t - 1] : 0) + !!(a->flags[t] & ATASK_BARRIER);
        for (int k = a->atask_ptr[t]; k < a->atask_ptr[t + 1]; k++) {
            pos[a->order[k]] = k;
            owner[a->order[k]] = t;
        }
    }
    for (int i = 0; i < n && st == ATA_OK; i++)
        for (int q = ptr[i]; q < ptr[i + 1]; q++) {
            int j = idx[q];
            if (!dag_is_edge(uplo, preds, i, j)) continue;
            int src = preds ? j : i, dst = preds ? i : j;
            if (pos[src] >= pos[dst]) {
                st = ata_fail(ATA_ERR_INTERNAL, "schedule: task %d runs at %d, before its predecessor %d at %d",
                              dst, pos[dst], src, pos[src]);
                break;
            }
            if (owner[src] != owner[dst] && nbar[owner[dst]] == nbar[owner[src]]) {
                st = ata_fail(ATA_ERR_INTERNAL, "schedule: coarse edge %d -> %d with no barrier between", src, dst);
                break;
            }
            /* blocks: inside an untracked atask an edge stays in one block */
            if (a->block_ptr && owner[src] == owner[dst] && !(a->flags[owner[dst]] & ATASK_TRACKED) &&
                block_of(a, pos[src]) != block_of(a, pos[dst])) {
                st = ata_fail(ATA_ERR_INTERNAL, "schedule: edge %d -> %d joins two blocks of one untracked task",
                              src, dst);
                break;
            }
        }
out:
    free(pos); free(owner); free(nbar);
    return st;
}
