/* generators.c - test and benchmark matrices built directly in CSR:
 * finite-difference Laplacians (natural ordering) and a circuit-like
 * resistor network whose lower triangle has an L-shaped DAG. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dag.h"
#include "error.h"
#include "mem.h"

/* ------------------------------------------------------------------ */
/* Laplacians                                                          */
/* ------------------------------------------------------------------ */

/* Sizes are checked in 64 bits before anything is allocated: the CSR
 * arrays are indexed by int, so n and nnz must both fit. */
static ata_status gen_check_size(const char *what, long long n, long long nnz)
{
    if (n > INT_MAX || nnz > INT_MAX)
        return ata_fail(ATA_ERR_ARG, "%s: %lld unknowns, %lld entries exceed the 32-bit index range",
                        what, n, nnz);
    return ATA_OK;
}

ata_status ata_gen_laplace2d(int nx, int ny, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "lap2d: NULL output");
    if (nx < 1 || ny < 1) return ata_fail(ATA_ERR_ARG, "lap2d: grid %d x %d (need >= 1 x 1)", nx, ny);
    const long long n = (long long)nx * ny;
    ATA_TRY(gen_check_size("lap2d", n, 5 * n - 2LL * nx - 2LL * ny));
    ata_csr *A;
    ATA_TRY(ata_csr_alloc((int)n, (int)n, (int)(5 * n - 2LL * nx - 2LL * ny), &A));
    int *Ap = A->rowptr, *Aj = A->col, q = 0;
    double *Ax = A->val;
    /* Node (x, y) is row x + nx*y; neighbours listed in increasing column. */
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            const int i = x + nx * y;
            Ap[i] = q;
            if (y > 0)      { Aj[q] = i - nx; Ax[q++] = -1; }
            if (x > 0)      { Aj[q] = i - 1;  Ax[q++] = -1; }
            Aj[q] = i; Ax[q++] = 4;
            if (x < nx - 1) { Aj[q] = i + 1;  Ax[q++] = -1; }
            if (y < ny - 1) { Aj[q] = i + nx; Ax[q++] = -1; }
        }
    Ap[n] = q;
    *out = A;
    return ATA_OK;
}

/* Entries of the 3D stencil: per dimension, 3m-2 (point, offset) pairs stay
 * inside the grid for the 27-point box; the 7-point star loses one
 * neighbour per node on each of the six faces. */
static long long lap3d_nnz(long long nx, long long ny, long long nz, int points)
{
    if (points == 27) return (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2);
    return 7 * nx * ny * nz - 2 * (ny * nz + nx * nz + nx * ny);
}

/* One row of the 3D stencil; visiting offsets z, then y, then x, from -1
 * to 1 lists the columns in increasing order. */
static int lap3d_row(int x, int y, int z, int nx, int ny, int nz, int points, int *Aj, double *Ax)
{
    const long long sy = nx, sz = (long long)nx * ny, i = x + sy * y + sz * z;
    int q = 0;
    for (int dz = -1; dz <= 1; dz++) {
        if (z + dz < 0 || z + dz >= nz) continue;
        for (int dy = -1; dy <= 1; dy++) {
            if (y + dy < 0 || y + dy >= ny) continue;
            for (int dx = -1; dx <= 1; dx++) {
                if (x + dx < 0 || x + dx >= nx) continue;
                const int far = abs(dx) + abs(dy) + abs(dz);
                if (points == 7 && far > 1) continue;
                Aj[q] = (int)(i + dx + sy * dy + sz * dz);
                Ax[q++] = far == 0 ? points - 1 : -1;
            }
        }
    }
    return q;
}

ata_status ata_gen_laplace3d(int nx, int ny, int nz, int points, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "lap3d: NULL output");
    if (points != 7 && points != 27) return ata_fail(ATA_ERR_ARG, "lap3d: %d points (expected 7 or 27)", points);
    if (nx < 1 || ny < 1 || nz < 1)
        return ata_fail(ATA_ERR_ARG, "lap3d: grid %d x %d x %d (need >= 1 x 1 x 1)", nx, ny, nz);
    const long long n = (long long)nx * ny * nz, nnz = lap3d_nnz(nx, ny, nz, points);
    ATA_TRY(gen_check_size(points == 7 ? "lap3d" : "lap3d27", n, nnz));
    ata_csr *A;
    ATA_TRY(ata_csr_alloc((int)n, (int)n, (int)nnz, &A));
    int *Ap = A->rowptr, q = 0, i = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                Ap[i++] = q;
                q += lap3d_row(x, y, z, nx, ny, nz, points, A->col + q, A->val + q);
            }
    Ap[n] = q;
    *out = A;
    return ATA_OK;
}

/* -Laplacian + c (d/dx + d/dy + d/dz), first-order upwind on the 7-point
 * grid, times h^2 with c = beta h (Dirichlet boundary): diagonal 6 + 3c,
 * the three upwind neighbours -(1 + c), the three downwind ones -1. A
 * nonsymmetric M-matrix (so ILU0 exists) whose asymmetry grows with c: the
 * convection-diffusion problem of BiCGStab's and GMRES's papers, with a
 * lap3d's pattern and DAG. */
ata_status ata_gen_convdiff3d(int nx, int ny, int nz, double c, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "convdiff: NULL output");
    if (!(c >= 0) || !isfinite(c)) return ata_fail(ATA_ERR_ARG, "convdiff: c = %g (expected finite, >= 0)", c);
    ata_csr *A;
    ATA_TRY(ata_gen_laplace3d(nx, ny, nz, 7, &A));
    for (int i = 0; i < A->nrows; i++)
        for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
            A->val[q] = A->col[q] == i ? 6 + 3 * c : A->col[q] < i ? -(1 + c) : -1;
    *out = A;
    return ATA_OK;
}

/* ------------------------------------------------------------------ */
/* Circuit-like resistor network                                       */
/* ------------------------------------------------------------------ */
/* Plan of the lower-triangle DAG (row i depends on columns j < i):
 *  - bulk: ~97% of the nodes, each given a level 1..4 at random (55%,
 *    28%, 12%, 5%), interleaved in index order;
 *  - tail: >= 120 further levels whose widths shrink quadratically to 1,
 *    the last few nodes being hubs (supply rails) of power-law degree.
 * Every resistor joins a lower level at a lower index to a higher level at
 * a higher index, and every node of level l > 1 gets one resistor to a
 * node of level l-1, so the level of each row is exactly its planned one:
 * an L-shape (most rows in the first levels, then a long thin tail). */

typedef struct { int u, v; double g; } circ_edge;   /* u > v, conductance g */

typedef struct {
    int n;
    int *level;           /* planned level of each node, 1-based */
    int **at;             /* at[l]: nodes of level l, in index order */
    int *nat;
    long long *capat;
    circ_edge *e;         /* resistors */
    long long m, cap;
    int top;              /* highest level placed so far */
    int *ends;            /* both ends of every resistor: degree-biased picks */
    long long nends, capends;
    uint64_t rng;
} circ;

static uint64_t circ_next(circ *c)
{
    uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);    /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double circ_unif(circ *c) { return (double)(circ_next(c) >> 11) * 0x1.0p-53; }
static int circ_below(circ *c, int k) { return (int)(circ_unif(c) * k); }

/* Room for `need` elements in p (capacity *cap), doubling: the array,
 * possibly moved, or NULL with p untouched (still the caller's to free). */
static void *grow(void *p, long long *cap, long long need, size_t size)
{
    if (need <= *cap) return p;
    long long nc = *cap ? *cap : 1024;
    while (nc < need) nc *= 2;
    void *q = realloc(p, (size_t)nc * size);
    if (q) *cap = nc;
    return q;
}

static int circ_add_edge(circ *c, int a, int b)
{
    circ_edge *e = grow(c->e, &c->cap, c->m + 1, sizeof *e);
    if (e) c->e = e;
    int *ends = e ? grow(c->ends, &c->capends, c->nends + 2, sizeof *ends) : NULL;
    if (!ends) return 0;
    c->ends = ends;
    c->e[c->m++] = (circ_edge){ a > b ? a : b, a > b ? b : a, 0.5 + 1.5 * circ_unif(c) };
    c->ends[c->nends++] = a;
    c->ends[c->nends++] = b;
    return 1;
}

static int circ_place(circ *c, int i, int l)
{
    int *at = grow(c->at[l], &c->capat[l], c->nat[l] + 1, sizeof *at);
    if (!at) return 0;
    c->at[l] = at;
    at[c->nat[l]++] = i;
    c->level[i] = l;
    if (l > c->top) c->top = l;
    return 1;
}

/* A node of level l-1 already placed: usually a recent one (locality, as
 * in a netlist numbered cell by cell), sometimes any. */
static int circ_pick_parent(circ *c, int l)
{
    const int k = c->nat[l - 1];
    if (circ_unif(c) < 0.6) return c->at[l - 1][k - 1 - circ_below(c, k < 32 ? k : 32)];
    return c->at[l - 1][circ_below(c, k)];
}

/* Any earlier node of a lower level: nearby, degree-biased (rich get
 * richer: a power-law tail of degrees), or uniform; -1 if none found. */
static int circ_pick_lower(circ *c, int i)
{
    const int l = c->level[i];
    for (int tries = 0; tries < 8; tries++) {
        double r = circ_unif(c);
        int j;
        if (r < 0.4) j = i - 1 - circ_below(c, i < 200 ? i : 200);
        else if (r < 0.7 && c->nends > 0) j = c->ends[(long long)(circ_unif(c) * c->nends)];
        else j = circ_below(c, i);
        if (j < i && c->level[j] < l) return j;
    }
    return -1;
}

/* Parent edge plus an exponentially distributed number (mean ~extra_mean) of
 * extra resistors: most nodes have few, some many. */
static int circ_connect(circ *c, int i, int extra_mean)
{
    const int l = c->level[i];
    if (l > 1 && !circ_add_edge(c, i, circ_pick_parent(c, l))) return 0;
    if (l == 1) return 1;
    int extra = (int)(-log(1.0 - circ_unif(c)) * extra_mean);
    for (int e = 0; e < extra; e++) {
        int j = circ_pick_lower(c, i);
        if (j >= 0 && !circ_add_edge(c, i, j)) return 0;
    }
    return 1;
}

/* Bulk nodes get levels 1..4 at random; a level whose predecessor level
 * is still empty is lowered, so node 0 is always a root. */
static int circ_bulk(circ *c, int nb)
{
    static const double cum[4] = { 0.55, 0.83, 0.95, 1.0 };
    for (int i = 0; i < nb; i++) {
        double r = circ_unif(c);
        int l = 1;
        while (l < 4 && r >= cum[l - 1]) l++;
        while (l > 1 && c->nat[l - 1] == 0) l--;
        if (!circ_place(c, i, l) || !circ_connect(c, i, 3)) return 0;
    }
    return 1;
}

/* Hubs: the last nodes, each tied to many bulk nodes; degree ~ n/(40 k). */
static int circ_hub_edges(circ *c, int i, int k)
{
    const int deg = c->n / (40 * k) > 8 ? c->n / (40 * k) : 8;
    for (int e = 0; e < deg; e++) {
        int j = circ_below(c, i);
        if (c->level[j] < c->level[i] && !circ_add_edge(c, i, j)) return 0;
    }
    return 1;
}

/* Tail level k of t has 1 + (w0-1)(1-k/t)^2 nodes: the widths shrink
 * towards a thin end; the last `hubs` nodes are hubs. Each tail level sits
 * right above the highest level so far (tiny bulks may not reach 4). */
static int circ_tail(circ *c, int nb, int t, double w0, int hubs)
{
    int i = nb;
    for (int k = 0; k < t && i < c->n; k++) {
        const double f = 1.0 - (double)k / t;
        int w = 1 + (int)((w0 - 1) * f * f);
        if (k == t - 1 || w > c->n - i) w = c->n - i;     /* the last level takes what is left */
        const int l = c->top + 1;
        for (int q = 0; q < w; q++, i++) {
            if (!circ_place(c, i, l) || !circ_connect(c, i, 1)) return 0;
            if (i >= c->n - hubs && !circ_hub_edges(c, i, c->n - i)) return 0;
        }
    }
    return 1;
}

/* Nodes nobody connected to (possible at level 1) get a resistor to a
 * later node of a higher level: every node sits in the network, and levels
 * do not change since the edge goes up in both index and level. */
static int circ_attach_isolated(circ *c)
{
    char *seen = mem_calloc((size_t)c->n, 1);
    if (!seen) return 0;
    for (long long e = 0; e < c->nends; e++) seen[c->ends[e]] = 1;
    int ok = 1;
    for (int i = 0; i < c->n - 1 && ok; i++) {
        if (seen[i]) continue;
        for (int tries = 0; tries < 16; tries++) {
            int j = i + 1 + circ_below(c, c->n - 1 - i);
            if (c->level[j] > c->level[i]) { ok = circ_add_edge(c, j, i); break; }
        }
    }
    free(seen);
    return ok;
}

static void circ_free(circ *c, int nlevels)
{
    if (c->at) for (int l = 0; l <= nlevels; l++) free(c->at[l]);
    free(c->at); free(c->nat); free(c->capat); free(c->level);
    free(c->e); free(c->ends);
}

/* Unsorted CSR of the off-diagonal part, both triangles, values -g. */
static ata_status circ_offdiag(const circ *c, ata_csr **out)
{
    if (2 * c->m > INT_MAX) return ata_fail(ATA_ERR_ARG, "circuit: %lld resistors exceed 32-bit indices", c->m);
    ata_csr *W;
    ATA_TRY(ata_csr_alloc(c->n, c->n, (int)(2 * c->m), &W));
    int *Wp = W->rowptr;
    memset(Wp, 0, ((size_t)c->n + 1) * sizeof *Wp);
    for (long long k = 0; k < c->m; k++) { Wp[c->e[k].u + 1]++; Wp[c->e[k].v + 1]++; }
    for (int i = 0; i < c->n; i++) Wp[i + 1] += Wp[i];
    for (long long k = 0; k < c->m; k++) {
        const circ_edge r = c->e[k];
        W->col[Wp[r.u]] = r.v; W->val[Wp[r.u]++] = -r.g;
        W->col[Wp[r.v]] = r.u; W->val[Wp[r.v]++] = -r.g;
    }
    for (int i = c->n; i > 0; i--) Wp[i] = Wp[i - 1];
    Wp[0] = 0;
    *out = W;
    return ATA_OK;
}

/* Sorted off-diagonals S -> nodal matrix: parallel resistors merge (their
 * conductances add) and the diagonal is the row's total conductance plus a
 * small one to ground, which makes A strictly diagonally dominant, SPD. */
static ata_status circ_assemble(const ata_csr *S, circ *c, ata_csr **out)
{
    const int n = S->nrows, *Sp = S->rowptr, *Sj = S->col;
    int nnz = n;
    for (int i = 0; i < n; i++)
        for (int p = Sp[i]; p < Sp[i + 1]; p++) nnz += p == Sp[i] || Sj[p] != Sj[p - 1];
    ata_csr *A;
    ATA_TRY(ata_csr_alloc(n, n, nnz, &A));
    int *Ap = A->rowptr, *Aj = A->col, q = 0;
    double *Ax = A->val;
    for (int i = 0; i < n; i++) {
        Ap[i] = q;
        int diag = -1;
        double sum = 0;
        for (int p = Sp[i]; p < Sp[i + 1]; p++) {
            if (diag < 0 && Sj[p] > i) { diag = q; Aj[q++] = i; }
            if (p > Sp[i] && Sj[p] == Sj[p - 1]) { Ax[q - 1] += S->val[p]; }
            else { Aj[q] = Sj[p]; Ax[q++] = S->val[p]; }
            sum -= S->val[p];
        }
        if (diag < 0) { diag = q; Aj[q++] = i; }
        Ax[diag] = sum + 0.02 + 0.08 * circ_unif(c);
    }
    Ap[n] = q;
    *out = A;
    return ATA_OK;
}

static ata_status circ_matrix(circ *c, ata_csr **out)
{
    ata_csr *W = NULL, *S = NULL;
    ata_status st = circ_offdiag(c, &W);
    /* W is symmetric as a multiset, so its transpose is W itself with
     * every row sorted and repeated resistors adjacent. */
    if (st == ATA_OK) st = ata_csr_transpose(W, &S);
    ata_csr_free(W);
    if (st == ATA_OK) st = circ_assemble(S, c, out);
    ata_csr_free(S);
    return st;
}

/* Tail: at least 120 levels (sqrt(n) for large n) holding ~3% of nodes;
 * small n shrinks it so the bulk keeps most rows. */
static void circ_shape(int n, int *t, double *w0, int *hubs)
{
    int tl = (int)sqrt((double)n);
    if (tl < 120) tl = 120;
    if (tl > n / 4) tl = n / 4;
    double nt = 0.03 * n;
    *t = tl;
    *w0 = tl > 0 && nt > tl ? 1 + 3 * (nt - tl) / tl : 1;
    *hubs = n / 20000 + 1;
}

static int circ_tail_size(int t, double w0)
{
    int s = 0;
    for (int k = 0; k < t; k++) {
        const double f = 1.0 - (double)k / t;
        s += 1 + (int)((w0 - 1) * f * f);
    }
    return s;
}

ata_status ata_gen_circuit(int n, uint64_t seed, ata_csr **out)
{
    if (!out) return ata_fail(ATA_ERR_ARG, "circuit: NULL output");
    if (n < 1) return ata_fail(ATA_ERR_ARG, "circuit: n = %d (need >= 1)", n);
    int t, hubs;
    double w0;
    circ_shape(n, &t, &w0, &hubs);
    const int nb = n - circ_tail_size(t, w0), nlevels = 4 + t;
    circ c = { .n = n, .rng = seed ^ 0x5DEECE66Dull };
    c.level = mem_calloc((size_t)n, sizeof *c.level);
    c.at = mem_calloc((size_t)nlevels + 1, sizeof *c.at);
    c.nat = mem_calloc((size_t)nlevels + 1, sizeof *c.nat);
    c.capat = mem_calloc((size_t)nlevels + 1, sizeof *c.capat);
    ata_status st = ATA_OK;
    if (!c.level || !c.at || !c.nat || !c.capat || !circ_bulk(&c, nb)
        || !circ_tail(&c, nb, t, w0, hubs) || !circ_attach_isolated(&c))
        st = ata_fail(ATA_ERR_NOMEM, "circuit: out of memory (n = %d)", n);
    if (st == ATA_OK) st = circ_matrix(&c, out);
    circ_free(&c, nlevels);
    return st;
}

/* ------------------------------------------------------------------ */
/* Specs: "lap2d:NX[xNY]", "lap3d:N[xNYxNZ]", "lap3d27:...", "convdiff:...", "circuit:N" */
/* ------------------------------------------------------------------ */

#define GEN_MAX_DOFS 16

typedef struct {
    char kind[16];
    int dims[3], ndims;
    int has_perm, has_seed, has_dofs, levelorder;
    uint64_t perm_seed, seed, dofs;
} gen_spec;

/* Decimal digits only (no sign, no blanks): strtoull alone would take
 * " -3" and wrap it. */
static int spec_u64(const char *s, const char *end, uint64_t *v)
{
    if (s == end) return 0;
    for (const char *p = s; p < end; p++) if (!isdigit((unsigned char)*p)) return 0;
    errno = 0;
    char *stop;
    *v = strtoull(s, &stop, 10);
    return errno == 0 && stop == end;
}

/* "N", "NxM" or "NxMxK", each 1..INT_MAX. */
static int spec_dims(const char *s, const char *end, gen_spec *g)
{
    g->ndims = 0;
    for (;;) {
        const char *x = s;
        while (x < end && *x != 'x') x++;
        uint64_t v;
        if (g->ndims == 3 || !spec_u64(s, x, &v) || v < 1 || v > INT_MAX) return 0;
        g->dims[g->ndims++] = (int)v;
        if (x == end) return 1;
        s = x + 1;
    }
}

static ata_status spec_option(const char *spec, const char *s, const char *end, gen_spec *g)
{
    const char *eq = memchr(s, '=', (size_t)(end - s));
    uint64_t v;
    if (end - s == 10 && !memcmp(s, "levelorder", 10)) {
        if (g->levelorder) return ata_fail(ATA_ERR_ARG, "spec '%s': option 'levelorder' given twice", spec);
        g->levelorder = 1;
        return ATA_OK;
    }
    if (!eq || !spec_u64(eq + 1, end, &v))
        return ata_fail(ATA_ERR_ARG, "spec '%s': option '%.*s' is not KEY=NUMBER or levelorder", spec, (int)(end - s), s);
    const size_t klen = (size_t)(eq - s);
    int *has = klen == 4 && !memcmp(s, "perm", 4) ? &g->has_perm : klen == 4 && !memcmp(s, "seed", 4) ? &g->has_seed
             : klen == 4 && !memcmp(s, "dofs", 4) ? &g->has_dofs : NULL;
    if (!has)
        return ata_fail(ATA_ERR_ARG, "spec '%s': unknown option '%.*s' (expected perm=SEED, seed=S, dofs=D or levelorder)",
                        spec, (int)klen, s);
    if (*has) return ata_fail(ATA_ERR_ARG, "spec '%s': option '%.*s' given twice", spec, (int)klen, s);
    if (has == &g->has_dofs && (v < 1 || v > GEN_MAX_DOFS))
        return ata_fail(ATA_ERR_ARG, "spec '%s': dofs=%llu (1..%d unknowns a point)", spec, (unsigned long long)v,
                        GEN_MAX_DOFS);
    *has = 1;
    *(has == &g->has_perm ? &g->perm_seed : has == &g->has_seed ? &g->seed : &g->dofs) = v;
    return ATA_OK;
}

static ata_status spec_parse(const char *spec, gen_spec *g)
{
    memset(g, 0, sizeof *g);
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || colon - spec >= (long)sizeof g->kind)
        return ata_fail(ATA_ERR_ARG, "spec '%s': expected KIND:SIZE (lap2d:NX[xNY], lap3d:N[xNYxNZ], "
                        "lap3d27:N[xNYxNZ], convdiff:N[xNYxNZ], circuit:N), optionally ,dofs=D, ,perm=SEED and ,levelorder", spec);
    memcpy(g->kind, spec, (size_t)(colon - spec));
    const char *s = colon + 1, *end = s + strcspn(s, ",");
    if (!spec_dims(s, end, g))
        return ata_fail(ATA_ERR_ARG, "spec '%s': size '%.*s' is not N, NxM or NxMxK with each in 1..%d",
                        spec, (int)(end - s), s, INT_MAX);
    while (*end == ',') {
        s = end + 1;
        end = s + strcspn(s, ",");
        ATA_TRY(spec_option(spec, s, end, g));
    }
    return ATA_OK;
}

static ata_status spec_build(const char *spec, const gen_spec *g, ata_csr **out)
{
    const int *d = g->dims, nd = g->ndims;
    const int lap3 = !strcmp(g->kind, "lap3d") || !strcmp(g->kind, "lap3d27") || !strcmp(g->kind, "convdiff");
    if (g->has_seed && strcmp(g->kind, "circuit"))
        return ata_fail(ATA_ERR_ARG, "spec '%s': seed= applies only to circuit", spec);
    if (!strcmp(g->kind, "lap2d") && nd <= 2) return ata_gen_laplace2d(d[0], nd == 2 ? d[1] : d[0], out);
    if (!strcmp(g->kind, "convdiff") && nd != 2)
        return ata_gen_convdiff3d(d[0], nd == 3 ? d[1] : d[0], nd == 3 ? d[2] : d[0], 1.0, out);
    if (lap3 && nd != 2)
        return ata_gen_laplace3d(d[0], nd == 3 ? d[1] : d[0], nd == 3 ? d[2] : d[0],
                                 strcmp(g->kind, "lap3d") ? 27 : 7, out);
    if (!strcmp(g->kind, "circuit") && nd == 1) return ata_gen_circuit(d[0], g->seed, out);
    if (strcmp(g->kind, "lap2d") && !lap3 && strcmp(g->kind, "circuit"))
        return ata_fail(ATA_ERR_ARG, "spec '%s': unknown kind '%s' (expected lap2d, lap3d, lap3d27, convdiff or circuit)",
                        spec, g->kind);
    return ata_fail(ATA_ERR_ARG, "spec '%s': %s takes %s", spec, g->kind,
                    lap3 ? "N or NXxNYxNZ" : !strcmp(g->kind, "lap2d") ? "NX or NXxNY" : "one size N");
}

/* ",dofs=D": A PDE system with D unknowns a grid point, numbered point by
 * point (as PETSc's DMDA numbers them): A (x) B, B = (1 - c) I + c 1 1^T
 * with c = 1/(2D), symmetric positive definite, so the result keeps A's
 * symmetry and definiteness. Every row of a point has the same columns:
 * a node of D rows (cpu_nodes.h), as in SNES ex19's Jacobian (D = 4). */
static ata_status gen_dofs(const ata_csr *A, int D, ata_csr **out)
{
    const long long n = (long long)A->nrows * D, nnz = (long long)A->nnz * D * D;
    if (n > INT_MAX || nnz > INT_MAX)
        return ata_fail(ATA_ERR_ARG, "dofs=%d: %lld rows and %lld entries, over ATA's 32-bit limit", D, n, nnz);
    ata_csr *K;
    ATA_TRY(ata_csr_alloc((int)n, (int)((long long)A->ncols * D), (int)nnz, &K));
    const double c = 0.5 / D;
    long long w = 0;
    K->rowptr[0] = 0;
    for (int i = 0; i < A->nrows; i++)
        for (int a = 0; a < D; a++) {
            for (int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
                for (int e = 0; e < D; e++, w++) {
                    K->col[w] = A->col[q] * D + e;
                    K->val[w] = A->val[q] * ((a == e ? 1 - c : 0) + c);
                }
            K->rowptr[i * D + a + 1] = (int)w;
        }
    *out = K;
    return ATA_OK;
}

/* A relabelled into its lower triangle's level order (rows by level, by
 * index inside a level): the order PCG's setup gives A before it factors,
 * so that a triangular solve on it needs no permutation (",levelorder"). */
static ata_status gen_level_order(const ata_csr *A, ata_csr **out)
{
    dag d;
    ATA_TRY(dag_build(A->nrows, A->rowptr, A->col, 1, ATA_LOWER, &d));
    int *perm = mem_alloc(((size_t)A->nrows + 1) * sizeof *perm);
    ata_status st = perm ? ATA_OK : ata_fail(ATA_ERR_NOMEM, "levelorder: out of memory (n = %d)", A->nrows);
    if (st == ATA_OK) {
        for (int k = 0; k < A->nrows; k++) perm[d.level_rows[k]] = k;
        st = ata_csr_permute_sym(A, perm, out);
    }
    free(perm);
    dag_free(&d);
    return st;
}

ata_status ata_gen_from_spec(const char *spec, ata_csr **out)
{
    if (!spec || !out) return ata_fail(ATA_ERR_ARG, "gen_from_spec: NULL argument");
    *out = NULL;
    gen_spec g;
    ATA_TRY(spec_parse(spec, &g));
    ata_csr *A;
    ATA_TRY(spec_build(spec, &g, &A));
    ata_status st = ATA_OK;
    if (g.has_dofs && g.dofs > 1) {
        ata_csr *K = NULL;
        st = gen_dofs(A, (int)g.dofs, &K);
        ata_csr_free(A);
        A = K;
    }
    if (g.has_perm) {
        int *perm = NULL;
        ata_csr *P = NULL;
        st = ata_random_perm(A->nrows, g.perm_seed, &perm);
        if (st == ATA_OK) st = ata_csr_permute_sym(A, perm, &P);
        free(perm);
        ata_csr_free(A);
        A = P;
    }
    if (st == ATA_OK && g.levelorder) {
        ata_csr *P = NULL;
        st = gen_level_order(A, &P);
        ata_csr_free(A);
        A = P;
    }
    if (st == ATA_OK) *out = A;
    return st;
}
