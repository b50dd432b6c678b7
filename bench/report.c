/* report.c - the aligned table on stdout, and CSV and JSON files.
 *
 * The table is printed one matrix at a time (its rows appear as soon as its
 * policies are done), so column widths are fixed up front: the matrix
 * column fits the longest label, the others fit their usual values. CSV and
 * JSON carry every number: one record per (matrix, policy), built by one
 * collector so both files have the same fields under the same names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

/* ---------------------------------------------------------------- */
/* Table                                                             */
/* ---------------------------------------------------------------- */

typedef enum {
    C_MATRIX, C_N, C_NNZ, C_CLASS, C_LEVELS, C_POLICY, C_S, C_ATASKS, C_C, C_F, C_M,
    C_ITS, C_RELRES, C_ANALYSIS, C_FACTOR, C_SOLVE, C_SOLVE_MS, C_FACTOR_MS, C_PERIT,
    C_PLANMB, C_VS_LS, C_VS_VENDOR, C_VS_SERIAL, C_CHECK, C_STATUS, C_RANGE,
    C_PH_L, C_PH_U, C_PH_SPMV, C_PH_VEC, C_WALL, C_FLOOR, C_XFLOOR, C_RSS, C_PREC, C_REFACTOR_MS, C_COUNT
} col_id;

static const struct { const char *head; int width; int left; } cols[C_COUNT + 1] = {
    [C_MATRIX] = { "matrix", 6, 1 },     [C_N] = { "n", 8, 0 },
    [C_NNZ] = { "nnz", 9, 0 },           [C_CLASS] = { "class", 8, 1 },
    [C_LEVELS] = { "levels", 6, 0 },     [C_POLICY] = { "policy", 8, 1 },
    [C_S] = { "S", 6, 0 },               [C_ATASKS] = { "atasks", 6, 0 },
    [C_C] = { "c", 7, 0 },               [C_F] = { "f", 9, 0 },
    [C_M] = { "m", 9, 0 },               [C_ITS] = { "its", 5, 0 },
    [C_RELRES] = { "relres", 8, 0 },     [C_ANALYSIS] = { "analysis s", 10, 0 },
    [C_FACTOR] = { "factor s", 8, 0 },   [C_SOLVE] = { "solve s", 8, 0 },
    [C_SOLVE_MS] = { "solve ms", 9, 0 }, [C_FACTOR_MS] = { "factor ms", 9, 0 },
    [C_PERIT] = { "ms/it", 7, 0 },       [C_PLANMB] = { "plan MB", 7, 0 },
    [C_VS_LS] = { "vs levelset", 11, 0 }, [C_VS_VENDOR] = { "vs vendor", 9, 0 },
    [C_VS_SERIAL] = { "vs serial", 9, 0 }, [C_CHECK] = { "check", 8, 0 },
    [C_STATUS] = { "status", 6, 1 },     [C_RANGE] = { "range %", 7, 0 },
    [C_PH_L] = { "L ms/it", 7, 0 },      [C_PH_U] = { "U ms/it", 7, 0 },
    [C_PH_SPMV] = { "SpMV ms/it", 10, 0 }, [C_PH_VEC] = { "vec ms/it", 9, 0 },
    [C_WALL] = { "total s", 8, 0 },      [C_FLOOR] = { "floor ms/it", 11, 0 },
    [C_XFLOOR] = { "x floor", 7, 0 },    [C_RSS] = { "peak RSS MB", 11, 0 },
    [C_PREC] = { "precision", 9, 1 },    [C_REFACTOR_MS] = { "refactor ms", 11, 0 },
};

static int has_policy(const bench_opts *o, int p)
{
    for (int k = 0; k < o->npolicies; k++)
        if (o->policies[k] == p) return 1;
    return 0;
}

/* The columns of this command, in order. */
static int table_columns(const bench_opts *o, col_id *c)
{
    int n = 0;
    c[n++] = C_MATRIX; c[n++] = C_N; c[n++] = C_NNZ; c[n++] = C_CLASS; c[n++] = C_LEVELS;
    c[n++] = C_POLICY;
    if (o->cmd == CMD_PCG && o->precision_given) c[n++] = C_PREC;     /* --precision: which is which */
    if (o->cmd != CMD_ILU0) { c[n++] = C_S; c[n++] = C_ATASKS; c[n++] = C_C; c[n++] = C_F; c[n++] = C_M; }
    if (o->cmd == CMD_PCG) {
        c[n++] = C_ITS; c[n++] = C_RELRES; c[n++] = C_ANALYSIS; c[n++] = C_FACTOR; c[n++] = C_SOLVE;
        c[n++] = C_WALL; c[n++] = C_PERIT; c[n++] = C_RANGE; c[n++] = C_FLOOR; c[n++] = C_XFLOOR;
        c[n++] = C_PH_L; c[n++] = C_PH_U; c[n++] = C_PH_SPMV; c[n++] = C_PH_VEC; c[n++] = C_PLANMB;
        c[n++] = C_RSS;
    } else if (o->cmd == CMD_SPTRSV) {
        c[n++] = C_SOLVE_MS; c[n++] = C_RANGE;
    } else {
        c[n++] = C_FACTOR_MS; c[n++] = C_RANGE; c[n++] = C_REFACTOR_MS;
    }
    if (has_policy(o, ATA_POLICY_LEVELSET)) c[n++] = C_VS_LS;
    if (has_policy(o, ATA_POLICY_VENDOR)) c[n++] = C_VS_VENDOR;
    if (has_policy(o, POLICY_SERIAL)) c[n++] = C_VS_SERIAL;
    if (o->cmd == CMD_SPTRSV) { c[n++] = C_ANALYSIS; c[n++] = C_PLANMB; }
    if (o->cmd != CMD_PCG) c[n++] = C_CHECK;
    c[n++] = C_STATUS;
    return n;
}

static int matrix_width(const bench_results *R)
{
    int w = cols[C_MATRIX].width;
    for (int i = 0; i < R->nmats; i++) {
        int L = (int)strlen(R->mats[i].label);
        if (L > w) w = L;
    }
    return w;
}

static int width_of(const bench_results *R, col_id c)
{
    return c == C_MATRIX ? matrix_width(R) : cols[c].width;
}

/* Triangle whose DAG the columns describe. */
static int shown_tri(const bench_opts *o) { return o->cmd == CMD_SPTRSV ? (int)o->uplo : 0; }

static int dash(char *b, size_t n) { return snprintf(b, n, "-"); }

static void fmt_double(char *b, size_t n, const char *f, double v)
{
    if (isfinite(v)) snprintf(b, n, f, v);
    else if (isnan(v)) dash(b, n);
    else snprintf(b, n, "%s", v > 0 ? "inf" : "-inf");
}

static void cell(char *b, size_t n, col_id c, const bench_results *R, const bench_run *u)
{
    const bench_opts *o = R->opt;
    const bench_matrix *m = &R->mats[u->matrix];
    int t = shown_tri(o);
    int plan = u->ninfo > 0;
    int both = u->ninfo > 1;
    int ran = u->reps > 0;
    const ata_plan_info *L = &u->info[0], *U = &u->info[1];
    switch (c) {
    case C_MATRIX: snprintf(b, n, "%s", m->label); break;
    case C_N: snprintf(b, n, "%d", m->n); break;
    case C_NNZ: snprintf(b, n, "%lld", o->cmd == CMD_SPTRSV ? m->tri_nnz[t] : m->nnz); break;
    case C_CLASS: snprintf(b, n, "%s", plan && strcmp(u->info_class[0], "-") ? u->info_class[0] : m->dag_class[t]); break;
    case C_LEVELS:
        if (plan) snprintf(b, n, "%d", L->levels);
        else if (m->nlevels[t]) snprintf(b, n, "%d", m->nlevels[t]);
        else dash(b, n);
        break;
    case C_POLICY: snprintf(b, n, "%s", cli_policy_name(u->policy)); break;
    case C_S: if (plan) snprintf(b, n, "%d", L->S); else dash(b, n); break;
    case C_ATASKS: if (plan) snprintf(b, n, "%d", L->atasks + (both ? U->atasks : 0)); else dash(b, n); break;
    case C_C: if (plan) snprintf(b, n, "%lld", L->c + (both ? U->c : 0)); else dash(b, n); break;
    case C_F: if (plan) snprintf(b, n, "%lld", L->f + (both ? U->f : 0)); else dash(b, n); break;
    case C_M: if (plan) snprintf(b, n, "%lld", L->m + (both ? U->m : 0)); else dash(b, n); break;
    case C_ITS: if (ran) snprintf(b, n, "%d", u->iterations); else dash(b, n); break;
    case C_RELRES:
        /* A solve stopped before its first residual has none to show. */
        if (ran && (u->status == ATA_OK || u->iterations > 0 || u->relres > 0)) fmt_double(b, n, "%.2e", u->relres);
        else dash(b, n);
        break;
    case C_ANALYSIS: if (ran || plan) fmt_double(b, n, "%.4f", u->analysis_s); else dash(b, n); break;
    case C_FACTOR: if (ran) fmt_double(b, n, "%.4f", u->factor_s); else dash(b, n); break;
    case C_SOLVE: if (ran) fmt_double(b, n, "%.4f", u->solve_s); else dash(b, n); break;
    case C_SOLVE_MS: if (ran) fmt_double(b, n, "%.4f", 1e3 * u->solve_s); else dash(b, n); break;
    case C_FACTOR_MS: if (ran) fmt_double(b, n, "%.4f", 1e3 * u->factor_s); else dash(b, n); break;
    case C_REFACTOR_MS:
        if (ran && isfinite(u->refactor_s)) fmt_double(b, n, "%.4f", 1e3 * u->refactor_s);
        else dash(b, n);
        break;
    case C_PERIT: if (ran) fmt_double(b, n, "%.3f", u->per_iter_ms); else dash(b, n); break;
    case C_PLANMB:
        if (plan) fmt_double(b, n, "%.2f", (double)(L->plan_bytes + (both ? U->plan_bytes : 0)) / 1048576.0);
        else dash(b, n);
        break;
    case C_VS_LS: fmt_double(b, n, "%.2fx", u->speedup_levelset); break;
    case C_VS_VENDOR: fmt_double(b, n, "%.2fx", u->speedup_vendor); break;
    case C_VS_SERIAL: fmt_double(b, n, "%.2fx", u->speedup_serial); break;
    case C_CHECK: fmt_double(b, n, "%.1e", u->check); break;
    case C_STATUS: snprintf(b, n, "%s", run_status(u)); break;
    case C_PH_L: case C_PH_U: case C_PH_SPMV: case C_PH_VEC:
        if (ran) fmt_double(b, n, "%.3f", u->phase_ms[c - C_PH_L]); else dash(b, n);
        break;
    case C_WALL: if (ran) fmt_double(b, n, "%.4f", u->wall_s); else dash(b, n); break;
    case C_FLOOR: if (ran) fmt_double(b, n, "%.3f", u->floor_ms); else dash(b, n); break;
    case C_XFLOOR: if (ran) fmt_double(b, n, "%.2fx", u->floor_ratio); else dash(b, n); break;
    case C_RSS: fmt_double(b, n, "%.0f", u->rss_mb); break;
    case C_PREC: snprintf(b, n, "%s", ata_precision_name(u->precision)); break;
    case C_RANGE: {
        double med = run_time(o, u);
        if (u->reps > 1 && med > 0) fmt_double(b, n, "%.1f", 100 * (u->time_max_s - u->time_min_s) / med);
        else dash(b, n);
        break;
    }
    case C_COUNT: break;
    }
}

static void put_cell(FILE *f, const char *text, int width, int left, int last)
{
    if (last) fprintf(f, "%s\n", text);
    else if (left) fprintf(f, "%-*s  ", width, text);
    else fprintf(f, "%*s  ", width, text);
}

static void report_title_narrow(FILE *f, const bench_results *R);

/* The Krylov method as the title names it: PCG, BiCGStab, GMRES(m). */
static const char *ksp_title(const bench_opts *o, char *b, size_t n)
{
    ata_pcg_options pc = ata_pcg_defaults();
    if (o->ksp == ATA_KSP_GMRES) snprintf(b, n, "GMRES(%d)", o->restart > 0 ? o->restart : pc.restart);
    else snprintf(b, n, "%s", o->ksp == ATA_KSP_BICGSTAB ? "BiCGStab" : "PCG");
    return b;
}

/* ", factors mixed" (--precision given), ", factors double and mixed
 * (interleaved)" (both), else "". */
static const char *factor_precision(const bench_opts *o, char *b, size_t n)
{
    if (!o->precision_given) snprintf(b, n, "%s", "");
    else if (o->nprec > 1) snprintf(b, n, ", factors double and mixed (repetitions interleaved)");
    else snprintf(b, n, ", factors %s", ata_precision_name(o->precisions[0]));
    return b;
}

/* The restart of a GMRES run (what the CSV and JSON show); 0 for the others. */
static int ksp_restart(const bench_opts *o)
{
    return o->ksp != ATA_KSP_GMRES ? 0 : o->restart > 0 ? o->restart : ata_pcg_defaults().restart;
}

void report_title(FILE *f, const bench_results *R)
{
    const bench_opts *o = R->opt;
    if (o->cmd == CMD_PCG && !o->wide) {
        report_title_narrow(f, R);
        return;
    }
    ata_plan_options pd = ata_plan_defaults();
    char S[32];
    if (o->S) snprintf(S, sizeof S, "%d", o->S);
    else snprintf(S, sizeof S, "auto (R %g)", o->R > 0 ? o->R : pd.R);
    fprintf(f, "%s %s: ", BENCH_NAME, cli_cmd_name(o->cmd));
    if (o->cmd == CMD_INFO) {
        fprintf(f, "DAG of every row (task) of the lower and upper triangles\n");
        return;
    }
    int only_serial = o->npolicies == 1 && o->policies[0] == POLICY_SERIAL;
    if (only_serial) fprintf(f, "serial reference (no context); ");
    else fprintf(f, "backend %s, %d thread%s; ", ata_backend_name(R->backend), R->threads, R->threads == 1 ? "" : "s");
    if (o->cmd == CMD_PCG) {
        ata_pcg_options pc = ata_pcg_defaults();
        char kt[32];
        char fp[96];
        fprintf(f, "%s-%s, rtol %g, maxit %d, reorder %s, %s, S %s, b = 1, x0 = 0, median of %d%s\n",
                ata_precond_name(o->pc), ksp_title(o, kt, sizeof kt), o->rtol > 0 ? o->rtol : pc.rtol, o->maxit > 0 ? o->maxit : pc.maxit,
                ata_reorder_name(o->reorder), o->traversal == ATA_PUSH ? "push" : "pull", S, o->reps,
                factor_precision(o, fp, sizeof fp));
    } else if (o->cmd == CMD_SPTRSV) {
        fprintf(f, "%s triangle, %s diagonal, %s, S %s, b = T*1, median of %d solves after %g ms of untimed ones\n",
                o->uplo == ATA_LOWER ? "lower" : "upper", o->diag == ATA_UNIT ? "unit" : o->diag == ATA_NON_UNIT_INV ? "stored (its reciprocal multiplies)" : "stored",
                o->traversal == ATA_PUSH ? "push (CSC)" : "pull (CSR)", S, o->reps, o->warmup_ms);
    } else {
        fprintf(f, "S %s, median of %d factorisations (analysis included) after %g ms of untimed ones; refactor ms: "
                "median of %d ata_factor_update_values after one ata_factor_setup", S, o->reps, o->warmup_ms, o->reps);
        if (R->backend == ATA_BACKEND_CPU) fprintf(f, " and %d untimed (the CPU's kernel trials)", ATA_FACTOR_TRIALS - 1);
        fputc('\n', f);
    }
    const bench_machine *M = &R->machine;
    fprintf(f, "commit %s, %s, host %s, %s (%d cores), load %.2f %.2f %.2f\n", M->commit, M->date, M->host,
            M->cpu, M->cores, M->load[0], M->load[1], M->load[2]);
    if (o->cmd == CMD_PCG && !o->no_floor && o->ksp != ATA_KSP_CG) {
        fprintf(f, "floor ms/it: none ('-'): the model counts CG's operations, not %s's\n", ata_ksp_name(o->ksp));
    } else if (o->cmd == CMD_PCG && !o->no_floor) {
        fprintf(f, "floor ms/it: a model, not measured traffic: the compulsory bytes of one iteration (A, the L and U\n"
                   "  triangles as the plans store them, the vectors of each operation read or written once) over the\n"
                   "  triad bandwidth at the row's thread count: ");
        if (isfinite(R->triad_gbs[0]))
            fprintf(f, "triad %.1f GB/s at 1 thread", R->triad_gbs[0]);
        else
            fprintf(f, "triad not measured");
        if (isfinite(R->triad_gbs[1]) && R->threads > 1 && R->backend == ATA_BACKEND_CPU)
            fprintf(f, ", %.1f GB/s at %d threads (%.2fx)", R->triad_gbs[1], R->threads, R->triad_gbs[1] / R->triad_gbs[0]);
        fprintf(f, "; x floor = ms/it / floor\n");
    }
    if (o->cmd == CMD_PCG)
        fprintf(f, "peak RSS MB: the process's high-water mark after the row (getrusage ru_maxrss), shared by\n"
                   "  the rows before it in this process: for one policy's own peak run one policy per process\n");
    if (o->default_input) fprintf(f, "default problem: --gen lap3d:100 (3D 7-point Laplacian, 10^6 unknowns)\n");
}

void report_table_header(FILE *f, const bench_results *R)
{
    col_id c[C_COUNT];
    int nc = table_columns(R->opt, c);
    for (int k = 0; k < nc; k++) put_cell(f, cols[c[k]].head, width_of(R, c[k]), cols[c[k]].left, k == nc - 1);
}

void report_table_rows(FILE *f, const bench_results *R, int matrix)
{
    col_id c[C_COUNT];
    int nc = table_columns(R->opt, c);
    char buf[128];
    for (int r = 0; r < R->nruns; r++) {
        const bench_run *u = &R->runs[r];
        if (u->matrix != matrix) continue;
        for (int k = 0; k < nc; k++) {
            cell(buf, sizeof buf, c[k], R, u);
            put_cell(f, buf, width_of(R, c[k]), cols[c[k]].left, k == nc - 1);
        }
    }
}

static void fmt_time(char *b, size_t n, double t)
{
    if (!(t > 0)) snprintf(b, n, "-");
    else if (t < 1e-6) snprintf(b, n, "%.3g ns", t * 1e9);
    else if (t < 1e-3) snprintf(b, n, "%.3g us", t * 1e6);
    else snprintf(b, n, "%.3g ms", t * 1e3);
}

static void put_wrapped(FILE *f, int indent, const char *text);

/* What auto chose and why, per plan (ata_plan_choice), wrapped. */
static void report_choice_lines(FILE *f, const bench_results *R, int matrix)
{
    for (int k = 0; k < R->nruns; k++) {
        const bench_run *u = &R->runs[k];
        if (u->matrix != matrix || u->policy != ATA_POLICY_AUTO) continue;
        for (int q = 0; q < 2; q++) {
            if (!u->choice[q][0]) continue;
            char line[700], prec[32] = "";
            if (R->opt->nprec > 1) snprintf(prec, sizeof prec, "%s, ", ata_precision_name(u->precision));
            snprintf(line, sizeof line, "%s %s%s%s", R->mats[matrix].label, prec,
                     u->ninfo > 1 ? (q ? "U plan, " : "L plan, ") : "", u->choice[q]);
            put_wrapped(f, 2, line);
        }
    }
}

/* S auto's inputs for a matrix (the same for every policy: T_l is the
 * context's, T_u the triangle's), with their spread over the probes; then
 * auto's choices. */
void report_probe_line(FILE *f, const bench_results *R, int matrix)
{
    report_choice_lines(f, R, matrix);
    if (R->opt->S) return;
    for (int k = 0; k < R->nruns; k++) {
        const bench_run *u = &R->runs[k];
        if (u->matrix != matrix || u->ninfo < 1 || !(u->info[0].T_u > 0)) continue;
        const ata_plan_info *I = &u->info[0];
        char l[4][24], t[4][24];
        fmt_time(l[0], sizeof l[0], I->T_l); fmt_time(l[1], sizeof l[1], I->T_l_min); fmt_time(l[2], sizeof l[2], I->T_l_max);
        fmt_time(t[0], sizeof t[0], I->T_u); fmt_time(t[1], sizeof t[1], I->T_u_min); fmt_time(t[2], sizeof t[2], I->T_u_max);
        fprintf(f, "  %s: S auto = max(S_min, R T_l / T_u) = %d (%s); T_l %s [%s .. %s], T_u %s [%s .. %s]%s; "
                   "medians of %d probes, %s\n",
                R->mats[matrix].label, I->S, cli_policy_name(u->policy), l[0], l[1], l[2], t[0], t[1], t[2],
                u->ninfo > 1 ? " (L)" : "", I->probe_reps, I->probe_cached ? "from the probe cache" : "probed now");
        return;
    }
}

/* ---------------------------------------------------------------- */
/* pcg's summary (no --wide): every line within REPORT_COLUMNS        */
/* ---------------------------------------------------------------- */

/* `text` word-wrapped to REPORT_COLUMNS, its first line at column `indent`,
 * the others at `indent` + 2. A word longer than a line stays whole. */
static void put_wrapped(FILE *f, int indent, const char *text)
{
    int col = fprintf(f, "%*s", indent, ""), start = 1;
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        size_t w = strcspn(p, " ");
        if (!w) break;
        if (!start && col + 1 + (int)w > REPORT_COLUMNS) {
            col = fprintf(f, "\n%*s", indent + 2, "") - 1;
            start = 1;
        }
        if (!start) col += fprintf(f, " ");
        col += fprintf(f, "%.*s", (int)w, p);
        start = 0;
        p += w;
    }
    fputc('\n', f);
}

static void report_title_narrow(FILE *f, const bench_results *R)
{
    const bench_opts *o = R->opt;
    ata_plan_options pd = ata_plan_defaults();
    ata_pcg_options pc = ata_pcg_defaults();
    char line[1024], S[32], who[64], kt[32];
    if (o->S) snprintf(S, sizeof S, "%d", o->S);
    else snprintf(S, sizeof S, "auto (R %g)", o->R > 0 ? o->R : pd.R);
    if (o->npolicies == 1 && o->policies[0] == POLICY_SERIAL) snprintf(who, sizeof who, "serial reference (no context)");
    else snprintf(who, sizeof who, "backend %s, %d thread%s", ata_backend_name(R->backend), R->threads,
                  R->threads == 1 ? "" : "s");
    char fp[96];
    snprintf(line, sizeof line, "%s pcg: %s; %s-%s, rtol %g, maxit %d, reorder %s, %s, S %s, b = 1, x0 = 0, "
             "median of %d%s", BENCH_NAME, who, ata_precond_name(o->pc), ksp_title(o, kt, sizeof kt), o->rtol > 0 ? o->rtol : pc.rtol,
             o->maxit > 0 ? o->maxit : pc.maxit, ata_reorder_name(o->reorder),
             o->traversal == ATA_PUSH ? "push" : "pull", S, o->reps, factor_precision(o, fp, sizeof fp));
    put_wrapped(f, 0, line);
    const bench_machine *M = &R->machine;
    snprintf(line, sizeof line, "commit %s, %s, host %s, %s (%d cores), load %.2f %.2f %.2f", M->commit, M->date,
             M->host, M->cpu, M->cores, M->load[0], M->load[1], M->load[2]);
    put_wrapped(f, 0, line);
    if (!o->no_floor && o->ksp != ATA_KSP_CG) {
        snprintf(line, sizeof line, "x floor: none ('-'): the floor model counts CG's operations, not %s's",
                 ata_ksp_name(o->ksp));
        put_wrapped(f, 0, line);
    } else if (!o->no_floor) {
        int n = snprintf(line, sizeof line, "x floor = ms/it / floor, the floor a model: the compulsory bytes of "
                         "an iteration over the triad bandwidth");
        if (isfinite(R->triad_gbs[0])) {
            n += snprintf(line + n, sizeof line - n, " (%.1f GB/s at 1 thread", R->triad_gbs[0]);
            if (isfinite(R->triad_gbs[1]) && R->threads > 1 && R->backend == ATA_BACKEND_CPU)
                n += snprintf(line + n, sizeof line - n, ", %.1f GB/s at %d threads", R->triad_gbs[1], R->threads);
            snprintf(line + n, sizeof line - n, ")");
        } else {
            snprintf(line + n, sizeof line - n, " (triad not measured)");
        }
        put_wrapped(f, 0, line);
    }
    if (o->default_input) fprintf(f, "default problem: --gen lap3d:100 (3D 7-point Laplacian, 10^6 unknowns)\n");
}

/* The summary's row columns: the wide table's cells, and setup s. */
enum { SUM_SETUP = C_COUNT };
typedef struct { int col; const char *head; int width; int left; } sum_col;
static const sum_col sum_cols[] = {
    { C_POLICY, "policy", 8, 1 }, { C_S, "S", 7, 0 }, { C_ITS, "its", 5, 0 },
    { C_RELRES, "relres", 8, 0 }, { SUM_SETUP, "setup s", 8, 0 }, { C_SOLVE, "solve s", 8, 0 },
    { C_PERIT, "ms/it", 8, 0 }, { C_XFLOOR, "x floor", 7, 0 }, { C_STATUS, "status", 6, 1 },
};
#define SUM_NCOLS ((int)(sizeof sum_cols / sizeof sum_cols[0]))

/* The summary's columns for this run: with --precision, its column after
 * the policy (83 columns become 92). */
static int summary_columns(const bench_opts *o, sum_col *c)
{
    int n = 0;
    for (int k = 0; k < SUM_NCOLS; k++) {
        c[n++] = sum_cols[k];
        if (sum_cols[k].col == C_POLICY && o->precision_given) c[n++] = (sum_col){ C_PREC, "prec", 7, 1 };
    }
    return n;
}

/* One block per matrix: "lap3d:100: n .., nnz .., DAG class, levels", a
 * header, one row per policy, and S auto's probes. */
void report_summary(FILE *f, const bench_results *R, int matrix)
{
    const bench_matrix *m = &R->mats[matrix];
    char line[512], buf[128];
    int k0 = -1;
    for (int k = 0; k < R->nruns && k0 < 0; k++)
        if (R->runs[k].matrix == matrix) k0 = k;
    if (k0 < 0) return;
    cell(buf, sizeof buf, C_CLASS, R, &R->runs[k0]);
    int n = snprintf(line, sizeof line, "%s: n %d, nnz %lld, DAG %s", m->label, m->n, m->nnz, buf);
    cell(buf, sizeof buf, C_LEVELS, R, &R->runs[k0]);
    if (strcmp(buf, "-")) snprintf(line + n, sizeof line - n, ", %s levels", buf);
    fputc('\n', f);
    put_wrapped(f, 0, line);
    sum_col sc[SUM_NCOLS + 1];
    const int nc = summary_columns(R->opt, sc);
    fputs("  ", f);
    for (int k = 0; k < nc; k++) put_cell(f, sc[k].head, sc[k].width, sc[k].left, k == nc - 1);
    for (int r = 0; r < R->nruns; r++) {
        const bench_run *u = &R->runs[r];
        if (u->matrix != matrix) continue;
        fputs("  ", f);
        for (int k = 0; k < nc; k++) {
            if (sc[k].col == SUM_SETUP) {
                if (u->reps > 0) fmt_double(buf, sizeof buf, "%.4f", u->analysis_s + u->factor_s);
                else dash(buf, sizeof buf);
            } else {
                cell(buf, sizeof buf, (col_id)sc[k].col, R, u);
            }
            put_cell(f, buf, sc[k].width, sc[k].left, k == nc - 1);
        }
    }
    report_choice_lines(f, R, matrix);
    /* S auto's inputs, as report_probe_line gives them, without the ranges. */
    if (R->opt->S) return;
    for (int k = 0; k < R->nruns; k++) {
        const bench_run *u = &R->runs[k];
        if (u->matrix != matrix || u->ninfo < 1 || !(u->info[0].T_u > 0)) continue;
        const ata_plan_info *I = &u->info[0];
        char l[24], t[24];
        fmt_time(l, sizeof l, I->T_l);
        fmt_time(t, sizeof t, I->T_u);
        snprintf(line, sizeof line, "S auto = max(S_min, R T_l / T_u) = %d (%s): T_l %s, T_u %s%s, medians of %d "
                 "probes, %s", I->S, cli_policy_name(u->policy), l, t, u->ninfo > 1 ? " (L)" : "", I->probe_reps,
                 I->probe_cached ? "from the probe cache" : "probed now");
        put_wrapped(f, 2, line);
        return;
    }
}

void report_summary_end(FILE *f, const bench_results *R)
{
    (void)R;
    fputc('\n', f);
    put_wrapped(f, 0, "setup s = analysis + factorisation. --wide: the full table (the setup split, time per "
                      "phase, floor ms/it, c, f, m, plan MB, peak RSS).");
}

void report_info_table(FILE *f, const bench_results *R)
{
    static const char *head[] = { "matrix", "n", "nnz", "symmetric", "diagonal", "triangle", "tri nnz",
                                  "levels", "max width", "mean width", "m", "class" };
    int w[] = { matrix_width(R), 8, 9, 9, 8, 8, 9, 7, 9, 10, 9, 8 };
    int left[] = { 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1 };
    int nc = 12;
    for (int k = 0; k < nc; k++) put_cell(f, head[k], w[k], left[k], k == nc - 1);
    char b[12][160];
    for (int i = 0; i < R->nmats; i++) {
        const bench_matrix *m = &R->mats[i];
        if (!m->loaded) continue;
        for (int t = 0; t < 2; t++) {
            snprintf(b[0], sizeof b[0], "%s", m->label);
            snprintf(b[1], sizeof b[1], "%d", m->n);
            snprintf(b[2], sizeof b[2], "%lld", m->nnz);
            snprintf(b[3], sizeof b[3], "%s", m->symmetric ? "yes" : "no");
            snprintf(b[4], sizeof b[4], "%s", m->has_diag ? "ok" : "bad");
            snprintf(b[5], sizeof b[5], "%s", t ? "upper" : "lower");
            if (!m->widths[t]) {
                for (int k = 6; k < nc; k++) dash(b[k], sizeof b[k]);
            } else {
                snprintf(b[6], sizeof b[6], "%lld", m->tri_nnz[t]);
                snprintf(b[7], sizeof b[7], "%d", m->nlevels[t]);
                snprintf(b[8], sizeof b[8], "%d", m->max_width[t]);
                snprintf(b[9], sizeof b[9], "%.1f", (double)m->n / m->nlevels[t]);
                snprintf(b[10], sizeof b[10], "%lld", m->m[t]);
                snprintf(b[11], sizeof b[11], "%s", m->dag_class[t]);
            }
            for (int k = 0; k < nc; k++) put_cell(f, b[k], w[k], left[k], k == nc - 1);
        }
        if (!m->has_diag) fprintf(f, "  (%s)\n", m->diag_msg);
    }
}

/* ---------------------------------------------------------------- */
/* Records for CSV and JSON                                          */
/* ---------------------------------------------------------------- */

enum { V_STR, V_INT, V_DBL, V_BOOL };

typedef struct {
    char name[32];
    int kind;
    const char *s;
    long long i;
    double d;
} field;

#define MAX_FIELDS 128

typedef struct {
    field f[MAX_FIELDS];
    int n;
} record;

static void add_s(record *r, const char *name, const char *s)
{
    if (r->n >= MAX_FIELDS) return;
    field *f = &r->f[r->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->kind = V_STR;
    f->s = s ? s : "";
}

static void add_i(record *r, const char *name, long long i)
{
    if (r->n >= MAX_FIELDS) return;
    field *f = &r->f[r->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->kind = V_INT;
    f->i = i;
}

static void add_b(record *r, const char *name, int b)
{
    if (r->n >= MAX_FIELDS) return;
    field *f = &r->f[r->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->kind = V_BOOL;
    f->i = b;
}

static void add_d(record *r, const char *name, double d)
{
    if (r->n >= MAX_FIELDS) return;
    field *f = &r->f[r->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->kind = V_DBL;
    f->d = d;
}

static const char *traversal_name(ata_traversal t) { return t == ATA_PUSH ? "push" : "pull"; }

/* Plan info under a prefix ("" for sptrsv, "L_" / "U_" for pcg). */
static void add_info(record *r, const char *pre, const bench_run *u, int k)
{
    const ata_plan_info *I = &u->info[k];
    int have = u->ninfo > k;
    char nm[32];
#define NM(x) (snprintf(nm, sizeof nm, "%s%s", pre, x), nm)
    if (!have) {
        static const char *names[] = { "S", "atasks", "untracked", "barriers", "c", "f", "plan_analysis_s",
                                       "plan_bytes", "matrix_bytes", "T_l", "T_l_min", "T_l_max", "T_u",
                                       "T_u_min", "T_u_max", "probe_reps", "probe_cached" };
        for (size_t q = 0; q < sizeof names / sizeof names[0]; q++) {
            if (!*pre && !strcmp(names[q], "plan_analysis_s")) continue;
            add_d(r, NM(names[q]), NAN);
        }
        return;
    }
    /* The DAG's levels, width, m and class are the dag_* fields (the
     * bench's own count of the same triangle): not repeated here. */
    add_i(r, NM("S"), I->S);
    add_i(r, NM("atasks"), I->atasks);
    add_i(r, NM("untracked"), I->untracked);
    add_i(r, NM("barriers"), I->barriers);
    add_i(r, NM("c"), I->c);
    add_i(r, NM("f"), I->f);
    if (*pre) add_d(r, NM("plan_analysis_s"), I->analysis_s);     /* sptrsv: analysis_s */
    add_i(r, NM("plan_bytes"), (long long)I->plan_bytes);
    add_i(r, NM("matrix_bytes"), (long long)I->matrix_bytes);
    add_d(r, NM("T_l"), I->T_l);
    add_d(r, NM("T_l_min"), I->T_l_min);
    add_d(r, NM("T_l_max"), I->T_l_max);
    add_d(r, NM("T_u"), I->T_u);
    add_d(r, NM("T_u_min"), I->T_u_min);
    add_d(r, NM("T_u_max"), I->T_u_max);
    add_i(r, NM("probe_reps"), I->probe_reps);
    add_b(r, NM("probe_cached"), I->probe_cached);
#undef NM
}

static void collect_run(const bench_results *R, const bench_run *u, record *r)
{
    const bench_opts *o = R->opt;
    const bench_matrix *m = &R->mats[u->matrix];
    int t = shown_tri(o);
    r->n = 0;
    add_s(r, "command", cli_cmd_name(o->cmd));
    add_s(r, "matrix", m->label);
    add_i(r, "n", m->n);
    add_i(r, "nnz", m->nnz);
    add_b(r, "symmetric", m->symmetric);
    add_s(r, "policy", cli_policy_name(u->policy));
    add_s(r, "backend", u->policy == POLICY_SERIAL ? "serial" : ata_backend_name(R->backend));
    add_i(r, "threads", u->policy == POLICY_SERIAL ? 1 : R->threads);
    add_i(r, "S_requested", o->S);
    add_i(r, "reps", u->reps);
    add_s(r, "status", run_status(u));
    add_s(r, "dag_class", m->dag_class[t]);
    add_i(r, "dag_levels", m->nlevels[t]);
    add_i(r, "dag_max_width", m->max_width[t]);
    add_i(r, "dag_m", m->m[t]);
    if (o->cmd == CMD_PCG) {
        ata_pcg_options pc = ata_pcg_defaults();
        add_s(r, "precond", ata_precond_name(o->pc));
        add_s(r, "reorder", ata_reorder_name(o->reorder));
        add_s(r, "traversal", traversal_name(o->traversal));
        add_d(r, "rtol", o->rtol > 0 ? o->rtol : pc.rtol);
        add_i(r, "maxit", o->maxit > 0 ? o->maxit : pc.maxit);
        add_i(r, "iterations", u->iterations);
        add_d(r, "relres", u->relres);
        add_d(r, "true_relres", u->true_relres);
        add_d(r, "analysis_s", u->analysis_s);
        add_d(r, "factor_s", u->factor_s);
        add_d(r, "solve_s", u->solve_s);
        add_d(r, "solve_s_min", u->time_min_s);
        add_d(r, "solve_s_max", u->time_max_s);
        add_d(r, "per_iter_ms", u->per_iter_ms);
        add_d(r, "L_solve_ms_per_it", u->phase_ms[0]);
        add_d(r, "U_solve_ms_per_it", u->phase_ms[1]);
        add_d(r, "spmv_ms_per_it", u->phase_ms[2]);
        add_d(r, "vec_ms_per_it", u->phase_ms[3]);
        add_d(r, "wall_s", u->wall_s);
        int thr = u->policy == POLICY_SERIAL || R->threads <= 1 ? 0 : 1;
        add_d(r, "triad_gbs", R->triad_gbs[thr]);
        add_d(r, "triad_gbs_1thread", R->triad_gbs[0]);
        add_d(r, "floor_bytes_per_it", u->floor_bytes);
        add_d(r, "floor_ms_per_it", u->floor_ms);
        add_d(r, "floor_ratio", u->floor_ratio);
        add_d(r, "peak_rss_mb", u->rss_mb);
    } else if (o->cmd == CMD_SPTRSV) {
        add_s(r, "uplo", o->uplo == ATA_LOWER ? "lower" : "upper");
        add_s(r, "diag", o->diag == ATA_UNIT ? "unit" : o->diag == ATA_NON_UNIT_INV ? "inverse" : "nonunit");
        add_s(r, "traversal", traversal_name(o->traversal));
        add_i(r, "tri_nnz", m->tri_nnz[t]);
        add_d(r, "analysis_s", u->analysis_s);
        add_d(r, "solve_s", u->solve_s);
        add_d(r, "solve_s_min", u->time_min_s);
        add_d(r, "solve_s_max", u->time_max_s);
        add_d(r, "check", u->check);
    } else {
        add_d(r, "factor_s", u->factor_s);
        add_d(r, "factor_s_min", u->time_min_s);
        add_d(r, "factor_s_max", u->time_max_s);
        add_d(r, "refactor_s", u->refactor_s);
        add_d(r, "check", u->check);
    }
    add_d(r, "speedup_levelset", u->speedup_levelset);
    add_d(r, "speedup_vendor", u->speedup_vendor);
    add_d(r, "speedup_serial", u->speedup_serial);
    if (o->cmd == CMD_PCG) {
        add_info(r, "L_", u, 0);
        add_info(r, "U_", u, 1);
    } else if (o->cmd == CMD_SPTRSV) {
        add_info(r, "", u, 0);
    }
    const bench_machine *M = &R->machine;
    add_s(r, "commit", M->commit);
    add_s(r, "date", M->date);
    add_s(r, "host", M->host);
    add_i(r, "cores", M->cores);
    add_d(r, "load1", M->load[0]);
    /* Free text last: a quoted comma in it cannot shift the columns
     * that a plain comma-splitting reader (awk -F,) takes before it. */
    add_s(r, "cpu", M->cpu);
    add_s(r, "source", m->source);
    add_s(r, "message", u->msg);
    /* Appended after the free text (every earlier column keeps its place;
     * these two never hold a comma, so a comma-splitting reader can count
     * them from the end of the line): pcg's Krylov method and GMRES's
     * restart (0 for cg and bicgstab); pcg only. */
    if (o->cmd == CMD_PCG) {
        add_s(r, "ksp", ata_ksp_name(o->ksp));
        add_i(r, "restart", ksp_restart(o));
    }
    /* Appended last: what the plans chose and why (ata_plan_choice; no
     * commas in it), the L plan's and, for pcg, the U plan's; "" for the
     * serial baseline. */
    add_s(r, "choice", u->choice[0]);
    if (o->cmd == CMD_PCG) add_s(r, "choice_U", u->choice[1]);
    /* Appended after those (every earlier column keeps its place; no
     * comma): pcg's factor precision, double or mixed (--precision). */
    if (o->cmd == CMD_PCG) add_s(r, "precision", ata_precision_name(u->precision));
    /* With the emulated GPU module only (R->emu), appended last: the work
     * it counted in one more solve (emucount.c; counts on the emulator,
     * never times; per emu_unit: solve, factorisation or pcg iteration). */
    if (R->emu) {
        emu_metrics e;
        memset(&e, 0, sizeof e);
        const int ok = u->emu_ok;
        if (ok) emucount_metrics(R, u, &e);
        add_d(r, "emu_rtt_per_level", ok ? e.rtt_per_level : NAN);
        add_d(r, "emu_fences_per_row", ok ? e.fences_per_row : NAN);
        add_d(r, "emu_atomics_per_row", ok ? e.atomics_per_row : NAN);
        add_d(r, "emu_launches", ok ? e.launches : NAN);
        add_d(r, "emu_host_syncs_per_it", ok ? e.host_syncs : NAN);
        add_d(r, "emu_bytes", ok ? e.bytes : NAN);
        add_d(r, "emu_rtt", ok ? e.rtt : NAN);
        add_d(r, "emu_acquires_per_row", ok ? e.acquires_per_row : NAN);
        add_d(r, "emu_atomics_same_addr", ok ? e.same_addr : NAN);
        add_d(r, "emu_atomics_hottest", ok ? e.hottest : NAN);
        add_d(r, "emu_graph_nodes", ok ? e.graph_nodes : NAN);
        add_s(r, "emu_unit", ok ? e.unit : "");
        add_s(r, "emu_shape", u->emu_shape);   /* SMs x blocks per SM x warp */
    }
}

static void collect_info(const bench_results *R, int mi, int t, record *r)
{
    const bench_matrix *m = &R->mats[mi];
    r->n = 0;
    add_s(r, "command", "info");
    add_s(r, "matrix", m->label);
    add_i(r, "n", m->n);
    add_i(r, "ncols", m->ncols);
    add_i(r, "nnz", m->nnz);
    add_b(r, "symmetric", m->symmetric);
    add_s(r, "diagonal", m->has_diag ? "ok" : "bad");
    add_s(r, "triangle", t ? "upper" : "lower");
    add_i(r, "tri_nnz", m->tri_nnz[t]);
    add_i(r, "levels", m->nlevels[t]);
    add_i(r, "max_width", m->max_width[t]);
    add_d(r, "mean_width", m->nlevels[t] ? (double)m->n / m->nlevels[t] : NAN);
    add_i(r, "m", m->m[t]);
    add_s(r, "class", m->dag_class[t]);
    add_s(r, "source", m->source);
    add_s(r, "diagonal_message", m->has_diag ? "" : m->diag_msg);
}

/* Every record of the run, in table order. */
static int nrecords(const bench_results *R)
{
    if (R->opt->cmd != CMD_INFO) return R->nruns;
    return 2 * R->nmats;
}

static int get_record(const bench_results *R, int k, record *r)
{
    if (R->opt->cmd != CMD_INFO) {
        collect_run(R, &R->runs[k], r);
        return 1;
    }
    if (!R->mats[k / 2].loaded) return 0;
    collect_info(R, k / 2, k % 2, r);
    return 1;
}

/* ---------------------------------------------------------------- */
/* CSV                                                               */
/* ---------------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* The shortest of %.15g..%.17g that reads back as the same double. */
static void put_exact(FILE *f, double d)
{
    char b[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, d);
        if (strtod(b, NULL) == d) break;
    }
    fputs(b, f);
}

static void csv_value(FILE *f, const field *x)
{
    if (x->kind == V_STR) csv_str(f, x->s);
    else if (x->kind == V_INT) fprintf(f, "%lld", x->i);
    else if (x->kind == V_BOOL) fputs(x->i ? "yes" : "no", f);
    else if (isfinite(x->d)) put_exact(f, x->d);
}

static int close_checked(FILE *f, const char *flag, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        msg("%s %s: write failed", flag, path);
        return -1;
    }
    return 0;
}

int report_csv(const char *path, const bench_results *R)
{
    FILE *f = fopen(path, "w");
    if (!f) { msg("--csv %s: cannot write", path); return -1; }
    record *r = malloc(sizeof *r);
    if (!r) { fclose(f); msg("--csv %s: out of memory", path); return -1; }
    int header = 0;
    for (int k = 0; k < nrecords(R); k++) {
        if (!get_record(R, k, r)) continue;
        if (!header) {
            for (int q = 0; q < r->n; q++) fprintf(f, "%s%s", q ? "," : "", r->f[q].name);
            fputc('\n', f);
            header = 1;
        }
        for (int q = 0; q < r->n; q++) {
            if (q) fputc(',', f);
            csv_value(f, &r->f[q]);
        }
        fputc('\n', f);
    }
    free(r);
    return close_checked(f, "--csv", path);
}

/* ---------------------------------------------------------------- */
/* JSON                                                              */
/* ---------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double d)
{
    if (isfinite(d)) put_exact(f, d);
    else fputs("null", f);
}

static void json_value(FILE *f, const field *x)
{
    if (x->kind == V_STR) json_str(f, x->s);
    else if (x->kind == V_INT) fprintf(f, "%lld", x->i);
    else if (x->kind == V_BOOL) fputs(x->i ? "true" : "false", f);
    else json_num(f, x->d);
}

/* Level widths of DAGs with more levels than this are left out (the file
 * would grow with n); the SVG still draws them. */
#define JSON_MAX_LEVELS 20000

int report_json(const char *path, const bench_results *R)
{
    const bench_opts *o = R->opt;
    FILE *f = fopen(path, "w");
    if (!f) { msg("--json %s: cannot write", path); return -1; }
    record *r = malloc(sizeof *r);
    if (!r) { fclose(f); msg("--json %s: out of memory", path); return -1; }
    ata_plan_options pd = ata_plan_defaults();
    ata_pcg_options pc = ata_pcg_defaults();
    fprintf(f, "{\n  \"tool\": \"%s\",\n  \"version\": \"%s\",\n  \"command\": ", BENCH_NAME, ATA_VERSION_STRING);
    json_str(f, cli_cmd_name(o->cmd));
    fprintf(f, ",\n  \"argv\": [");
    for (int i = 0; i < o->argc; i++) {
        if (i) fputs(", ", f);
        json_str(f, o->argv[i]);
    }
    const bench_machine *M = &R->machine;
    fprintf(f, "],\n  \"machine\": {\"commit\": ");
    json_str(f, M->commit);
    fprintf(f, ", \"date\": ");
    json_str(f, M->date);
    fprintf(f, ", \"host\": ");
    json_str(f, M->host);
    fprintf(f, ", \"cpu\": ");
    json_str(f, M->cpu);
    fprintf(f, ", \"cores\": %d, \"loadavg\": [", M->cores);
    for (int q = 0; q < 3; q++) {
        if (q) fputs(", ", f);
        json_num(f, M->load[q]);
    }
    fprintf(f, "]},\n  \"backend\": ");
    json_str(f, ata_backend_name(R->backend));
    fprintf(f, ",\n  \"threads\": %d,\n  \"settings\": {\"policies\": [", R->threads);
    for (int k = 0; k < o->npolicies; k++) {
        if (k) fputs(", ", f);
        json_str(f, cli_policy_name(o->policies[k]));
    }
    if (o->S) fprintf(f, "], \"S\": %d, \"R\": ", o->S);
    else fprintf(f, "], \"S\": \"auto\", \"R\": ");
    json_num(f, o->R > 0 ? o->R : pd.R);
    fprintf(f, ", \"traversal\": \"%s\", \"uplo\": \"%s\", \"diag\": \"%s\", \"precond\": \"%s\", "
               "\"reorder\": \"%s\", \"rtol\": ",
            traversal_name(o->traversal), o->uplo == ATA_LOWER ? "lower" : "upper",
            o->diag == ATA_UNIT ? "unit" : o->diag == ATA_NON_UNIT_INV ? "inverse" : "nonunit", ata_precond_name(o->pc),
            ata_reorder_name(o->reorder));
    json_num(f, o->rtol > 0 ? o->rtol : pc.rtol);
    fprintf(f, ", \"maxit\": %d, \"reps\": %d", o->maxit > 0 ? o->maxit : pc.maxit, o->reps);
    if (o->cmd == CMD_SPTRSV || o->cmd == CMD_ILU0) fprintf(f, ", \"warmup_ms\": %g", o->warmup_ms);
    if (o->cmd == CMD_PCG)
        fprintf(f, ", \"precision\": \"%s\"", o->nprec > 1 ? "both" : ata_precision_name(o->precisions[0]));
    if (o->cmd == CMD_PCG) fprintf(f, ", \"ksp\": \"%s\", \"restart\": %d", ata_ksp_name(o->ksp), ksp_restart(o));
    fprintf(f, "},\n  \"matrices\": [");
    int firstm = 1;
    for (int i = 0; i < R->nmats; i++) {
        const bench_matrix *m = &R->mats[i];
        fprintf(f, "%s\n    {\"matrix\": ", firstm ? "" : ",");
        firstm = 0;
        json_str(f, m->label);
        fprintf(f, ", \"source\": ");
        json_str(f, m->source);
        fprintf(f, ", \"generated\": %s, \"loaded\": %s", m->is_gen ? "true" : "false", m->loaded ? "true" : "false");
        if (m->loaded) {
            fprintf(f, ", \"n\": %d, \"ncols\": %d, \"nnz\": %lld, \"symmetric\": %s, \"diagonal\": ", m->n, m->ncols,
                    m->nnz, m->symmetric ? "true" : "false");
            json_str(f, m->has_diag ? "ok" : m->diag_msg);
            fprintf(f, ", \"dags\": [");
            int firstd = 1;
            for (int t = 0; t < 2; t++) {
                if (!m->widths[t]) continue;
                fprintf(f, "%s\n      {\"triangle\": \"%s\", \"tri_nnz\": %lld, \"levels\": %d, \"max_width\": %d, "
                           "\"m\": %lld, \"class\": ",
                        firstd ? "" : ",", t ? "upper" : "lower", m->tri_nnz[t], m->nlevels[t], m->max_width[t], m->m[t]);
                firstd = 0;
                json_str(f, m->dag_class[t]);
                if (m->nlevels[t] <= JSON_MAX_LEVELS) {
                    fprintf(f, ", \"level_widths\": [");
                    for (int l = 0; l < m->nlevels[t]; l++) fprintf(f, "%s%d", l ? "," : "", m->widths[t][l]);
                    fputc(']', f);
                } else {
                    fprintf(f, ", \"level_widths\": null");
                }
                fputc('}', f);
            }
            fprintf(f, "]");
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"results\": [");
    int firstr = 1;
    for (int k = 0; k < nrecords(R); k++) {
        if (!get_record(R, k, r)) continue;
        fprintf(f, "%s\n    {", firstr ? "" : ",");
        firstr = 0;
        for (int q = 0; q < r->n; q++) {
            fprintf(f, "%s\"%s\": ", q ? ", " : "", r->f[q].name);
            json_value(f, &r->f[q]);
        }
        if (o->cmd == CMD_PCG && R->runs[k].history) {
            fprintf(f, ", \"history\": [");
            for (int h = 0; h < R->runs[k].history_len; h++) {
                if (h) fputc(',', f);
                json_num(f, R->runs[k].history[h]);
            }
            fputc(']', f);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ]\n}\n");
    free(r);
    return close_checked(f, "--json", path);
}
