/* cli.c - ata-bench's command line.
 *
 * Every flag is declared once in `flags` below: --help prints that table and
 * the parser accepts only what it lists, for the commands it lists, so the
 * help text and the parser cannot drift apart. A usage error is one line on
 * stderr naming the flag and the value, and exit status 2. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "policy.h"

enum {
    F_PCG = 1u << CMD_PCG, F_SPTRSV = 1u << CMD_SPTRSV, F_ILU0 = 1u << CMD_ILU0,
    F_INFO = 1u << CMD_INFO, F_WRITE = 1u << CMD_WRITE,
    F_SOLVE = F_PCG | F_SPTRSV | F_ILU0,
    F_ALL = F_SOLVE | F_INFO            /* every command that runs or reports */
};

typedef enum {
    O_MATRIX, O_GEN, O_POLICY, O_SERIAL, O_BACKEND, O_THREADS, O_S, O_R,
    O_TRAVERSAL, O_UPLO, O_DIAG, O_PC, O_REORDER, O_RTOL, O_MAXIT, O_MONITOR,
    O_REPS, O_WARMUP, O_CSV, O_JSON, O_PLOT, O_QUIET, O_HELP, O_VERSION,
    O_SHIFT, O_NRHS, O_NO_FLOOR, O_WIDE, O_KSP, O_RESTART, O_PRECISION
} flag_id;

typedef struct {
    flag_id id;
    const char *name;
    const char *arg;        /* NULL: a switch */
    unsigned cmds;
    const char *section;    /* printed before the first flag of a section */
    const char *help;       /* '\n' starts an indented continuation line */
} flag_def;

static const flag_def flags[] = {
    { O_MATRIX, "--matrix", "FILE[,FILE..]", F_ALL | F_WRITE, "Input, all commands (repeatable; default --gen lap3d:100, except info\nand write; write takes exactly one):",
      "matrix file: Matrix Market .mtx or .mtx.gz, Rutherford-Boeing\n.rb/.rua/.rsa, or a SuiteSparse .tar.gz archive" },
    { O_GEN, "--gen", "SPEC", F_ALL | F_WRITE, NULL,
      "generated matrix: lap2d:NX[xNY] (5-point), lap3d:N[xNYxNZ]\n(7-point), lap3d27:N, convdiff:N (3D upwind convection-diffusion,\nnonsymmetric), circuit:N; add ,dofs=D for D unknowns a grid\npoint (a PDE system numbered point by point: nodes of D rows),\n,perm=SEED for a random symmetric permutation, ,levelorder to\nrelabel the matrix in its lower triangle's level order (as PCG's\nsetup does); several specs may be joined with commas" },
    { O_POLICY, "--policy", "LIST", F_SOLVE, "Runtime (pcg, sptrsv, ilu0):",
      "comma list of the policies listed under 'Policies' below, serial\n(the serial baseline), or all (every policy not marked GPU only,\nplus vendor on a GPU backend); default auto (it says what it chose\nand why under the table). Several policies are compared in one run" },
    { O_SERIAL, "--serial", NULL, F_SOLVE, NULL,
      "run the serial reference only (ata_pcg with no context,\nata_ref_sptrsv_*, ata_ref_ilu0); same as --policy serial" },
    { O_BACKEND, "--backend", "NAME", F_SOLVE, NULL,
      "cpu, cuda, hip or auto (default auto: cuda, else hip, else cpu)" },
    { O_THREADS, "--threads", "N|auto", F_SOLVE, NULL,
      "CPU worker threads (default auto: OMP_NUM_THREADS, else the CPUs this process may use)" },
    { O_S, "--S", "auto|N", F_SOLVE, NULL,
      "adaptive-task size S (default auto: Eq. 5.1 and 5.2)" },
    { O_R, "--R", "X", F_SOLVE, NULL,
      "ratio R of Eq. 5.2 used by --S auto (default 100)" },
    { O_TRAVERSAL, "--traversal", "pull|push", F_PCG | F_SPTRSV, NULL,
      "triangular solves pull over CSR (default) or push over CSC;\npcg and sptrsv only" },
    { O_UPLO, "--uplo", "lower|upper", F_SPTRSV, "sptrsv only:",
      "triangle of the matrix to solve with (default lower)" },
    { O_DIAG, "--diag", "nonunit|unit|inverse", F_SPTRSV, NULL,
      "use the stored diagonal (default: divide by it), an implied unit\ndiagonal, or the stored diagonal's reciprocal (inverse: rounded\nonce by the plan, then multiplied by; ATA_NON_UNIT_INV, CPU only;\nthe serial baseline and the check do the same)" },
    { O_NRHS, "--nrhs", "K", F_SPTRSV, NULL,
      "solve K right-hand sides together (ata_sptrsv_multi, columns\nb, 2b, .., Kb); the solve time reported is per column (default 1)" },
    { O_KSP, "--ksp", "cg|bicgstab|gmres", F_PCG, "pcg only (b = 1, x0 = 0):",
      "Krylov method (default cg; bcgs, PETSc's name, is bicgstab):\nCG for SPD matrices; BiCGStab and restarted GMRES(m) for any\nnonsingular matrix, right-preconditioned, as PETSc's KSPBCGS and\nKSPGMRES with -ksp_pc_side right" },
    { O_RESTART, "--restart", "M", F_PCG, NULL,
      "GMRES's restart length: Krylov vectors kept before a restart\n(default 30, PETSc's; the library accepts 1..1000); ignored by\ncg and bicgstab" },
    { O_PC, "--pc", "ilu0|ic0|jacobi|none", F_PCG, NULL,
      "preconditioner (default ilu0)" },
    { O_PC, "--precond", "ilu0|ic0|jacobi|none", F_PCG, NULL,
      "same as --pc" },
    { O_SHIFT, "--shift", "none|nonzero|positive-definite", F_PCG, NULL,
      "diagonal shift of ILU0/IC0 on a bad pivot, as PETSc's\n-pc_factor_shift_type (default none); positive-definite for SPD\nmatrices whose factors are indefinite (e.g. LFAT5, bcsstk13)" },
    { O_PRECISION, "--precision", "double|mixed|both", F_PCG, NULL,
      "the ILU0 factors' precision: double (default), or mixed: factored\nin double, then stored as float, the solves' arithmetic in double\n(the CPU's solve plans read 4 bytes a value instead of 8; the\nserial reference and GPUs keep the same values as doubles); both:\nevery policy once per precision, their repetitions interleaved\n(double, mixed, double, ...), speedups against the baselines of\nthe same precision; a precision column in the table and summary,\n'precision' last in CSV and JSON (--plot draws double's runs)" },
    { O_REORDER, "--reorder", "none|rcm|nd", F_PCG, NULL,
      "reordering before the factorisation: none (default), reverse\nCuthill-McKee, or METIS nested dissection" },
    { O_RTOL, "--rtol", "X", F_PCG, NULL,
      "stop when ||b - Ax|| / ||b|| <= X (default 1e-6; every method\nstops on the unpreconditioned residual)" },
    { O_MAXIT, "--maxit", "N", F_PCG, NULL,
      "iteration limit (default 2000)" },
    { O_MONITOR, "--monitor", NULL, F_PCG, NULL,
      "print, live, the relative residual ||r_k|| / ||b|| of the\nrecurrence at every iteration (as PETSc's -ksp_monitor does)" },
    { O_NO_FLOOR, "--no-floor", NULL, F_PCG, NULL,
      "skip the triad bandwidth measurement (about 0.2 s, in a child\nprocess) that the floor ms/it and x floor columns need ('-')" },
    { O_REPS, "--reps", "N", F_SOLVE, "Measurement (pcg, sptrsv, ilu0):",
      "timed repetitions, the median is reported (default: pcg 1,\nilu0 3, sptrsv 10)" },
    { O_WARMUP, "--warmup", "MS", F_SPTRSV | F_ILU0, NULL,
      "sptrsv and ilu0: untimed solves (factorisations) before the\ntimed ones, for MS milliseconds (default 100; sptrsv: at least\none): a fresh process runs its first small solves 2-4x slower" },
    { O_CSV, "--csv", "FILE", F_ALL, "Output, pcg, sptrsv, ilu0 and info (the table or summary always goes to stdout):",
      "write every number as CSV, one line per matrix and policy" },
    { O_JSON, "--json", "FILE", F_ALL, NULL,
      "write every number as JSON, with the settings and the level\nwidths of every DAG" },
    { O_PLOT, "--plot", "FILE.svg", F_ALL, NULL,
      "draw the speedup per matrix and policy as grouped bars, and\nthe DAG shape (level width vs level) of every matrix" },
    { O_WIDE, "--wide", NULL, F_PCG, NULL,
      "pcg: print the full table (every column, about 290 characters\nwide) instead of the summary that fits in 100 columns; CSV and\nJSON are the same either way" },
    { O_QUIET, "--quiet", NULL, F_ALL | F_WRITE, NULL,
      "no table and no progress line (errors still go to stderr)" },
    { O_HELP, "--help", NULL, F_ALL | F_WRITE, "Other, all commands:",
      "this text (also -h)" },
    { O_VERSION, "--version", NULL, F_ALL | F_WRITE, NULL,
      "version and the backends this build can use" },
};
#define NFLAGS ((int)(sizeof flags / sizeof flags[0]))

static const char *cmd_names[CMD_COUNT] = { "pcg", "sptrsv", "ilu0", "info", "write" };
static const char *cmd_help[CMD_COUNT] = {
    "PCG (Saad Alg. 9.1) with ILU0 or IC0 preconditioning on the runtime;\n"
    "--ksp bicgstab or gmres runs BiCGStab or GMRES(m) instead",
    "sparse triangular solve T x = b with b = T * ones, checked against\n"
    "the serial reference",
    "ILU0 factorisation on the runtime, checked against the serial reference",
    "DAG shape of the lower and upper triangles: n, nnz, levels, widths, class",
    "write --gen SPEC FILE (or --matrix IN FILE): the one input exactly as\n"
    "the other commands solve it (after ,perm=SEED), the whole matrix, to\n"
    "FILE as Matrix Market coordinate real general (ata_matrix_write_mtx,\n"
    "%.17g: every value reads back bit for bit), for SpMP, PETSc or --matrix",
};

const char *cli_cmd_name(bench_cmd c) { return cmd_names[c]; }

const char *cli_policy_name(int p)
{
    return p == POLICY_SERIAL ? "serial" : ata_policy_name((ata_policy)p);
}

const char *run_name(const bench_opts *o, const bench_run *r, char *b, size_t n)
{
    if (o->nprec > 1) snprintf(b, n, "%s/%s", cli_policy_name(r->policy), ata_precision_name(r->precision));
    else snprintf(b, n, "%s", cli_policy_name(r->policy));
    return b;
}

/* Short tokens for the table's status column (PETSc's habit of naming the
 * reason, in a form that fits a column and greps well). */
const char *cli_status_token(ata_status s)
{
    switch (s) {
    case ATA_OK: return "ok";
    case ATA_ERR_ARG: return "bad_argument";
    case ATA_ERR_NOMEM: return "out_of_memory";
    case ATA_ERR_IO: return "io_error";
    case ATA_ERR_FORMAT: return "bad_format";
    case ATA_ERR_UNSUPPORTED: return "unsupported";
    case ATA_ERR_EMPTY: return "empty";
    case ATA_ERR_NOT_SQUARE: return "not_square";
    case ATA_ERR_INDEX: return "bad_index";
    case ATA_ERR_DUPLICATE: return "duplicate";
    case ATA_ERR_NONFINITE: return "nonfinite";
    case ATA_ERR_MISSING_DIAG: return "missing_diag";
    case ATA_ERR_ZERO_PIVOT: return "zero_pivot";
    case ATA_ERR_NOT_CONVERGED: return "not_converged";
    case ATA_ERR_BREAKDOWN: return "breakdown";
    case ATA_ERR_INDEFINITE_PC: return "indefinite_pc";
    case ATA_ERR_TIMEOUT: return "timeout";
    case ATA_ERR_BACKEND: return "backend_error";
    case ATA_ERR_INTERNAL: return "internal_error";
    case ATA_ERR_DIVERGED: return "diverged";
    }
    return "error";
}

/* Print `text` word-wrapped to 79 columns, continuation lines indented to
 * column `indent` (the cursor is at `indent` when called). */
static void print_wrapped(FILE *f, const char *text, int indent)
{
    int col = indent;
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\n') p++;
        size_t w = strcspn(p, " \n");
        if (!w) break;
        if (col > indent && col + 1 + (int)w > 79) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        }
        if (col > indent) { fputc(' ', f); col++; }
        fprintf(f, "%.*s", (int)w, p);
        col += (int)w;
        p += w;
    }
    fputc('\n', f);
}

void cli_usage(FILE *f)
{
    fprintf(f, "Usage: %s COMMAND [flags]\n"
               "Benchmark of ATA (adaptive task aggregation): sparse triangular solve,\n"
               "ILU0 and Krylov solvers (PCG, BiCGStab, GMRES) on CPU threads, CUDA or HIP.\n\nCommands:\n", BENCH_NAME);
    for (int c = 0; c < CMD_COUNT; c++) {
        fprintf(f, "  %-8s ", cmd_names[c]);
        print_wrapped(f, cmd_help[c], 11);
    }
    fprintf(f, "  %-8s ", "help");
    print_wrapped(f, "this text", 11);
    for (int i = 0; i < NFLAGS; i++) {
        const flag_def *d = &flags[i];
        if (d->section) {
            fputc('\n', f);
            print_wrapped(f, d->section, 0);
        }
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
        fprintf(f, "  %-26s ", left);
        print_wrapped(f, d->help, 29);
    }
    fprintf(f, "\nPolicies (--policy; the library's policy table):\n");
    for (int p = 0; p < policy_count(); p++) {
        const policy_desc *d = policy_get((ata_policy)p);
        char text[256];
        snprintf(text, sizeof text, "%s%s", d->description,
                 d->flags & POLICY_GPU_ONLY ? " [GPU only]" : d->flags & POLICY_CPU_ONLY ? " [CPU only]" : "");
        fprintf(f, "  %-8s ", d->name);
        print_wrapped(f, text, 11);
    }
    fprintf(f, "  %-8s ", "serial");
    print_wrapped(f, "the serial baseline (not the runtime): sptrsv a CSparse-style loop over the extracted triangle, ilu0 and pcg the serial reference", 11);
    fprintf(f, "\nA value may also be given as --flag=VALUE.\n"
               "pcg prints a summary within 100 columns: per matrix a line with n, nnz,\n"
               "DAG class and levels, then per policy S (the L plan's, as chosen), its,\n"
               "relres (the solver's), setup s (analysis, reordering included, plus\n"
               "factorisation), solve s, ms/it, x floor and status, and S auto's probes.\n"
               "pcg --wide, sptrsv and ilu0 print the full table instead.\n"
               "Progress: on a terminal, a run longer than 2 s shows one line on stderr\n"
               "([pcg] MATRIX policy P: iteration N), rewritten in place and erased at\n"
               "the end; none when stderr is not a terminal, and none in CSV or JSON.\n"
               "Table columns: atasks = adaptive tasks; c, f = coarse and fine dependencies\n"
               "(against m, the DAG's edges); for pcg, atasks, c, f, m and plan MB add up\n"
               "the L and U plans and S is the L plan's; speedups compare solve times\n"
               "(ilu0: factor times, analysis included; refactor ms is the numeric phase\n"
               "alone, ata_factor_update_values on the same pattern, after 3 untimed:\n"
               "the CPU's kernel trials); pcg's L, U, SpMV and vec ms/it\n"
               "split an iteration into preconditioner solves, SpMV and vector operations\n"
               "(as PETSc's -log_view); vs serial compares with the serial\n"
               "baseline above; range %% = (max - min) / median over the repetitions.\n"
               "pcg's total s is the wall time of the whole ata_pcg call (setup, solve,\n"
               "teardown). floor ms/it is a model, not a measurement of traffic: the\n"
               "compulsory bytes of one iteration (A; the L and U triangles as the plans\n"
               "store them; each vector operation's reads and writes, once, fused as the\n"
               "backend runs them) over the triad bandwidth (a[i] = b[i] + s c[i], 3 x 64 MB,\n"
               "best of 3) measured in this run at the row's thread count (serial: 1);\n"
               "x floor = ms/it / floor (below 1 where the problem fits in the caches:\n"
               "the triad is DRAM's bandwidth). The model counts CG's operations: for\n"
               "--ksp bicgstab and gmres both floor columns are '-'. peak RSS MB is\n"
               "getrusage's ru_maxrss after the row: a process-wide high-water mark, so\n"
               "rows of one run share it (each row shows the peak so far); run one policy\n"
               "per process for a clean per-policy number.\n"
               "check (sptrsv, ilu0): max |x - x_ref| / max |x_ref| against the serial\n"
               "reference ata_ref_* (ilu0: over the factors' values); pull and ILU0 are\n"
               "expected bitwise equal (0), push within 1e-12; above 1e-8 the status is\n"
               "wrong_answer; '-' when the reference itself failed.\n"
               "S auto: T_l and T_u are medians of 5 probes (the table's last line per\n"
               "matrix gives them and their min..max; pcg's summary the medians only);\n"
               "they are cached per machine in\n"
               "$XDG_CACHE_HOME/ata/probe-HOST-BACKEND-THREADS.txt (delete it to probe\n"
               "again; ATA_PROBE_CACHE=0 turns the cache off), so runs pick the same S.\n"
               "A probe taken while the load average is at or above the CPU count is not\n"
               "cached (ATA_PROBE_CACHE_ANY_LOAD=1 caches it anyway).\n"
               "Exit status: 0 every run succeeded; 1 a file, backend, solve or output\n"
               "failed (the status column and one line on stderr say which); 2 usage error.\n"
               "Example: %s pcg --gen lap3d:100 --policy levelset,ca --backend cpu --threads 2\n"
               "         %s write --gen circuit:1000000,perm=1 circuit-1e6-perm1.mtx\n",
            BENCH_NAME, BENCH_NAME);
}

static void print_version(void)
{
    printf("%s %s (ATA %s); backends:", BENCH_NAME, ATA_VERSION_STRING, ATA_VERSION_STRING);
    const ata_backend b[] = { ATA_BACKEND_CPU, ATA_BACKEND_CUDA, ATA_BACKEND_HIP };
    for (int i = 0; i < 3; i++)
        if (ata_backend_available(b[i])) printf(" %s", ata_backend_name(b[i]));
    printf("\n");
}

/* A usage error: one line, naming what was wrong. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", BENCH_NAME);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see '%s --help')\n", BENCH_NAME);
    va_end(ap);
    return EXIT_USAGE;
}

static int parse_int(const char *s, int lo, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > 2147483647L) return -1;
    *out = (int)v;
    return 0;
}

static int parse_pos_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || !(v > 0)) return -1;
    *out = v;
    return 0;
}

static int add_input(bench_opts *o, const char *text, int is_gen)
{
    bench_input *in = realloc(o->inputs, (size_t)(o->ninputs + 1) * sizeof *in);
    if (!in) return -1;
    o->inputs = in;
    in[o->ninputs].text = strdup(text);
    in[o->ninputs].is_gen = is_gen;
    if (!in[o->ninputs].text) return -1;
    o->ninputs++;
    return 0;
}

/* A light syntax check of a generator spec; the library's parser has the
 * last word (a spec it rejects is a run failure naming the spec). */
static int gen_spec_ok(const char *s)
{
    static const char *kinds[] = { "lap2d:", "lap3d:", "lap3d27:", "convdiff:", "circuit:" };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t k = strlen(kinds[i]);
        if (!strncmp(s, kinds[i], k)) return s[k] >= '1' && s[k] <= '9';
    }
    return 0;
}

static int add_policy(bench_opts *o, int p)
{
    for (int i = 0; i < o->npolicies; i++)
        if (o->policies[i] == p) return 0;
    if (o->npolicies >= POLICY_MAX) return -1;
    o->policies[o->npolicies++] = p;
    return 0;
}

static int parse_policies(bench_opts *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) return usage_error("out of memory");
    int rc = 0;
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        rc = usage_error("--policy: empty name in the list '%s'", list);
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        ata_policy p;
        if (!strcmp(tok, "all")) {
            o->policy_all = 1;
            for (int q = 0; q < policy_count(); q++)
                if (!(policy_get((ata_policy)q)->flags & POLICY_GPU_ONLY)) add_policy(o, q);
        } else if (!strcmp(tok, "serial")) {
            add_policy(o, POLICY_SERIAL);
        } else if (ata_policy_from_name(tok, &p) == ATA_OK) {
            add_policy(o, (int)p);
        } else {
            rc = usage_error("--policy: unknown policy '%s' (expected %s, serial or all)", tok,
                             policy_name_list(", "));
        }
    }
    free(copy);
    return rc;
}

/* Split a --gen value into specs. ",perm=SEED", ",seed=S", ",dofs=D" and ",levelorder"
 * belong to the spec before them, every other comma starts a new spec. */
static int parse_gen(bench_opts *o, const char *value)
{
    char *copy = strdup(value);
    if (!copy) return usage_error("out of memory");
    char *spec = NULL;
    int rc = 0;
    size_t len = strlen(copy);
    char *p = copy;
    while (p <= copy + len && !rc) {
        char *c = strchr(p, ',');
        if (!c) c = copy + len;
        *c = '\0';
        if (spec && (!strncmp(p, "perm=", 5) || !strncmp(p, "seed=", 5) || !strncmp(p, "dofs=", 5) ||
                     !strcmp(p, "levelorder"))) {
            p[-1] = ',';        /* glue back onto the previous spec */
        } else {
            if (spec) {
                if (!gen_spec_ok(spec)) rc = usage_error("--gen: bad spec '%s' (expected lap2d:NX[xNY], "
                                                         "lap3d:N[xNYxNZ], lap3d27:N, convdiff:N or circuit:N, optionally ,dofs=D, ,perm=SEED and ,levelorder)", spec);
                else if (add_input(o, spec, 1)) rc = usage_error("out of memory");
            }
            spec = p;
        }
        p = c + 1;
    }
    if (!rc) {
        if (!spec || !*spec || !gen_spec_ok(spec))
            rc = usage_error("--gen: bad spec '%s' (expected lap2d:NX[xNY], lap3d:N[xNYxNZ], "
                             "lap3d27:N, convdiff:N or circuit:N, optionally ,dofs=D, ,perm=SEED and ,levelorder)", spec ? spec : value);
        else if (add_input(o, spec, 1)) rc = usage_error("out of memory");
    }
    free(copy);
    return rc;
}

static int parse_matrices(bench_opts *o, const char *value)
{
    char *copy = strdup(value), *save = NULL;
    if (!copy) return usage_error("out of memory");
    int rc = 0, any = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        any = 1;
        if (add_input(o, tok, 0)) rc = usage_error("out of memory");
    }
    if (!rc && !any) rc = usage_error("--matrix: empty file name");
    free(copy);
    return rc;
}

static int apply(bench_opts *o, const flag_def *d, const char *v, int *policy_given, int *serial_given)
{
    switch (d->id) {
    case O_MATRIX: return parse_matrices(o, v);
    case O_GEN: return parse_gen(o, v);
    case O_POLICY: *policy_given = 1; return parse_policies(o, v);
    case O_SERIAL: *serial_given = 1; return 0;
    case O_BACKEND:
        if (ata_backend_from_name(v, &o->backend) != ATA_OK)
            return usage_error("--backend: unknown backend '%s' (expected cpu, cuda, hip or auto)", v);
        return 0;
    case O_THREADS:
        if (!strcmp(v, "auto")) { o->threads = 0; return 0; }
        if (parse_int(v, 1, &o->threads))
            return usage_error("--threads: expected a positive integer or auto, got '%s'", v);
        return 0;
    case O_S:
        if (!strcmp(v, "auto")) { o->S = 0; return 0; }
        if (parse_int(v, 1, &o->S)) return usage_error("--S: expected auto or a positive integer, got '%s'", v);
        return 0;
    case O_R:
        if (parse_pos_double(v, &o->R)) return usage_error("--R: expected a positive number, got '%s'", v);
        return 0;
    case O_TRAVERSAL:
        if (!strcmp(v, "pull")) o->traversal = ATA_PULL;
        else if (!strcmp(v, "push")) o->traversal = ATA_PUSH;
        else return usage_error("--traversal: expected pull or push, got '%s'", v);
        return 0;
    case O_UPLO:
        if (!strcmp(v, "lower")) o->uplo = ATA_LOWER;
        else if (!strcmp(v, "upper")) o->uplo = ATA_UPPER;
        else return usage_error("--uplo: expected lower or upper, got '%s'", v);
        return 0;
    case O_DIAG:
        if (!strcmp(v, "nonunit") || !strcmp(v, "non-unit")) o->diag = ATA_NON_UNIT;
        else if (!strcmp(v, "unit")) o->diag = ATA_UNIT;
        else if (!strcmp(v, "inverse")) o->diag = ATA_NON_UNIT_INV;
        else return usage_error("--diag: expected nonunit, unit or inverse, got '%s'", v);
        return 0;
    case O_PC:
        if (ata_precond_from_name(v, &o->pc) != ATA_OK)
            return usage_error("%s: expected ilu0, ic0, jacobi or none, got '%s'", d->name, v);
        return 0;
    case O_KSP:
        if (ata_ksp_from_name(v, &o->ksp) != ATA_OK)
            return usage_error("--ksp: expected cg, bicgstab (or bcgs) or gmres, got '%s'", v);
        return 0;
    case O_RESTART:
        if (parse_int(v, 1, &o->restart))
            return usage_error("--restart: expected a positive integer (GMRES's restart length), got '%s'", v);
        return 0;
    case O_PRECISION:
        o->precision_given = 1;
        o->nprec = 1;
        if (!strcmp(v, "both")) {
            o->precisions[0] = ATA_PRECISION_DOUBLE;
            o->precisions[1] = ATA_PRECISION_MIXED;
            o->nprec = 2;
        } else if (ata_precision_from_name(v, &o->precisions[0]) != ATA_OK) {
            return usage_error("--precision: expected double, mixed or both, got '%s'", v);
        }
        return 0;
    case O_SHIFT:
        if (ata_shift_from_name(v, &o->shift) != ATA_OK)
            return usage_error("--shift: expected none, nonzero or positive-definite, got '%s'", v);
        return 0;
    case O_NRHS:
        if (parse_int(v, 1, &o->nrhs)) return usage_error("--nrhs: expected a positive integer, got '%s'", v);
        return 0;
    case O_REORDER:
        if (!strcmp(v, "none")) o->reorder = ATA_REORDER_NONE;
        else if (!strcmp(v, "rcm")) o->reorder = ATA_REORDER_RCM;
        else if (!strcmp(v, "nd")) o->reorder = ATA_REORDER_ND;
        else return usage_error("--reorder: expected none, rcm or nd, got '%s'", v);
        return 0;
    case O_RTOL:
        if (parse_pos_double(v, &o->rtol)) return usage_error("--rtol: expected a positive number, got '%s'", v);
        return 0;
    case O_MAXIT:
        if (parse_int(v, 1, &o->maxit)) return usage_error("--maxit: expected a positive integer, got '%s'", v);
        return 0;
    case O_MONITOR: o->monitor = 1; return 0;
    case O_NO_FLOOR: o->no_floor = 1; return 0;
    case O_WIDE: o->wide = 1; return 0;
    case O_REPS:
        if (parse_int(v, 1, &o->reps)) return usage_error("--reps: expected a positive integer, got '%s'", v);
        return 0;
    case O_WARMUP: {
        char *end;
        const double ms = strtod(v, &end);
        if (!*v || *end || !(ms >= 0 && ms <= 60000))
            return usage_error("--warmup: expected milliseconds from 0 to 60000, got '%s'", v);
        o->warmup_ms = ms;
        return 0;
    }
    case O_CSV: case O_JSON: case O_PLOT:
        if (!*v) return usage_error("%s: empty file name", d->name);
        if (d->id == O_CSV) o->csv = v; else if (d->id == O_JSON) o->json = v; else o->plot = v;
        return 0;
    case O_QUIET: o->quiet = 1; return 0;
    case O_HELP: cli_usage(stdout); return -1;
    case O_VERSION: print_version(); return -1;
    }
    return 0;
}

int cli_parse(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->warmup_ms = -1;      /* unset: the default below */
    o->backend = ATA_BACKEND_AUTO;
    o->traversal = ATA_PULL;
    o->uplo = ATA_LOWER;
    o->diag = ATA_NON_UNIT;
    o->pc = ATA_PC_ILU0;
    o->reorder = ATA_REORDER_NONE;
    o->shift = ATA_SHIFT_NONE;
    o->ksp = ATA_KSP_CG;
    o->nrhs = 1;
    o->precisions[0] = ATA_PRECISION_DOUBLE;
    o->nprec = 1;
    o->argc = argc;
    o->argv = argv;
    if (argc < 2) {         /* a short reminder, not the whole --help */
        fprintf(stderr, "Usage: %s pcg|sptrsv|ilu0|info|write [flags]   (%s --help lists the flags)\n",
                BENCH_NAME, BENCH_NAME);
        return EXIT_USAGE;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) { cli_usage(stdout); return -1; }
    if (!strcmp(c, "--version")) { print_version(); return -1; }
    int cmd = -1;
    for (int i = 0; i < CMD_COUNT; i++)
        if (!strcmp(c, cmd_names[i])) cmd = i;
    if (cmd < 0) {
        if (c[0] == '-') return usage_error("no command before '%s' (expected pcg, sptrsv, ilu0, info or write)", c);
        return usage_error("unknown command '%s' (expected pcg, sptrsv, ilu0, info or write)", c);
    }
    o->cmd = (bench_cmd)cmd;
    int policy_given = 0, serial_given = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h")) a = "--help";
        if (strncmp(a, "--", 2)) {
            /* write's one operand: the output file. */
            if (cmd == CMD_WRITE && !o->write_path && *a && a[0] != '-') { o->write_path = a; continue; }
            return usage_error("%s: unexpected argument '%s'", cmd_names[cmd], a);
        }
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const flag_def *d = NULL;
        for (int k = 0; k < NFLAGS; k++)
            if (strlen(flags[k].name) == nlen && !strncmp(flags[k].name, a, nlen)) d = &flags[k];
        if (!d) return usage_error("unknown flag '%.*s'", (int)nlen, a);
        if (!(d->cmds & (1u << cmd))) {
            char which[64] = "";
            int nwhich = 0, seen = 0;
            for (int k = 0; k < CMD_COUNT; k++) nwhich += !!(d->cmds & (1u << k));
            for (int k = 0; k < CMD_COUNT; k++)
                if (d->cmds & (1u << k)) {
                    seen++;
                    snprintf(which + strlen(which), sizeof which - strlen(which), "%s%s",
                             seen == 1 ? "" : seen == nwhich ? " and " : ", ", cmd_names[k]);
                }
            return usage_error("%s %s: %s applies to %s only", BENCH_NAME, cmd_names[cmd], d->name, which);
        }
        const char *v = NULL;
        if (d->arg) {
            if (eq) v = eq + 1;
            else if (i + 1 < argc) v = argv[++i];
            else return usage_error("%s needs a value (%s)", d->name, d->arg);
        } else if (eq) {
            return usage_error("%s takes no value (got '%s')", d->name, eq + 1);
        }
        int rc = apply(o, d, v, &policy_given, &serial_given);
        if (rc) return rc;
    }
    if (serial_given && policy_given)
        return usage_error("--serial and --policy exclude each other (use --policy serial,... to compare)");
    if (serial_given) add_policy(o, POLICY_SERIAL);
    if (o->npolicies == 0) add_policy(o, ATA_POLICY_AUTO);
    if (o->cmd == CMD_WRITE) {
        if (o->ninputs != 1)
            return usage_error("write: expected exactly one input (--gen SPEC or --matrix FILE), got %d", o->ninputs);
        if (!o->write_path) return usage_error("write: no output file (write --gen SPEC FILE.mtx)");
        size_t L = strlen(o->write_path);
        if (L > 3 && !strcmp(o->write_path + L - 3, ".gz"))
            return usage_error("write: %s: the file is written as plain Matrix Market text (gzip it afterwards)",
                               o->write_path);
        return 0;
    }
    if (o->ninputs == 0) {
        if (o->cmd == CMD_INFO) return usage_error("info: no input (give --matrix FILE or --gen SPEC)");
        o->default_input = 1;
        if (add_input(o, "lap3d:100", 1)) return usage_error("out of memory");
    }
    if (o->reps == 0) o->reps = o->cmd == CMD_SPTRSV ? 10 : o->cmd == CMD_ILU0 ? 3 : 1;
    if (o->warmup_ms < 0) o->warmup_ms = 100;
    return 0;
}

void cli_free(bench_opts *o)
{
    for (int i = 0; i < o->ninputs; i++) free(o->inputs[i].text);
    free(o->inputs);
    o->inputs = NULL;
    o->ninputs = 0;
}
