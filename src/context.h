/* context.h - what a context owns: the backend, its workers or device, and
 * the cached cost of one synchronisation between adaptive tasks (T_l). */
#ifndef ATA_CONTEXT_H
#define ATA_CONTEXT_H
#include "ata.h"
#include "backend.h"

typedef struct cpu_pool cpu_pool;

struct ata_context {
    ata_context_options opt;
    ata_backend backend;
    const ata_backend_ops *ops;
    int threads;            /* host workers (CPU backend) */
    cpu_pool *pool;
    void *dev;              /* GPU backend state */
    int S_min;              /* Eq. 5.1: workers x occupancy */
    int capacity;           /* greedy: tasks resident at once */
    double T_l;             /* Eq. 5.2: measured once, 0 until then */
    double T_l_min, T_l_max;  /* its probes' spread (probe.c) */
    int T_l_cached;           /* read from the probe cache file */
    double wait_timeout_s;
};

#endif
