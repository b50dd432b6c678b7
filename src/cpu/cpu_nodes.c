/* cpu_nodes.c - finding nodes of a triangle and solving with them (see
 * cpu_nodes.h). Measured on ex19's 149k-row Jacobian (one thread, warm,
 * its triangles in natural order, cpu_nodes_pull1 against a plain row loop
 * in the same run): lower 1.03 -> 0.73 ms, upper 1.55 -> 1.34 ms, when
 * upper rows were summed near to far (an upper node shared only its column
 * reads); far to near, upper runs like lower. */
#include "cpu_nodes.h"

/* T's value q: from the float copy where the plan has one (f32, a
 * compile-time constant at every use; the same value, see cpu_nodes_view). */
#define NODE_VAL(q) (f32 ? (double)Tf[q] : Tx[q])

/* Row t's entries off the diagonal: [*lo, *hi); its diagonal's value. */
static inline __attribute__((always_inline)) double off_diag(const int *restrict Tp, const double *restrict Tx,
                                                             const float *restrict Tf, int t, const int dk,
                                                             const int f32, int *lo, int *hi)
{
    int l = Tp[t], h = Tp[t + 1];
    double d = 1;
    if (dk == 1) d = NODE_VAL(--h);
    else if (dk == 2) d = NODE_VAL(l++);
    *lo = l;
    *hi = h;
    return d;
}

long long cpu_nodes_find(const cpu_nodes_view *v, int toff, int k0, int k1, unsigned char *len)
{
    const int *Tp = v->rowptr, *Tj = v->col, *order = v->order;
    long long inner = 0;
    for (int k = k0; k < k1; k++) {
        len[k] = 1;
        if (k + 1 >= k1) continue;
        const int r0 = order ? order[k] : v->down ? toff - k : k, t0 = order || v->down ? r0 : k + toff;
        const int step = order ? order[k + 1] - r0 : v->down ? -1 : 1;
        if (step != 1 && step != -1) continue;
        int lo0, hi0;
        off_diag(Tp, v->val, NULL, t0, v->dk, 0, &lo0, &hi0);
        const int K = hi0 - lo0;
        /* A node's rows from its second on are a node one row shorter (its
         * shared columns plus the first row's): those checks hold already. */
        int m = 1;
        if (k > k0 && len[k - 1] > 2) len[k] = (unsigned char)(m = len[k - 1] - 1);
        for (; m < CPU_NODE_MAX && k + m < k1; m++) {
            if (order && order[k + m] != r0 + m * step) break;
            int lo, hi;
            off_diag(Tp, v->val, NULL, t0 + m * step, v->dk, 0, &lo, &hi);
            if (hi - lo != K + m) break;
            const int sh = v->lower ? lo : lo + m, in = v->lower ? lo + K : lo;
            int ok = 1;
            for (int q = 0; q < K && ok; q++) ok = Tj[sh + q] == Tj[lo0 + q];
            /* the rest: the node's rows solved before this one, as stored
             * (lower x0, x1, ..; upper x(m-1), .., x0) */
            for (int q = 0; q < m && ok; q++) ok = Tj[in + q] == r0 + (v->lower ? q : m - 1 - q) * step;
            if (!ok) break;
            len[k] = (unsigned char)(m + 1);
        }
    }
    for (int k = k0; k < k1; k += len[k]) inner += len[k] - 1;
    return inner;
}

/* One node of NS rows: stored rows t + m * step, x rows r + m * step. All
 * in scalars, the x of the node's rows too (arrays indexed by the row
 * became SSE pairs with shuffles, stack traffic and store-to-load
 * forwarding on the chain inside the node: slower than the row loop). */
#define NODE_ROW(m)                                                                          \
    int lo##m = 0, h##m = 0;                                                                 \
    double d##m = 1, a##m = 0, x##m = 0;                                                     \
    if (NS > m) {                                                                            \
        d##m = off_diag(Tp, Tx, Tf, t + (m) * step, dk, f32, &lo##m, &h##m);                \
        a##m = b[r + (m) * step];                                                            \
    }
#define NODE_FIN(m)                                                                          \
    if (NS > m) {                                                                            \
        x##m = dk ? (inv ? a##m * d##m : a##m / d##m) : a##m;                                \
        x[r + (m) * step] = x##m;                                                            \
        nf += x##m - x##m;                                                                   \
    }
static inline __attribute__((always_inline)) double node_rows(const int *restrict Tp, const int *restrict Tj,
                                                              const double *restrict Tx, const float *restrict Tf,
                                                              const double *restrict b, double *x, int t, int r,
                                                              int step, const int NS, const int lower, const int dk,
                                                              const int inv, const int f32)
{
    double nf = 0;
    NODE_ROW(0) NODE_ROW(1) NODE_ROW(2) NODE_ROW(3) NODE_ROW(4)
    (void)h1; (void)h2; (void)h3; (void)h4;
    const int K = h0 - lo0;
    const int *restrict c = Tj + lo0;
    /* Row m's shared entries: lower first in its row, upper after the
     * node's m rows; read far to near (lower forwards, upper backwards),
     * side by side for all rows. Then the entries on the node's rows, near
     * last: x0, x1, .. (stored lower at v_m[K + i], upper at v_m[-1 - i]). */
    const int sh = lower ? 0 : 1;
    const int o0 = lo0, o1 = lo1 + sh, o2 = lo2 + 2 * sh, o3 = lo3 + 3 * sh, o4 = lo4 + 4 * sh;
    for (int e = 0; e < K; e++) {
        const int q = lower ? e : K - 1 - e;
        const double xj = x[c[q]];
        a0 -= NODE_VAL(o0 + q) * xj;
        if (NS > 1) a1 -= NODE_VAL(o1 + q) * xj;
        if (NS > 2) a2 -= NODE_VAL(o2 + q) * xj;
        if (NS > 3) a3 -= NODE_VAL(o3 + q) * xj;
        if (NS > 4) a4 -= NODE_VAL(o4 + q) * xj;
    }
#define NODE_IN(m, i) NODE_VAL(o##m + (lower ? K + (i) : -1 - (i)))
    NODE_FIN(0)
    if (NS > 1) { a1 -= NODE_IN(1, 0) * x0; }
    NODE_FIN(1)
    if (NS > 2) { a2 -= NODE_IN(2, 0) * x0; a2 -= NODE_IN(2, 1) * x1; }
    NODE_FIN(2)
    if (NS > 3) { a3 -= NODE_IN(3, 0) * x0; a3 -= NODE_IN(3, 1) * x1; a3 -= NODE_IN(3, 2) * x2; }
    NODE_FIN(3)
    if (NS > 4) {
        a4 -= NODE_IN(4, 0) * x0; a4 -= NODE_IN(4, 1) * x1; a4 -= NODE_IN(4, 2) * x2; a4 -= NODE_IN(4, 3) * x3;
    }
    NODE_FIN(4)
#undef NODE_IN
    return nf;
}
#undef NODE_ROW
#undef NODE_FIN

/* The node at position k (cut at k1): its rows; returns how many. */
static inline __attribute__((always_inline)) int one_node(const cpu_nodes_view *v, const unsigned char *len, int toff,
                                                         int k, int k1, const double *restrict b, double *x,
                                                         double *nf, const int index, const int lower, const int dk,
                                                         const int inv, const int f32)
{   /* index: 0 by position, 1 through the order, 2 down (cpu_nodes_view) */
    const int *restrict Tp = v->rowptr, *restrict Tj = v->col, *restrict order = v->order;
    const double *restrict Tx = v->val;
    const float *restrict Tf = v->fval;
    int s = len[k];
    if (s > k1 - k) s = k1 - k;
    const int r = index == 1 ? order[k] : index == 2 ? toff - k : k, t = index ? r : k + toff;
    const int step = s > 1 && index == 1 ? order[k + 1] - r : index == 2 ? -1 : 1;
    switch (s) {
    case 5: *nf += node_rows(Tp, Tj, Tx, Tf, b, x, t, r, step, 5, lower, dk, inv, f32); break;
    case 4: *nf += node_rows(Tp, Tj, Tx, Tf, b, x, t, r, step, 4, lower, dk, inv, f32); break;
    case 3: *nf += node_rows(Tp, Tj, Tx, Tf, b, x, t, r, step, 3, lower, dk, inv, f32); break;
    case 2: *nf += node_rows(Tp, Tj, Tx, Tf, b, x, t, r, step, 2, lower, dk, inv, f32); break;
    default: *nf += node_rows(Tp, Tj, Tx, Tf, b, x, t, r, step, 1, lower, dk, inv, f32); break;
    }
    return s;
}

static inline __attribute__((always_inline)) double pull_nodes(const cpu_nodes_view *v, const unsigned char *len,
                                                               int toff, int k0, int k1, const double *restrict b,
                                                               double *x, const int index, const int lower,
                                                               const int dk, const int inv, const int f32)
{
    double nf = 0;
    while (k0 < k1) k0 += one_node(v, len, toff, k0, k1, b, x, &nf, index, lower, dk, inv, f32);
    return nf;
}

double cpu_nodes_pull1(const cpu_nodes_view *v, const unsigned char *len, int toff, int k0, int k1,
                       const double *b, double *x)
{
#define NODES_F32(index, lower, f32)                                                                      \
    (v->dk == 0 ? pull_nodes(v, len, toff, k0, k1, b, x, index, lower, 0, 0, f32)                         \
     : v->inv   ? pull_nodes(v, len, toff, k0, k1, b, x, index, lower, (lower) ? 1 : 2, 1, f32)          \
                : pull_nodes(v, len, toff, k0, k1, b, x, index, lower, (lower) ? 1 : 2, 0, f32))
#define NODES_DIAG(index, lower) (v->fval ? NODES_F32(index, lower, 1) : NODES_F32(index, lower, 0))
    if (v->order) return v->lower ? NODES_DIAG(1, 1) : NODES_DIAG(1, 0);
    if (v->down) return NODES_DIAG(2, 0);       /* upper only */
    return v->lower ? NODES_DIAG(0, 1) : NODES_DIAG(0, 0);
#undef NODES_DIAG
#undef NODES_F32
}
