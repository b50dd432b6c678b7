/* cpu_nodes.h - nodes (PETSc's "inodes") of a triangle solved in place:
 * runs of consecutive rows, consecutive in the solve too, whose entries
 * outside the run are the same columns; each row's others lie in the run,
 * on rows solved before it. A PDE with several unknowns per grid point
 * gives them (SNES ex19's driven cavity: 4 rows a node, every row of its
 * 149k). Solving such a row alone is a chain: it needs x of the row just
 * before it, and reads the same columns and x as its neighbours. A node
 * reads the shared columns and x once for all its rows (lower: the sums of
 * its rows run side by side, then the rows inside the node one by one).
 *
 * Bits: each row subtracts the same products in the same order as the
 * reference, far to near: the shared entries first (a lower row's stored
 * first, an upper row's last and read backwards), then the node's rows
 * solved before it. */
#ifndef ATA_CPU_NODES_H
#define ATA_CPU_NODES_H
#include "ata.h"

#define CPU_NODE_MAX 5      /* rows a node at most (PETSc's inode limit) */

/* Where positions meet rows for cpu_nodes_find and cpu_nodes_pull1: stored
 * row of T at position k is order[k] (order != NULL; x by row too), toff - k
 * (down: x's row top - k, rows descending; in place toff is top) or k + toff
 * (x by position). */
typedef struct {
    const int *rowptr, *col;
    const double *val;
    int lower;          /* shared entries first in a row (else last; read backwards) */
    int dk;             /* diagonal: 0 none (unit), 1 last, 2 first */
    int inv;            /* multiply by the stored diagonal (else divide) */
    const int *order;
    int down;           /* order NULL: position k is row toff - k (an upper natural walk) */
    const float *fval;  /* the values as floats (a factor's ATA_PRECISION_MIXED plan:
                           each is exactly val's, so the sums keep their bits); NULL: val */
    int top;            /* down: x's row at position 0 (n - 1) */
} cpu_nodes_view;

/* len[k] for k0 <= k < k1: how many positions from k on (at most
 * CPU_NODE_MAX, not past k1) form a node; 1 where none. Returns how many
 * positions are a node's second or later row. */
long long cpu_nodes_find(const cpu_nodes_view *v, int toff, int k0, int k1, unsigned char *len);

/* Whether cpu_nodes_pull1 can read this view's float values (fval): an
 * ILU0 factor's triangles: L unit, U with its pivots first. */
int cpu_nodes_float_ok(const cpu_nodes_view *v);

/* x at positions k0..k1 (one column, no waits), nodes as len says: the
 * reference's bits. Returns 0 while every x is finite (else NaN: the
 * caller names the rows). Two blocks of a level run node by node in turn
 * were tried (runs back to back, not interleaved): faster warm (an upper
 * solve's chains overlap: ex19's unit U 1.19 -> 0.98 ms), much slower with
 * the cache flushed between solves, as a preconditioner runs (1.38 ->
 * 1.95; twice the streams, a guess), so not kept. */
double cpu_nodes_pull1(const cpu_nodes_view *v, const unsigned char *len, int toff, int k0, int k1,
                       const double *b, double *x);

#endif
