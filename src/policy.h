/* policy.h - the aggregation policies, declared once. A new policy is one
 * row of policy_table (policy.c) plus its builder (agg.c) and its value in
 * ata.h's ata_policy (kept there for the ABI; the table's length must match
 * ATA_POLICY_COUNT, checked at compile time). Names, ata_policy_from_name,
 * the aggregation, the checks on plan options, ata-bench's --policy list and
 * its SVG colours all read the table. */
#ifndef ATA_POLICY_H
#define ATA_POLICY_H
#include "ata.h"
#include "dag.h"

enum {
    POLICY_GPU_ONLY = 1,    /* needs a GPU backend (the vendor library) */
    POLICY_USES_S = 2,      /* the adaptive-task size S matters (probed when auto) */
    POLICY_CAPACITY = 4,    /* chunks of the backend's resident capacity (reported as S) */
    POLICY_CPU_ONLY = 8,    /* the CPU executor's block split (agg_result's blocks) */
    POLICY_BLOCKS = 16,     /* built from the adjacency by agg_build itself (build is
                               NULL): blocks of rows, each run in order by one worker */
    POLICY_LEVEL_ORDER = 32,/* the builder's order is the level order (d->level_rows):
                               agg_build classifies edges and cuts runs by level
                               without an n-sized owner map (a promise: a wrong flag
                               gives wrong runs; test_policy checks it) */
    POLICY_AUTO = 64        /* resolved by the plan (plan.c, plan_resolve_policy) */
};

/* chain's block cap (rows) when S is auto. */
#define POLICY_CHAIN_CAP 256

/* Builder: cut the n user tasks into adaptive tasks (NULL for POLICY_BLOCKS:
 * agg_build makes those schedules). Writes the SET order
 * (`order`, n) and the cut points `aptr` (room for n + 1; aptr[0] = 0) and
 * returns the number of adaptive tasks, or -1 when out of memory. `size` is
 * S, or the capacity for POLICY_CAPACITY. */
typedef int (*policy_builder)(const dag *d, ata_uplo uplo, int size, int *order, int *aptr);

typedef struct {
    const char *name;
    const char *description;
    const char *colour;     /* ata-bench's SVG */
    unsigned flags;         /* POLICY_* */
    policy_builder build;
} policy_desc;

/* UNSUPPORTED, naming the policy, where the backend cannot run it (every
 * plan's analysis checks: ILU0 plans are made without the public options
 * check). */
ata_status policy_check_backend(const policy_desc *pd, ata_backend b);
/* NULL for a value outside the table. */
const policy_desc *policy_get(ata_policy p);
int policy_count(void);
/* "levelset, syncfree, ca, la, greedy or vendor" (last joined with `last`). */
const char *policy_name_list(const char *last);

#endif
