/* util.c - clock, median, one-line messages and the progress line.
 *
 * The progress line is drawn by a helper thread so that it also moves
 * during one long solve: only when stderr is a terminal, nothing for the
 * first PROGRESS_AFTER_S seconds of the run (ATA_BENCH_PROGRESS_AFTER=S
 * overrides it), then one line rewritten in place ("\r[pcg] lap3d:100
 * policy ca: iteration 12 (5 s)"), erased before anything else is printed
 * and at the end. Where stderr is not a terminal (a log, a pipe, a
 * script's capture) there is no progress line at all. Messages take the
 * same lock and erase the line first, so stderr never shows a message glued
 * to a half progress line. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define PROGRESS_AFTER_S 2.0
#define PROGRESS_EVERY_S 0.25

double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_range(double *v, int n, double *vmin, double *vmax)
{
    double m = median(v, n);
    *vmin = n > 0 ? v[0] : 0;
    *vmax = n > 0 ? v[n - 1] : 0;
    return m;
}

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int running, stop;
    int drawn;              /* a progress line is on the terminal now */
    double t0, after, last;
    char label[256];
    atomic_int iter;        /* PROGRESS_NO_ITER, -1 (setup) or the PCG iteration */
} prog = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

#define PROGRESS_NO_ITER (-2)

static void erase_locked(void)
{
    if (prog.drawn) {
        fputs("\r\033[K", stderr);
        prog.drawn = 0;
    }
}

void msg(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&prog.mu);
    erase_locked();
    fprintf(stderr, "%s: ", BENCH_NAME);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(&prog.mu);
}

/* Columns of the terminal on stderr (80 if it does not say). */
static int term_columns(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&prog.mu);
    while (!prog.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&prog.cv, &prog.mu, &until);
        if (prog.stop) break;
        double t = now_s(), el = t - prog.t0;
        if (el < prog.after || !prog.label[0] || t - prog.last < PROGRESS_EVERY_S) continue;
        prog.last = t;
        char line[512];
        int it = atomic_load_explicit(&prog.iter, memory_order_relaxed);
        if (it >= 0) snprintf(line, sizeof line, "%s: iteration %d (%.0f s)", prog.label, it, el);
        else if (it == -1) snprintf(line, sizeof line, "%s: setup (%.0f s)", prog.label, el);
        else snprintf(line, sizeof line, "%s (%.0f s)", prog.label, el);
        /* One terminal line: a wrapped one could not be rewritten in place. */
        int cols = term_columns() - 1;
        if (cols > 0 && (int)strlen(line) > cols) line[cols] = '\0';
        fprintf(stderr, "\r\033[K%s", line);
        prog.drawn = 1;
        fflush(stderr);
    }
    erase_locked();
    fflush(stderr);
    pthread_mutex_unlock(&prog.mu);
    return NULL;
}

void progress_start(int enabled)
{
    prog.t0 = now_s();
    prog.last = 0;
    prog.stop = 0;
    prog.after = PROGRESS_AFTER_S;
    const char *e = getenv("ATA_BENCH_PROGRESS_AFTER");
    if (e && *e) {
        char *end;
        double v = strtod(e, &end);
        if (!*end && isfinite(v) && v >= 0) prog.after = v;
    }
    atomic_store(&prog.iter, PROGRESS_NO_ITER);
    if (enabled && isatty(STDERR_FILENO) && pthread_create(&prog.thread, NULL, progress_main, NULL) == 0)
        prog.running = 1;
}

int progress_active(void)
{
    return prog.running;
}

void progress_set(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&prog.mu);
    va_start(ap, fmt);
    vsnprintf(prog.label, sizeof prog.label, fmt, ap);
    va_end(ap);
    atomic_store_explicit(&prog.iter, PROGRESS_NO_ITER, memory_order_relaxed);
    pthread_mutex_unlock(&prog.mu);
}

void progress_iteration(int it)
{
    atomic_store_explicit(&prog.iter, it < 0 ? -1 : it, memory_order_relaxed);
}

void progress_stop(void)
{
    if (!prog.running) return;
    pthread_mutex_lock(&prog.mu);
    prog.stop = 1;
    pthread_cond_signal(&prog.cv);
    pthread_mutex_unlock(&prog.mu);
    pthread_join(prog.thread, NULL);
    prog.running = 0;
}

/* Hold the progress line off while printing to stdout (same terminal). */
void progress_hold(void)
{
    pthread_mutex_lock(&prog.mu);
    erase_locked();
    fflush(stderr);
}

void progress_release(void)
{
    fflush(stdout);
    pthread_mutex_unlock(&prog.mu);
}

double run_time(const bench_opts *o, const bench_run *r)
{
    return o->cmd == CMD_ILU0 ? r->factor_s : r->solve_s;
}

const char *run_status(const bench_run *r)
{
    return r->wrong ? "wrong_answer" : cli_status_token(r->status);
}
