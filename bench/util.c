/* util.c - clock, median, one-line messages and the progress line.
 *
 * The progress line is drawn by a helper thread so that it also moves
 * during one long solve: nothing for the first few seconds, then on a
 * terminal one line rewritten in place every second, elsewhere (a log) one
 * line every 15 s. Messages take the same lock and erase the line first, so
 * stderr never shows a message glued to a half progress line. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define PROGRESS_AFTER_S 3.0
#define PROGRESS_TTY_EVERY_S 1.0
#define PROGRESS_LOG_EVERY_S 15.0

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
    int tty;
    int drawn;              /* a progress line is on the terminal now */
    double t0, last;
    char label[256];
} prog = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

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

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&prog.mu);
    while (!prog.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000L;
        if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&prog.cv, &prog.mu, &until);
        if (prog.stop) break;
        double t = now_s(), el = t - prog.t0;
        double every = prog.tty ? PROGRESS_TTY_EVERY_S : PROGRESS_LOG_EVERY_S;
        if (el < PROGRESS_AFTER_S || !prog.label[0] || t - prog.last < every) continue;
        prog.last = t;
        if (prog.tty) {
            fprintf(stderr, "\r\033[K%s: %s, %.0f s", BENCH_NAME, prog.label, el);
            prog.drawn = 1;
        } else {
            fprintf(stderr, "%s: %s, %.0f s\n", BENCH_NAME, prog.label, el);
        }
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
    prog.tty = isatty(STDERR_FILENO);
    prog.stop = 0;
    if (enabled && pthread_create(&prog.thread, NULL, progress_main, NULL) == 0) prog.running = 1;
}

void progress_set(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&prog.mu);
    va_start(ap, fmt);
    vsnprintf(prog.label, sizeof prog.label, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&prog.mu);
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
