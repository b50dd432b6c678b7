/* policy.c - the policy table (see policy.h) and the public name lookups. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "agg.h"
#include "error.h"
#include "policy.h"

static const policy_desc policy_table[] = {
    [ATA_POLICY_LEVELSET] = { "levelset", "one adaptive task per level, barrier between (level-set baseline)",
                              "#7f7f7f", POLICY_LEVEL_ORDER, agg_cut_levelset },
    [ATA_POLICY_SYNCFREE] = { "syncfree", "one adaptive task, every row waits on its predecessors (sync-free)",
                              "#ff7f0e", POLICY_LEVEL_ORDER, agg_cut_syncfree },
    [ATA_POLICY_CA] = { "ca", "concurrency-aware: merge whole levels until a task holds >= S rows (Alg. 7)",
                        "#1f77b4", POLICY_USES_S | POLICY_LEVEL_ORDER, agg_cut_ca },
    [ATA_POLICY_LA] = { "la", "locality-aware: chunks of S neighbouring rows, level order inside (Alg. 8)",
                        "#2ca02c", POLICY_USES_S, agg_cut_la },
    [ATA_POLICY_GREEDY] = { "greedy", "fixed chunks of the backend's resident capacity along the level order",
                            "#9467bd", POLICY_CAPACITY | POLICY_LEVEL_ORDER, agg_cut_greedy },
    [ATA_POLICY_VENDOR] = { "vendor", "the vendor library's solve (cuSPARSE / hipSPARSE SpSV, csrilu02)",
                            "#d62728", POLICY_GPU_ONLY | POLICY_LEVEL_ORDER, agg_cut_syncfree },
    [ATA_POLICY_CHAIN] = { "chain", "blocks of up to S consecutive rows that each need the row before (a grid's "
                           "lines), one adaptive task per block level, each block solved in order by one worker, "
                           "in place (S auto: 256)",
                           "#8c564b", POLICY_CPU_ONLY | POLICY_BLOCKS, NULL },
    [ATA_POLICY_AUTO] = { "auto", "the default: ca's adaptive tasks (S by Eq. 5.2); on the CPU, workers sharing "
                          "the rows with point-to-point waits, or one worker where the first solves run faster "
                          "that way (timed, results bitwise the same); ata_plan_choice says what ran",
                          "#17becf", POLICY_USES_S | POLICY_LEVEL_ORDER | POLICY_AUTO, agg_cut_ca },
};
#define NPOLICY (int)(sizeof policy_table / sizeof *policy_table)
_Static_assert(NPOLICY == ATA_POLICY_COUNT, "policy_table and ata_policy in ata.h disagree");

const policy_desc *policy_get(ata_policy p)
{
    return (unsigned)p < (unsigned)NPOLICY && policy_table[p].name ? &policy_table[p] : NULL;
}

int policy_count(void) { return NPOLICY; }

ata_status policy_check_backend(const policy_desc *pd, ata_backend b)
{
    if ((pd->flags & POLICY_GPU_ONLY) && b == ATA_BACKEND_CPU)
        return ata_fail(ATA_ERR_UNSUPPORTED, "policy '%s' (%s) needs the cuda or hip backend", pd->name, pd->description);
    if ((pd->flags & POLICY_CPU_ONLY) && b != ATA_BACKEND_CPU)
        return ata_fail(ATA_ERR_UNSUPPORTED, "policy '%s' runs on the cpu backend only (the GPU kernels split an "
                        "adaptive task by row, not by block)", pd->name);
    return ATA_OK;
}

const char *policy_name_list(const char *last)
{
    static _Thread_local char buf[256];
    buf[0] = '\0';
    for (int p = 0; p < NPOLICY; p++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, "%s%s", p == 0 ? "" : p == NPOLICY - 1 ? last : ", ",
                 policy_table[p].name);
    }
    return buf;
}

const char *ata_policy_name(ata_policy p)
{
    const policy_desc *d = policy_get(p);
    return d ? d->name : "unknown";
}

ata_status ata_policy_from_name(const char *name, ata_policy *out)
{
    for (int p = 0; name && p < NPOLICY; p++)
        if (!strcasecmp(name, policy_table[p].name)) { *out = (ata_policy)p; return ATA_OK; }
    return ata_fail(ATA_ERR_ARG, "unknown policy '%s' (expected %s)", name ? name : "(null)", policy_name_list(" or "));
}
