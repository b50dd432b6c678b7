/* dag.h - the task DAG of a triangular (or ILU0) sparsity pattern.
 *
 * Row i is user task u_i; an off-diagonal entry links two rows. The
 * topological direction is increasing index for a lower triangle and
 * decreasing index for an upper one. level(i) = longest path from a root. */
#ifndef ATA_DAG_H
#define ATA_DAG_H
#include "ata.h"

enum { DAG_PARALLEL = 0, DAG_LSHAPE = 1, DAG_WIDE = 2 };
/* Rows of a level are ordered by predecessor count in this many classes
 * (the last holds every row with more). */
#define DAG_LEN_CLASSES 16

/* DAG classes of the paper (sec. 5.4.1), thresholds fixed here:
 *  parallel: fewer than DAG_PARALLEL_MAX_LEVELS levels (short critical path);
 *  wide:     at least DAG_WIDE_FRACTION of the levels hold DAG_WIDE_MIN_WIDTH
 *            or more tasks (4 wavefronts x 128 CUs: enough to fill a GPU);
 *  L-shape:  otherwise (most tasks in the top levels, long thin tail). */
#define DAG_PARALLEL_MAX_LEVELS 100
#define DAG_WIDE_MIN_WIDTH 512
#define DAG_WIDE_FRACTION 0.5

typedef struct {
    int n;
    int nlevels;
    int *level;         /* n: level of each row */
    int *level_ptr;     /* nlevels + 1 */
    int *level_rows;    /* n: rows by level; inside a level by predecessor
                           count, then successor count (DAG_LEN_CLASSES
                           classes each, see dag.c), then index */
    long long m;        /* edges */
    int max_width;
    int dag_class;
    int lower_reversed; /* an upper triangle's DAG as the lower's levels run
                           backwards (dag_reverse_upper) */
} dag;

/* adj: CSR-like adjacency over n rows. If `preds`, row i lists its
 * predecessors (pull / CSR of the triangle); else it lists its successors
 * (push / CSC). Diagonal entries are skipped; entries on the wrong side of
 * the diagonal for `uplo` are ignored. Linear in n + nnz. */
/* (i, j) is an edge of the DAG: j is on the solved side of i, as a
 * predecessor listed in row i (preds) or a successor listed in column i. */
static inline int dag_is_edge(ata_uplo uplo, int preds, int i, int j)
{
    /* one comparison: an earlier row where a pull's row lists the lower
     * triangle's predecessors or a push's the upper's successors */
    return (uplo == ATA_LOWER) == (preds != 0) ? j < i : j > i;
}

ata_status dag_build(int n, const int *ptr, const int *idx, int preds,
                     ata_uplo uplo, dag *out);
void dag_free(dag *d);
/* d (built on A) becomes the DAG of P A P^T, P its own level order (new row
 * k = level_rows[k]): the same levels, each now a block of consecutive rows
 * (level_rows the identity). In place, no pass over the pattern. */
void dag_to_level_order(dag *d);
/* The lower DAG of a pattern (pull: rows list predecessors) whose levels
 * come in row order, each a block of consecutive rows (a matrix relabelled
 * in its own level order): what dag_build then dag_to_level_order give, in
 * one pass; else ATA_ERR_UNSUPPORTED, quietly, at the first row whose
 * level is below the row before's, nothing made. */
ata_status dag_build_row_ordered(int n, const int *ptr, const int *idx, dag *out);
const char *dag_class_name(int cls);
/* The DAG of an upper triangle U (rows ptr/idx; entries on or below the
 * diagonal ignored) as the levels of `lower`, the DAG of the matching lower
 * triangle, run backwards: level' = nlevels - 1 - level, level_rows
 * reversed. Only for a structurally symmetric pattern, where U(i, j) is
 * L(j, i): U has as many edges as L and each has level(j) > level(i) (else
 * U may have far fewer levels of its own: a diagonal U would get L's).
 * Then *out (its own arrays; critical path and widths as L's); else
 * ATA_ERR_UNSUPPORTED, quietly (no message), nothing made.
 * An upper solve on a matrix in L's level order then runs from the last
 * row to the first, each level a block of rows. */
ata_status dag_reverse_upper(const dag *lower, const int *ptr, const int *idx, dag *out);

#endif
