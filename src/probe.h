/* probe.h - the timing inputs of S auto (Eq. 5.2), made reproducible: each
 * is the median of PROBE_REPS probes, and both are kept in a per-machine
 * cache file so that later runs (and processes) pick the same S:
 *   $XDG_CACHE_HOME/ata/probe-<host>-<backend>-<threads>.txt
 * (~/.cache when XDG_CACHE_HOME is unset; GPU backends: dev<N> for the
 * thread count). T_l is per file; T_u per matrix pattern (a hash of the
 * plan's triangle). Delete the file to probe again. ATA_PROBE_CACHE=0 turns
 * the cache off; ATA_PROBE_CACHE=FILE uses FILE instead. */
#ifndef ATA_PROBE_H
#define ATA_PROBE_H
#include "plan.h"

#define PROBE_REPS 5

/* T_l (context, cached there and in the file) and T_u (this plan), with
 * their spread, into p->info; the medians into *T_l and *T_u. */
ata_status probe_costs(ata_plan *p, double *T_l, double *T_u);

#endif
