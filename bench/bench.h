/* bench.h - the ata-bench command: options, per-matrix and per-run records,
 * and the modules that fill and print them.
 *
 *   cli.c       flags -> bench_opts (every flag is declared once, in a table
 *               that --help prints, so the help text cannot drift)
 *   ata-bench.c main, the pcg / sptrsv / ilu0 / info runs
 *   dagshape.c  level of every row of a triangle (for the DAG-shape picture)
 *   report.c    aligned table (pcg: a 100-column summary) on stdout, CSV, JSON
 *   svg.c       speedup bars and level-width pictures
 *   util.c      clock, median, messages on stderr, progress line
 */
#ifndef ATA_BENCH_H
#define ATA_BENCH_H

#include <stdio.h>
#include "ata.h"
#include "../kernels/emu/emu_counts.h"

#define BENCH_NAME "ata-bench"

/* Exit statuses. */
enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

typedef enum { CMD_PCG = 0, CMD_SPTRSV, CMD_ILU0, CMD_INFO, CMD_WRITE, CMD_COUNT } bench_cmd;

/* Pseudo-policy: the serial reference (ata_pcg with no context, ata_ref_*). */
#define POLICY_SERIAL ((int)ATA_POLICY_COUNT)
#define POLICY_MAX (POLICY_SERIAL + 1)

typedef struct {
    char *text;             /* file path or generator spec */
    int is_gen;
} bench_input;

typedef struct {
    bench_cmd cmd;
    bench_input *inputs;
    int ninputs;
    int default_input;      /* no --matrix/--gen given: the embedded problem */
    int policies[POLICY_MAX];
    int npolicies;
    int policy_all;         /* 'all': vendor is added on a GPU backend */
    ata_backend backend;
    int threads;            /* 0: library default */
    int S;                  /* 0: auto */
    double R;
    ata_traversal traversal;
    ata_uplo uplo;
    ata_diag diag;
    ata_precond pc;
    ata_reorder reorder;
    double rtol;
    int maxit;
    int reps;
    double warmup_ms;       /* sptrsv, ilu0: untimed solves (factorisations) for this long first (--warmup) */
    int monitor;
    int quiet;
    const char *csv, *json, *plot;
    int argc;
    char **argv;
    ata_shift shift;        /* pcg: --shift */
    int nrhs;               /* sptrsv: --nrhs (columns solved together) */
    int no_floor;           /* pcg: --no-floor (no triad, no floor columns) */
    int wide;               /* pcg: --wide (the full table, not the 100-column summary) */
    ata_ksp ksp;            /* pcg: --ksp (default ATA_KSP_CG) */
    int restart;            /* pcg: --restart (GMRES; 0: the library's default) */
    const char *write_path; /* write: the output file (the command's one operand) */
    /* pcg: --precision: the factors' precisions to run, in order (double,
     * mixed, or both: every policy once per precision, the repetitions
     * of the two interleaved); precision_given: the flag was given (the
     * table and summary then show a precision column). */
    ata_precision precisions[2];
    int nprec;
    int precision_given;
} bench_opts;

/* One matrix of the run, after loading. */
typedef struct {
    char label[128];        /* short name: file stem or generator spec */
    const char *source;     /* path or spec as given */
    int is_gen;
    int loaded;
    int n, ncols;
    long long nnz;          /* of A */
    int symmetric;
    /* DAG of the triangle the command works on, computed by the bench
     * (lower for pcg / ilu0, --uplo for sptrsv, both for info). */
    int nlevels[2];
    int *widths[2];         /* level width per level */
    int max_width[2];
    long long m[2];         /* DAG edges */
    long long tri_nnz[2];   /* nnz of tril / triu incl. diagonal */
    char dag_class[2][16];  /* from the library's plan info, "-" if none */
    int has_diag;           /* every diagonal stored and nonzero */
    char diag_msg[256];
} bench_matrix;

/* One (matrix, policy) run. Times are medians over --reps. */
typedef struct {
    int matrix;             /* index into the matrices */
    int policy;             /* ata_policy or POLICY_SERIAL */
    ata_precision precision;    /* pcg: of the factors (--precision) */
    ata_status status;
    int wrong;              /* status is set because the answer was wrong */
    char msg[512];          /* ata_last_error() of a failure */
    int reps;               /* repetitions actually timed */
    /* pcg */
    int iterations;
    double relres;          /* reported by ata_pcg */
    double true_relres;     /* ||b - A x|| / ||b|| recomputed by the bench */
    double *history;
    int history_len;
    /* times (s) */
    double analysis_s, factor_s, solve_s;
    double refactor_s;      /* ilu0: median ata_factor_update_values (numeric phase; NaN: none) */
    double per_iter_ms;
    double time_min_s, time_max_s;  /* range of run_time's quantity over the reps */
    /* pcg: where an iteration's time goes (medians over the reps, ms per
     * iteration): preconditioner L and U solves, SpMV, vector operations. */
    double phase_ms[4];
    /* sptrsv / ilu0: difference to the serial reference (NaN if none) */
    double check;
    /* plan info: [0] = L (or the sptrsv plan), [1] = U (pcg only) */
    int ninfo;
    ata_plan_info info[2];
    char choice[2][512];    /* ata_plan_choice of [0] and [1] after the run ("" if none) */
    char info_class[2][16];
    /* filled once a matrix's runs are done; NaN when not in the run */
    double speedup_levelset, speedup_vendor, speedup_serial;
    /* pcg: wall time of the whole ata_pcg call (setup, solve, teardown;
     * median over the reps); the bandwidth floor (floor.c: a model of the
     * compulsory bytes of an iteration over the triad bandwidth at the
     * row's thread count; NaN where there is none, e.g. a GPU backend) and
     * ms/it over it; the process's peak RSS after the row (a high-water mark
     * shared by every earlier row of the process). */
    double wall_s;
    double floor_bytes, floor_ms, floor_ratio;
    double rss_mb;
    /* The emulated GPU module's counts of one more solve (emucount.c), and
     * the iterations of that PCG solve. */
    int emu_ok;
    ata_emu_counts emu;
    int emu_iterations;
    char emu_shape[32];
} bench_run;

/* machine.c: where and when a run happened (JSON, CSV, title). */
typedef struct {
    char commit[48], date[32], host[128], cpu[128];
    int cores;
    double load[3];
} bench_machine;
void machine_collect(bench_machine *m);

typedef struct {
    const bench_opts *opt;
    ata_backend backend;    /* resolved backend */
    int threads;            /* resolved worker count (0 if no context) */
    bench_matrix *mats;
    int nmats;
    int nloaded;            /* matrices read or generated successfully */
    bench_run *runs;
    int nruns;
    bench_machine machine;
    /* pcg: triad bandwidth (GB/s) at 1 thread and at `threads`; NaN if not measured */
    double triad_gbs[2];
    int emu;                /* the backend is the emulated GPU module: its counts are reported */
} bench_results;

/* cli.c */
/* Parse argv; on a usage error print one line on stderr and return
 * EXIT_USAGE; return -1 for --help / --version (already printed), else 0. */
int cli_parse(int argc, char **argv, bench_opts *o);
void cli_usage(FILE *f);
void cli_free(bench_opts *o);
const char *cli_cmd_name(bench_cmd c);
const char *cli_policy_name(int p);
const char *cli_status_token(ata_status s);
/* The status column of a run: cli_status_token, or "wrong_answer". */
const char *run_status(const bench_run *r);
/* A run's name in messages: the policy, with its precision when the run
 * has several ("ca", "ca/mixed"). */
const char *run_name(const bench_opts *o, const bench_run *r, char *b, size_t n);

/* dagshape.c */
/* Levels of the DAG of A's `uplo` triangle (rows are tasks; an entry on
 * the solved side of the diagonal is an edge). A must be square. */
int dagshape_compute(const ata_csr *A, ata_uplo uplo, int **widths, int *nlevels,
                     int *max_width, long long *m, long long *tri_nnz);

/* serial.c: the serial SpTS baseline (a triangle extracted once, then a
 * CSparse-style loop). */
typedef struct {
    int n, unit, push;
    int inv;                /* ATA_NON_UNIT_INV: the stored diagonal is 1/t_ii, multiplied by */
    ata_uplo uplo;
    int *ptr, *idx;         /* CSR rows (pull) or CSC columns (push) of the triangle */
    double *val;
} serial_tri;
ata_status serial_tri_build(const ata_csr *A, ata_uplo uplo, ata_diag diag, ata_traversal trav,
                            serial_tri *T, char *msg, size_t cap);
void serial_tri_solve(const serial_tri *T, const double *b, double *x);
void serial_tri_free(serial_tri *T);

/* report.c */
void report_title(FILE *f, const bench_results *r);
void report_table_header(FILE *f, const bench_results *r);
void report_table_rows(FILE *f, const bench_results *r, int matrix);
/* pcg without --wide: a title, one block per matrix and a closing line that
 * fit in REPORT_COLUMNS (the problem, then per policy S, iterations,
 * relative residual, setup and solve s, ms/it, x floor and status). */
#define REPORT_COLUMNS 100
void report_summary(FILE *f, const bench_results *r, int matrix);
void report_summary_end(FILE *f, const bench_results *r);
int report_csv(const char *path, const bench_results *r);
int report_json(const char *path, const bench_results *r);
void report_info_table(FILE *f, const bench_results *r);
/* One line per matrix: S auto's S, T_l and T_u with their min..max. */
void report_probe_line(FILE *f, const bench_results *r, int matrix);

/* emucount.c: the emulated GPU module's counts of its work (counts, never
 * times): found after the context exists, reset before and taken after the
 * solve they describe. */
int emucount_init(void);
void emucount_reset(void);
void emucount_take(bench_run *r);
/* Per unit of the run (a solve; ILU0: a factorisation; pcg: an iteration,
 * with rows and levels over its iterations + 1 preconditioner solves). */
typedef struct {
    const char *unit;
    double rtt_per_level, fences_per_row, acquires_per_row, atomics_per_row;
    double launches, host_syncs, bytes, same_addr, hottest, graph_nodes, rtt;
} emu_metrics;
void emucount_metrics(const bench_results *R, const bench_run *r, emu_metrics *e);
/* One line per counted run of the matrix, under its table. */
void emucount_lines(FILE *f, const bench_results *R, int matrix);

/* floor.c */
/* Triad bandwidth (GB/s) at 1 and at `threads` threads, measured in a child
 * process (its arrays stay out of the bench's RSS); -1 if it failed. */
int floor_triad(int threads, double gbs[2]);
/* In that child (main calls it first): measure, print, return the exit
 * status; -1 when this process is not the child. */
int floor_triad_child(void);
/* Compulsory bytes of one PCG iteration (a model, see floor.c): fused as the
 * CPU backend runs it, or not (the serial reference); L and U the plans'
 * info (NULL or n == 0: no plans, triangles counted from A). */
double floor_pcg_bytes(const ata_csr *A, ata_precond pc, int fused, const ata_plan_info *L, const ata_plan_info *U);
/* getrusage's ru_maxrss in MB: the process's high-water mark so far. */
double peak_rss_mb(void);

/* svg.c */
int svg_write(const char *path, const bench_results *r);
/* Colour of a policy in every picture. */
const char *svg_policy_colour(int p);

/* util.c */
double now_s(void);
double median(double *v, int n);
/* The median of v (sorted in place), with its min and max. */
double median_range(double *v, int n, double *vmin, double *vmax);
/* "ata-bench: ..." on stderr, one line; clears the progress line first. */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The progress line (util.c): drawn on stderr only when it is a terminal,
 * after the run's first 2 s (ATA_BENCH_PROGRESS_AFTER=S), rewritten in place
 * and erased at the end; never on a pipe or in a file. */
void progress_start(int enabled);
/* 1 when the line is being drawn (enabled and stderr is a terminal). */
int progress_active(void);
/* What the run is doing: "[pcg] lap3d:100 policy ca"; clears the iteration. */
void progress_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* PCG: -1 while setting up, then the iteration (from the monitor callback;
 * lock-free). */
void progress_iteration(int it);
void progress_stop(void);
/* Around output to stdout: erase the progress line and keep it off. */
void progress_hold(void);
void progress_release(void);
/* Policy's timing (the quantity that speedups compare). */
double run_time(const bench_opts *o, const bench_run *r);

#endif
