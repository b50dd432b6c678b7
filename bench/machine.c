/* machine.c - the facts that make a benchmark number comparable: the commit
 * it was built from, when and where it ran, the CPU and the load then. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "commit.h"     /* ATA_COMMIT, written by the Makefile */

void machine_collect(bench_machine *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->commit, sizeof m->commit, "%s", ATA_COMMIT);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(m->host, sizeof m->host - 1) != 0) snprintf(m->host, sizeof m->host, "unknown");
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            if (!strncmp(line, "model name", 10) && c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(m->cpu, sizeof m->cpu, "%s", c);
                break;
            }
        }
        fclose(f);
    }
    m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    m->load[0] = m->load[1] = m->load[2] = -1;
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &m->load[0], &m->load[1], &m->load[2]) != 3) m->load[0] = -1;
        fclose(f);
    }
}
