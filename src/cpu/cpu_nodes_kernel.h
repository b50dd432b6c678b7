/* cpu_nodes_kernel.h - the node solve of cpu_nodes.c, for one type of the
 * stored values: included there once with NODE_T double (T's values) and
 * once with float (a mixed-precision factor's copy, each value exactly its
 * double: the same sums, the same bits). NODE_FN(name) names this type's
 * functions. Not a public header. */
/* Row t's entries off the diagonal: [*lo, *hi) (off_diag_range); its diagonal's value. */
static inline __attribute__((always_inline)) double NODE_FN(off_diag)(const int *restrict Tp, const NODE_T *restrict Tx,
                                                                      int t, const int dk, int *lo, int *hi)
{
    off_diag_range(Tp, t, dk, lo, hi);
    return dk == 1 ? (double)Tx[*hi] : dk == 2 ? (double)Tx[*lo - 1] : 1.0;
}

/* One node of NS rows: stored rows t + m * step, x rows r + m * step. All
 * in scalars, the x of the node's rows too (arrays indexed by the row
 * became SSE pairs with shuffles, stack traffic and store-to-load
 * forwarding on the chain inside the node: slower than the row loop). */
#define NODE_ROW(m)                                                                          \
    int lo##m = 0, h##m = 0;                                                                 \
    double d##m = 1, a##m = 0, x##m = 0;                                                     \
    if (NS > m) {                                                                            \
        d##m = NODE_FN(off_diag)(Tp, Tx, t + (m) * step, dk, &lo##m, &h##m);                  \
        a##m = b[r + (m) * step];                                                            \
    }
#define NODE_FIN(m)                                                                          \
    if (NS > m) {                                                                            \
        x##m = dk ? (inv ? a##m * d##m : a##m / d##m) : a##m;                                \
        x[r + (m) * step] = x##m;                                                            \
        nf += x##m - x##m;                                                                   \
    }
static inline __attribute__((always_inline)) double NODE_FN(node_rows)(const int *restrict Tp, const int *restrict Tj,
                                                                       const NODE_T *restrict Tx,
                                                                       const double *restrict b, double *x, int t,
                                                                       int r, int step, const int NS, const int lower,
                                                                       const int dk, const int inv)
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
    const NODE_T *restrict v0 = Tx + lo0, *restrict v1 = Tx + lo1 + sh, *restrict v2 = Tx + lo2 + 2 * sh;
    const NODE_T *restrict v3 = Tx + lo3 + 3 * sh, *restrict v4 = Tx + lo4 + 4 * sh;
    for (int e = 0; e < K; e++) {
        const int q = lower ? e : K - 1 - e;
        const double xj = x[c[q]];
        a0 -= (double)v0[q] * xj;
        if (NS > 1) a1 -= (double)v1[q] * xj;
        if (NS > 2) a2 -= (double)v2[q] * xj;
        if (NS > 3) a3 -= (double)v3[q] * xj;
        if (NS > 4) a4 -= (double)v4[q] * xj;
    }
#define NODE_IN(m, i) (double)(lower ? v##m[K + (i)] : v##m[-1 - (i)])
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
static inline __attribute__((always_inline)) int NODE_FN(one_node)(const cpu_nodes_view *v, const NODE_T *restrict Tx,
                                                                  const unsigned char *len, int toff, int k, int k1,
                                                                  const double *restrict b, double *x, double *nf,
                                                                  const int index, const int lower, const int dk,
                                                                  const int inv)
{   /* index: 0 by position, 1 through the order, 2 down (cpu_nodes_view) */
    const int *restrict Tp = v->rowptr, *restrict Tj = v->col, *restrict order = v->order;
    int s = len[k];
    if (s > k1 - k) s = k1 - k;
    const int r = index == 1 ? order[k] : index == 2 ? v->top - k : k;
    const int t = index == 1 ? r : index == 2 ? toff - k : k + toff;
    const int step = s > 1 && index == 1 ? order[k + 1] - r : index == 2 ? -1 : 1;
    switch (s) {
    case 5: *nf += NODE_FN(node_rows)(Tp, Tj, Tx, b, x, t, r, step, 5, lower, dk, inv); break;
    case 4: *nf += NODE_FN(node_rows)(Tp, Tj, Tx, b, x, t, r, step, 4, lower, dk, inv); break;
    case 3: *nf += NODE_FN(node_rows)(Tp, Tj, Tx, b, x, t, r, step, 3, lower, dk, inv); break;
    case 2: *nf += NODE_FN(node_rows)(Tp, Tj, Tx, b, x, t, r, step, 2, lower, dk, inv); break;
    default: *nf += NODE_FN(node_rows)(Tp, Tj, Tx, b, x, t, r, step, 1, lower, dk, inv); break;
    }
    return s;
}

static inline __attribute__((always_inline)) double NODE_FN(pull_nodes)(const cpu_nodes_view *v,
                                                                        const NODE_T *restrict Tx,
                                                                        const unsigned char *len, int toff, int k0,
                                                                        int k1, const double *restrict b, double *x,
                                                                        const int index, const int lower,
                                                                        const int dk, const int inv)
{
    double nf = 0;
    while (k0 < k1) k0 += NODE_FN(one_node)(v, Tx, len, toff, k0, k1, b, x, &nf, index, lower, dk, inv);
    return nf;
}

#undef NODE_T
#undef NODE_FN
