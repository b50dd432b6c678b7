/* agg.h - aggregation policies: user tasks -> adaptive tasks, with the SET
 * order inside every adaptive task (level, then index).
 *
 * Deadlock freedom (why any number of workers, in any occupancy, finishes):
 * the schedule is one sequence `order`; every predecessor of a task stands
 * earlier in it (levels strictly increase along edges, and adaptive tasks
 * follow the topological direction). Workers claim positions in increasing
 * order. Take the smallest claimed, unfinished position: its predecessors are
 * earlier, so either finished or - being smaller - not unfinished-and-claimed,
 * and every smaller position is claimed; so they are finished and it runs.
 * Hence some worker always makes progress. agg_check_order() tests this. */
#ifndef ATA_AGG_H
#define ATA_AGG_H
#include "ata.h"
#include "dag.h"

enum {
    ATASK_TRACKED = 1,      /* has internal (fine) dependencies: must wait */
    ATASK_BARRIER = 2       /* a coarse edge needs all earlier work finished first */
};

typedef struct {
    int natasks;
    int *order;             /* n: SET order of user tasks */
    int *atask_ptr;         /* natasks + 1: adaptive task a = order[ptr[a]..ptr[a+1]) */
    unsigned char *flags;   /* natasks: ATASK_* */
    int nruns;
    int *run_ptr;           /* nruns + 1: maximal runs of one level inside one
                               atask (CPU workers split each run statically) */
    long long c, f;         /* coarse edges (distinct atask pairs), fine edges */
    int untracked;          /* atasks without ATASK_TRACKED */
    int barriers;           /* atasks with ATASK_BARRIER */
    int S;
    int S_in;               /* the S agg_build was given (S is the policy's) */
    /* POLICY_BLOCKS (chain): blocks of positions, each run in order by one
     * worker (untracked inside: the rows of a block follow each other);
     * NULL otherwise. Runs are the atasks. */
    int nblocks;
    int *block_ptr;         /* nblocks + 1: block b = positions [ptr[b], ptr[b+1]) */
    int *atask_block;       /* natasks + 1: atask a = blocks [ab[a], ab[a+1]) */
} agg_result;

/* `capacity` is the greedy policy's chunk (resident tasks of the backend). */
/* ptr/idx/preds/uplo: the adjacency the dag was built from. */
ata_status agg_build(const dag *d, const int *ptr, const int *idx, int preds,
                     ata_uplo uplo, ata_policy policy, int S, int capacity,
                     agg_result *out);
void agg_free(agg_result *a);
/* chain's cap (S) for `ways` workers: no cut (n) where whole chains give
 * each level of blocks `ways` of them on average; else each chain cut
 * into `ways` blocks (their mean length / ways): a grid whose lines
 * depend on each other (lap2d, a PDE system's nodes along a line) then
 * runs its lines' pieces as a wavefront. One pass over the pattern.
 * mean_block (may be NULL): the blocks' mean length at that cap. */
ata_status agg_chain_cap(int n, const int *ptr, const int *idx, int preds, ata_uplo uplo, int ways, int *cap,
                         int *mean_block);
/* dst = a copy of src (n tasks): the schedule agg_build would make again on
 * the same DAG, adjacency, policy and S. */
ata_status agg_copy(const agg_result *src, int n, agg_result *dst);
/* The policies' builders (policy.h's policy_builder; policy.c's table). */
int agg_cut_levelset(const dag *d, ata_uplo uplo, int size, int *order, int *aptr);
int agg_cut_syncfree(const dag *d, ata_uplo uplo, int size, int *order, int *aptr);
int agg_cut_ca(const dag *d, ata_uplo uplo, int S, int *order, int *aptr);
int agg_cut_la(const dag *d, ata_uplo uplo, int S, int *order, int *aptr);
int agg_cut_greedy(const dag *d, ata_uplo uplo, int cap, int *order, int *aptr);
/* ATA_OK iff every edge goes from an earlier to a later position of `order`,
 * and no coarse edge crosses a segment without a barrier. */
ata_status agg_check_order(const agg_result *a, int n, const int *ptr,
                           const int *idx, int preds, ata_uplo uplo);

#endif
