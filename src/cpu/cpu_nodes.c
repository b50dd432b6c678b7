/* cpu_nodes.c - finding nodes of a triangle and solving with them (see
 * cpu_nodes.h). Measured on ex19's 149k-row Jacobian (one thread, warm,
 * its triangles in natural order, cpu_nodes_pull1 against a plain row loop
 * in the same run): lower 1.03 -> 0.73 ms, upper 1.55 -> 1.34 ms, when
 * upper rows were summed near to far (an upper node shared only its column
 * reads); far to near, upper runs like lower. */
#include "cpu_nodes.h"

/* Row t's entries off the diagonal: [*lo, *hi) (dk: see cpu_nodes_view). */
static inline __attribute__((always_inline)) void off_diag_range(const int *restrict Tp, int t, const int dk, int *lo,
                                                                 int *hi)
{
    *lo = Tp[t] + (dk == 2);
    *hi = Tp[t + 1] - (dk == 1);
}

long long cpu_nodes_find(const cpu_nodes_view *v, int toff, int k0, int k1, unsigned char *len)
{
    const int *Tp = v->rowptr, *Tj = v->col, *order = v->order;
    long long inner = 0;
    for (int k = k0; k < k1; k++) {
        len[k] = 1;
        if (k + 1 >= k1) continue;
        const int r0 = order ? order[k] : v->down ? v->top - k : k;
        const int t0 = order ? r0 : v->down ? toff - k : k + toff;
        const int step = order ? order[k + 1] - r0 : v->down ? -1 : 1;
        if (step != 1 && step != -1) continue;
        int lo0, hi0;
        off_diag_range(Tp, t0, v->dk, &lo0, &hi0);
        const int K = hi0 - lo0;
        /* A node's rows from its second on are a node one row shorter (its
         * shared columns plus the first row's): those checks hold already. */
        int m = 1;
        if (k > k0 && len[k - 1] > 2) len[k] = (unsigned char)(m = len[k - 1] - 1);
        for (; m < CPU_NODE_MAX && k + m < k1; m++) {
            if (order && order[k + m] != r0 + m * step) break;
            int lo, hi;
            off_diag_range(Tp, t0 + m * step, v->dk, &lo, &hi);
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

/* The kernels, for T's doubles and for a factor's floats. */
#define NODE_T double
#define NODE_FN(name) name##_d
#include "cpu_nodes_kernel.h"
#define NODE_T float
#define NODE_FN(name) name##_f
#include "cpu_nodes_kernel.h"

int cpu_nodes_float_ok(const cpu_nodes_view *v)
{
    return v->lower ? v->dk == 0 : v->dk == 2;
}

double cpu_nodes_pull1(const cpu_nodes_view *v, const unsigned char *len, int toff, int k0, int k1,
                       const double *b, double *x)
{
#define NODES_DIAG(index, lower)                                                                             \
    (v->dk == 0 ? pull_nodes_d(v, v->val, len, toff, k0, k1, b, x, index, lower, 0, 0)                       \
     : v->inv   ? pull_nodes_d(v, v->val, len, toff, k0, k1, b, x, index, lower, (lower) ? 1 : 2, 1)        \
                : pull_nodes_d(v, v->val, len, toff, k0, k1, b, x, index, lower, (lower) ? 1 : 2, 0))
    /* floats: an ILU0 factor's triangles only (cpu_nodes_float_ok): L unit,
     * U with its pivots first (reciprocal or not) */
#define NODES_FLOAT(index, lower)                                                                            \
    ((lower)  ? pull_nodes_f(v, v->fval, len, toff, k0, k1, b, x, index, 1, 0, 0)                            \
     : v->inv ? pull_nodes_f(v, v->fval, len, toff, k0, k1, b, x, index, 0, 2, 1)                            \
              : pull_nodes_f(v, v->fval, len, toff, k0, k1, b, x, index, 0, 2, 0))
    if (v->fval) {
        if (v->order) return v->lower ? NODES_FLOAT(1, 1) : NODES_FLOAT(1, 0);
        if (v->down) return NODES_FLOAT(2, 0);
        return v->lower ? NODES_FLOAT(0, 1) : NODES_FLOAT(0, 0);
    }
    if (v->order) return v->lower ? NODES_DIAG(1, 1) : NODES_DIAG(1, 0);
    if (v->down) return NODES_DIAG(2, 0);       /* upper only */
    return v->lower ? NODES_DIAG(0, 1) : NODES_DIAG(0, 0);
#undef NODES_DIAG
#undef NODES_FLOAT
}
