/* ata-bench.c - the ata-bench command: load or generate matrices, run
 * PCG, SpTRSV or ILU0 under every policy asked for, print one table row per
 * (matrix, policy), and write CSV, JSON and SVG on request.
 *
 * A failed run (a breakdown, a missing diagonal, an unavailable policy) is a
 * row with its status and one line on stderr; the other runs go on, and the
 * exit status is 1 at the end. Command-line mistakes stop before any work
 * with exit status 2 (cli.c). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "policy.h"

/* Relative difference above which a policy's answer is reported wrong
 * (pull is expected bitwise equal to the reference, push within 1e-12). */
#define CHECK_TOL 1e-8

typedef struct {
    bench_opts *opt;
    ata_context *ctx;
    bench_results *res;
    int exec_order[POLICY_MAX];     /* the order the policies run in */
    int any_failed;
    int header_done;
    int step, nsteps;
    int triad_done;         /* pcg: the triad was measured (or tried) */
} bench_state;

/* ---------------------------------------------------------------- */
/* Matrices                                                          */
/* ---------------------------------------------------------------- */

static void make_label(const bench_input *in, char *label, size_t n)
{
    if (in->is_gen) {
        /* "lap3d:100,perm=1" -> "lap3d:100+perm=1": no comma in a label,
         * so the CSV's matrix column never needs quotes. */
        snprintf(label, n, "%s", in->text);
        for (char *c = label; *c; c++)
            if (*c == ',') *c = '+';
        return;
    }
    const char *base = strrchr(in->text, '/');
    base = base ? base + 1 : in->text;
    snprintf(label, n, "%s", base);
    static const char *ext[] = { ".gz", ".tar", ".mtx", ".rb", ".rua", ".rsa" };
    for (int again = 1; again;) {
        again = 0;
        for (int k = 0; k < 6; k++) {
            size_t L = strlen(label), e = strlen(ext[k]);
            if (L > e && !strcmp(label + L - e, ext[k])) { label[L - e] = '\0'; again = 1; }
        }
    }
}

static ata_status load_matrix(const bench_input *in, ata_csr **A)
{
    return in->is_gen ? ata_gen_from_spec(in->text, A) : ata_matrix_read(in->text, A);
}

/* The library's DAG class of A's `uplo` triangle: a levelset plan with a
 * unit diagonal (so a missing diagonal does not matter) and S fixed (so no
 * timing probe runs). Leaves "-" when no context or the plan fails. */
static void probe_class(ata_context *ctx, const ata_csr *A, ata_uplo uplo, char *cls, size_t n)
{
    snprintf(cls, n, "-");
    if (!ctx) return;
    ata_plan_options po = ata_plan_defaults();
    po.policy = ATA_POLICY_LEVELSET;
    po.S = 1;
    po.uplo = uplo;
    po.diag = ATA_UNIT;
    po.traversal = ATA_PULL;
    ata_plan *p = NULL;
    ata_plan_info info;
    if (ata_sptrsv_plan_create(ctx, A, &po, &p) == ATA_OK && ata_plan_get_info(p, &info) == ATA_OK
        && info.dag_class)
        snprintf(cls, n, "%s", info.dag_class);
    ata_plan_destroy(p);
}

static void describe_matrix(bench_state *st, bench_matrix *m, const ata_csr *A)
{
    const bench_opts *o = st->opt;
    m->loaded = 1;
    m->n = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    m->symmetric = ata_csr_is_symmetric(A);
    m->has_diag = A->nrows == A->ncols && ata_csr_check_diag(A, m->label) == ATA_OK;
    snprintf(m->diag_msg, sizeof m->diag_msg, "%s", m->has_diag ? "ok" : ata_last_error());
    for (int t = 0; t < 2; t++) snprintf(m->dag_class[t], sizeof m->dag_class[t], "-");
    if (A->nrows != A->ncols) return;
    for (int t = 0; t < 2; t++) {
        int want = o->cmd == CMD_INFO || (o->cmd == CMD_SPTRSV ? (int)o->uplo == t : t == 0);
        if (want)
            dagshape_compute(A, (ata_uplo)t, &m->widths[t], &m->nlevels[t], &m->max_width[t],
                             &m->m[t], &m->tri_nnz[t]);
    }
}

/* ---------------------------------------------------------------- */
/* Runs                                                              */
/* ---------------------------------------------------------------- */

static void fail_run(bench_run *r, ata_status s)
{
    r->status = s;
    snprintf(r->msg, sizeof r->msg, "%s", ata_last_error());
}

static void copy_info(bench_run *r, int k, const ata_plan_info *info)
{
    r->info[k] = *info;
    snprintf(r->info_class[k], sizeof r->info_class[k], "%s", info->dag_class ? info->dag_class : "-");
    r->info[k].dag_class = NULL;        /* not ours to keep */
    if (k + 1 > r->ninfo) r->ninfo = k + 1;
}

static double norm2(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* The library's monitor callback, installed only where it shows something:
 * --monitor prints PETSc's -ksp_monitor line as the solver runs (with the
 * progress line held off), and a progress line on a terminal shows the
 * iteration. */
typedef struct { const char *label; const char *policy; int print; } monitor_ctx;

static void monitor_line(int it, double relres, void *arg)
{
    const monitor_ctx *m = arg;
    progress_iteration(it);
    if (!m->print) return;
    progress_hold();
    if (it == 0)
        printf("%s, policy %s: relative residual (recurrence) ||r_k|| / ||b|| per iteration\n", m->label, m->policy);
    printf("%5d KSP relative residual (recurrence) %.12e\n", it, relres);
    progress_release();
}

/* "[pcg]" alone, "[pcg 2/5]" when the run has several steps. */
static const char *step_tag(const bench_state *st, int step, char *b, size_t n)
{
    if (st->nsteps > 1) snprintf(b, n, "[%s %d/%d]", cli_cmd_name(st->opt->cmd), step, st->nsteps);
    else snprintf(b, n, "[%s]", cli_cmd_name(st->opt->cmd));
    return b;
}

/* pcg's bandwidth floor: the triad at 1 and at the context's threads, once,
 * before the first PCG (not before a file that fails to load), in a child
 * process (its arrays stay out of the peak RSS). */
static void measure_triad(bench_state *st)
{
    bench_results *R = st->res;
    if (st->triad_done || st->opt->no_floor || st->opt->ksp != ATA_KSP_CG) return;   /* the floor is CG's */
    st->triad_done = 1;
    char tag[32];
    progress_set("%s triad bandwidth, 1 and %d threads", step_tag(st, st->step, tag, sizeof tag), R->threads);
    if (floor_triad(R->backend == ATA_BACKEND_CPU ? R->threads : 1, R->triad_gbs))
        msg("triad bandwidth could not be measured: no bandwidth floor");
}

/* The emulated module's counts of one more PCG solve, on a setup of its
 * own (the counts leave the setup out; the solve's copies of b and x and
 * its true residual are in). */
static void pcg_counted(ata_context *ctx, const ata_csr *A, const double *b, const ata_pcg_options *po,
                        bench_run *r)
{
    ata_pcg_options o = *po;
    o.monitor = NULL;
    o.monitor_ctx = NULL;
    ata_pcg_solver *s = NULL;
    double *x = calloc((size_t)A->nrows, sizeof *x);
    ata_pcg_result res;
    memset(&res, 0, sizeof res);
    if (x && ata_pcg_setup(ctx, A, &o, &s) == ATA_OK) {
        emucount_reset();
        if (ata_pcg_solve(s, b, x, &res) == ATA_OK) {
            emucount_take(r);
            r->emu_iterations = res.iterations;
        }
    }
    ata_pcg_result_free(&res);
    ata_pcg_destroy(s);
    free(x);
}

/* One PCG run's repetitions (pcg_begin, pcg_rep per repetition, pcg_end):
 * --precision both runs two of them, their repetitions interleaved. */
typedef struct {
    ata_pcg_options po;
    monitor_ctx mon;
    char name[64];          /* run_name: in the progress line */
    double *b, *x;
    double *t_an, *t_fa, *t_so, *t_ph, *t_wall;    /* t_ph: [phase][rep], ms per iteration */
    int done;
    int stopped;            /* failed: no more repetitions */
} pcg_job;

static void pcg_free(pcg_job *J)
{
    free(J->b);
    free(J->x);
    free(J->t_an);
    free(J->t_fa);
    free(J->t_so);
    free(J->t_ph);
    free(J->t_wall);
}

static int pcg_begin(bench_state *st, const ata_csr *A, bench_run *r, const char *label, pcg_job *J)
{
    const bench_opts *o = st->opt;
    int n = A->nrows, serial = r->policy == POLICY_SERIAL;
    memset(J, 0, sizeof *J);
    ata_pcg_options po = ata_pcg_defaults();
    if (o->rtol > 0) po.rtol = o->rtol;
    if (o->maxit > 0) po.maxit = o->maxit;
    po.precond = o->pc;
    po.reorder = o->reorder;
    if (!serial) po.plan.policy = (ata_policy)r->policy;
    po.plan.S = o->S;
    if (o->R > 0) po.plan.R = o->R;
    po.plan.traversal = o->traversal;
    po.keep_history = o->monitor;
    po.shift = o->shift;
    po.method = o->ksp;
    po.precision = r->precision;
    if (o->restart > 0) po.restart = o->restart;
    run_name(o, r, J->name, sizeof J->name);
    J->mon = (monitor_ctx){ label, cli_policy_name(r->policy), o->monitor && !o->quiet };
    J->po = po;
    J->b = malloc((size_t)n * sizeof *J->b);
    J->x = malloc((size_t)n * sizeof *J->x);
    J->t_an = calloc((size_t)o->reps, sizeof(double));
    J->t_fa = calloc((size_t)o->reps, sizeof(double));
    J->t_so = calloc((size_t)o->reps, sizeof(double));
    J->t_ph = calloc(4 * (size_t)o->reps, sizeof(double));
    J->t_wall = calloc((size_t)o->reps, sizeof(double));
    if (!J->b || !J->x || !J->t_an || !J->t_fa || !J->t_so || !J->t_ph || !J->t_wall) {
        r->status = ATA_ERR_NOMEM;
        snprintf(r->msg, sizeof r->msg, "ata-bench: no memory for the vectors of n = %d", n);
        pcg_free(J);
        J->stopped = 1;
        return -1;
    }
    for (int i = 0; i < n; i++) J->b[i] = 1.0;
    return 0;
}

static void pcg_rep(bench_state *st, const ata_csr *A, bench_run *r, const char *label, pcg_job *J, int rep)
{
    const bench_opts *o = st->opt;
    const int n = A->nrows, serial = r->policy == POLICY_SERIAL;
    if (J->stopped) return;
    ata_pcg_options po = J->po;     /* (the monitor's context is J's, which stays put) */
    if (J->mon.print || progress_active()) {   /* live, through the library's callback */
        po.monitor = monitor_line;
        po.monitor_ctx = &J->mon;
    }
    char tag[32], reps[32] = "";
    if (o->reps > 1) snprintf(reps, sizeof reps, ", rep %d/%d", rep + 1, o->reps);
    progress_set("%s %s policy %s%s", step_tag(st, st->step, tag, sizeof tag), label, J->name, reps);
    progress_iteration(-1);
    memset(J->x, 0, (size_t)n * sizeof *J->x);
    ata_pcg_result res;
    memset(&res, 0, sizeof res);
    /* ata_pcg's setup + solve + destroy, as ata_pcg runs them, with
     * the plans' choices read before the destroy; a setup that fails
     * runs again through ata_pcg, which reports into res. */
    double w0 = now_s();
    ata_pcg_solver *solver = NULL;
    ata_status s = ata_pcg_setup(serial ? NULL : st->ctx, A, &po, &solver);
    if (s == ATA_OK) {
        s = ata_pcg_solve(solver, J->b, J->x, &res);
        const ata_plan *pl[2];
        ata_pcg_plans(solver, &pl[0], &pl[1]);
        for (int q = 0; q < 2; q++) snprintf(r->choice[q], sizeof r->choice[q], "%s", pl[q] ? ata_plan_choice(pl[q]) : "");
        ata_pcg_destroy(solver);
    } else {
        s = ata_pcg(serial ? NULL : st->ctx, A, J->b, J->x, &po, &res);
    }
    const int done = J->done;
    J->t_wall[done] = now_s() - w0;
    if (s == ATA_OK) s = res.status;
    J->t_an[done] = res.analysis_s;
    J->t_fa[done] = res.factor_s;
    J->t_so[done] = res.solve_s;
    const double ph[4] = { res.L_solve_s, res.U_solve_s, res.spmv_s, res.vec_s };
    for (int q = 0; q < 4; q++)
        J->t_ph[q * o->reps + done] = res.iterations > 0 ? 1e3 * ph[q] / res.iterations : NAN;
    J->done++;
    r->iterations = res.iterations;
    r->relres = res.relres;
    if (res.L_info.n > 0 || res.L_info.atasks > 0) copy_info(r, 0, &res.L_info);
    if (res.U_info.n > 0 || res.U_info.atasks > 0) copy_info(r, 1, &res.U_info);
    if (s != ATA_OK || rep == o->reps - 1) {
        free(r->history);
        r->history = NULL;
        r->history_len = 0;
        if (res.history && res.history_len > 0) {
            r->history = malloc((size_t)res.history_len * sizeof *r->history);
            if (r->history) {
                memcpy(r->history, res.history, (size_t)res.history_len * sizeof *r->history);
                r->history_len = res.history_len;
            }
        }
    }
    ata_pcg_result_free(&res);
    if (s != ATA_OK) {
        fail_run(r, s);
        J->stopped = 1;
    }
}

static void pcg_end(bench_state *st, const ata_csr *A, bench_run *r, pcg_job *J)
{
    const bench_opts *o = st->opt;
    const int n = A->nrows, serial = r->policy == POLICY_SERIAL, done = J->done;
    if (!J->t_an) return;      /* pcg_begin failed */
    r->reps = done;
    if (st->res->emu && !serial && r->status == ATA_OK) pcg_counted(st->ctx, A, J->b, &J->po, r);
    r->analysis_s = median(J->t_an, done);
    r->factor_s = median(J->t_fa, done);
    r->solve_s = median_range(J->t_so, done, &r->time_min_s, &r->time_max_s);
    r->per_iter_ms = r->iterations > 0 ? 1e3 * r->solve_s / r->iterations : NAN;
    for (int q = 0; q < 4; q++) r->phase_ms[q] = done > 0 ? median(J->t_ph + q * o->reps, done) : NAN;
    r->wall_s = median(J->t_wall, done);
    /* The floor at the row's thread count: the serial reference runs
     * unfused on one thread; a GPU backend's floor is not the host's. */
    const bench_results *R = st->res;
    int cpu = serial || R->backend == ATA_BACKEND_CPU;
    double gbs = serial || R->threads <= 1 ? R->triad_gbs[0] : R->triad_gbs[1];
    /* The floor models CG's iteration only (floor.c): none for BiCGStab
     * and GMRES, whose vector operations it does not count. */
    if (o->ksp != ATA_KSP_CG) cpu = 0;
    r->floor_bytes = cpu ? floor_pcg_bytes(A, o->pc, !serial, r->ninfo > 0 ? &r->info[0] : NULL,
                                           r->ninfo > 1 ? &r->info[1] : NULL) : NAN;
    r->floor_ms = cpu && gbs > 0 ? 1e3 * r->floor_bytes / (gbs * 1e9) : NAN;
    r->floor_ratio = r->floor_ms > 0 ? r->per_iter_ms / r->floor_ms : NAN;
    r->rss_mb = peak_rss_mb();
    /* The residual as the caller sees it, recomputed from x (not the
     * solver's recurrence). */
    if (done > 0) {
        double *Ax = malloc((size_t)n * sizeof *Ax);
        if (Ax) {
            ata_ref_spmv(A, J->x, Ax);
            for (int i = 0; i < n; i++) Ax[i] = J->b[i] - Ax[i];
            r->true_relres = norm2(Ax, n) / norm2(J->b, n);
            free(Ax);
        }
    }
    pcg_free(J);
}

/* runs[0..nr): one policy's runs, one per precision; with two, each
 * repetition runs the first, then the second (interleaved: a slow spell of
 * a shared machine falls on both). */
static void run_pcg(bench_state *st, const ata_csr *A, bench_run *runs, int nr, const char *label)
{
    measure_triad(st);
    pcg_job J[2];
    for (int k = 0; k < nr; k++) pcg_begin(st, A, &runs[k], label, &J[k]);
    for (int rep = 0; rep < st->opt->reps; rep++)
        for (int k = 0; k < nr; k++) pcg_rep(st, A, &runs[k], label, &J[k], rep);
    for (int k = 0; k < nr; k++) pcg_end(st, A, &runs[k], &J[k]);
}

static double rel_diff(const double *x, const double *y, int n)
{
    double d = 0, m = 0;
    for (int i = 0; i < n; i++) {
        double e = fabs(x[i] - y[i]);
        if (!(e <= d)) d = isnan(e) ? INFINITY : e;
        if (fabs(y[i]) > m) m = fabs(y[i]);
    }
    return m > 0 ? d / m : d;
}

/* What a sptrsv run needs once per matrix. */
typedef struct {
    double *b, *xref, *x;
    ata_status ref_status;
    char ref_msg[512];
    serial_tri ser;         /* the serial baseline's triangle, made lazily */
    int ser_built;
    double ser_build_s;
} sptrsv_setup;

static int sptrsv_prepare(const bench_opts *o, const ata_csr *A, sptrsv_setup *s)
{
    int n = A->nrows;
    memset(s, 0, sizeof *s);
    s->b = malloc((size_t)n * sizeof *s->b);
    s->xref = malloc((size_t)n * sizeof *s->xref);
    s->x = malloc((size_t)n * sizeof *s->x);
    if (!s->b || !s->xref || !s->x) return -1;
    /* b = T * ones, so the exact x is all ones when T is well conditioned. */
    for (int i = 0; i < n; i++) {
        double sum = o->diag == ATA_UNIT ? 1.0 : 0.0;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->col[p];
            if (o->uplo == ATA_LOWER ? j > i : j < i) continue;
            if (j == i && o->diag == ATA_UNIT) continue;
            sum += A->val[p];
        }
        s->b[i] = sum;
    }
    s->ref_status = ata_ref_sptrsv_csr(A, o->uplo, o->diag, s->b, s->xref);
    snprintf(s->ref_msg, sizeof s->ref_msg, "%s", s->ref_status ? ata_last_error() : "");
    return 0;
}

static void sptrsv_release(sptrsv_setup *s)
{
    free(s->b);
    free(s->xref);
    free(s->x);
    serial_tri_free(&s->ser);
}

/* One solve of K columns (K = 1: ata_sptrsv): the plan's, or the serial
 * baseline's column by column. */
static ata_status multi_once(const bench_run *r, sptrsv_setup *su, ata_plan *plan, int n, int K, const double *B,
                             double *X)
{
    if (r->policy != POLICY_SERIAL) return K == 1 ? ata_sptrsv(plan, B, X) : ata_sptrsv_multi(plan, K, B, n, X, n);
    for (int c = 0; c < K; c++) serial_tri_solve(&su->ser, B + (size_t)c * n, X + (size_t)c * n);
    return ATA_OK;
}

/* --warmup: untimed solves for that long first. On the development VM a
 * fresh process ran circuit:20000's solves at 0.12 ms over its first 100
 * and 0.033 after 60 ms of them, so short solves timed at once measured
 * the machine, and whichever policy ran first paid most (RESULTS). */
static ata_status warm_up(const bench_opts *o, const bench_run *r, sptrsv_setup *su, ata_plan *plan, int n,
                          const double *B, double *X)
{
    ata_status s = ATA_OK;
    for (double tw = now_s(); s == ATA_OK && now_s() - tw < 1e-3 * o->warmup_ms;)
        s = multi_once(r, su, plan, n, o->nrhs > 1 ? o->nrhs : 1, B, X);
    return s;
}

/* --nrhs K: columns b, 2b, .., Kb solved together (ata_sptrsv_multi; the
 * serial baseline column by column); every column checked against the
 * scaled reference; the time recorded is per column. */
static void run_sptrsv_multi(bench_state *st, const ata_csr *A, sptrsv_setup *su, bench_run *r, ata_plan *plan,
                             double *t)
{
    const bench_opts *o = st->opt;
    const int n = A->nrows, K = o->nrhs;
    double *B = malloc((size_t)n * K * sizeof *B), *X = malloc((size_t)n * K * sizeof *X);
    ata_status s = ATA_OK;
    if (!B || !X) { r->status = ATA_ERR_NOMEM; goto out; }
    for (int c = 0; c < K; c++)
        for (int i = 0; i < n; i++) B[(size_t)c * n + i] = (c + 1) * su->b[i];
    if ((s = warm_up(o, r, su, plan, n, B, X)) != ATA_OK) { fail_run(r, s); goto out; }
    for (int rep = -1; rep < o->reps; rep++) {
        double t0 = now_s();
        s = multi_once(r, su, plan, n, K, B, X);
        double t1 = now_s();
        if (s != ATA_OK) { fail_run(r, s); break; }
        if (rep < 0) {
            r->check = 0;
            for (int c = 0; c < K && su->ref_status == ATA_OK; c++) {
                for (int i = 0; i < n; i++) su->x[i] = X[(size_t)c * n + i] / (c + 1);
                double d = rel_diff(su->x, su->xref, n);
                if (!(d <= r->check)) r->check = d;
            }
            if (su->ref_status != ATA_OK) r->check = NAN;
            if (r->check > CHECK_TOL) {
                r->status = ATA_ERR_INTERNAL;
                r->wrong = 1;
                snprintf(r->msg, sizeof r->msg, "answer differs from the serial reference by %.3g "
                         "(relative, max norm, worst of %d columns)", r->check, K);
            }
        } else {
            ata_plan_info li;
            if (r->policy != POLICY_SERIAL && ata_plan_get_info(plan, &li) == ATA_OK) t1 = t0 + li.last_solve_s;
            t[r->reps++] = (t1 - t0) / K;
        }
    }
    r->solve_s = median_range(t, r->reps, &r->time_min_s, &r->time_max_s);
out:
    free(B);
    free(X);
}

static void run_sptrsv(bench_state *st, const ata_csr *A, sptrsv_setup *su, bench_run *r, const char *label)
{
    const bench_opts *o = st->opt;
    int n = A->nrows;
    double *t = calloc((size_t)o->reps, sizeof *t);
    ata_plan *plan = NULL;
    if (!t) { r->status = ATA_ERR_NOMEM; goto out; }
    char tag[32];
    progress_set("%s %s policy %s: analysis", step_tag(st, st->step, tag, sizeof tag), label,
                 cli_policy_name(r->policy));
    ata_status s = ATA_OK;
    if (r->policy == POLICY_SERIAL) {
        /* Extracting the triangle is the baseline's analysis (reported, not
         * part of the solve time). */
        if (!su->ser_built) {
            double t0 = now_s();
            s = serial_tri_build(A, o->uplo, o->diag, o->traversal, &su->ser, r->msg, sizeof r->msg);
            su->ser_build_s = now_s() - t0;
            if (s != ATA_OK) { r->status = s; goto out; }
            su->ser_built = 1;
        }
        r->analysis_s = su->ser_build_s;
    } else {
        ata_plan_options po = ata_plan_defaults();
        po.policy = (ata_policy)r->policy;
        po.S = o->S;
        if (o->R > 0) po.R = o->R;
        po.uplo = o->uplo;
        po.diag = o->diag;
        po.traversal = o->traversal;
        double t0 = now_s();
        s = ata_sptrsv_plan_create(st->ctx, A, &po, &plan);
        r->analysis_s = now_s() - t0;
        if (s != ATA_OK) { fail_run(r, s); goto out; }
        ata_plan_info info;
        if (ata_plan_get_info(plan, &info) == ATA_OK) copy_info(r, 0, &info);
    }
    if (o->nrhs > 1) {
        run_sptrsv_multi(st, A, su, r, plan, t);
        goto out;
    }
    /* One untimed solve: warms caches and the pool, and gives the check;
     * auto's plans first time their own solves (ata_plan_choice): those
     * run untimed here too, so the reps time what the plan settled on. */
    if (r->policy == ATA_POLICY_AUTO)
        for (int k = 0; k < ATA_AUTO_TUNE_SOLVES && s == ATA_OK; k++) s = ata_sptrsv(plan, su->b, su->x);
    if (s == ATA_OK) s = warm_up(o, r, su, plan, n, su->b, su->x);
    if (s != ATA_OK) { fail_run(r, s); goto out; }
    for (int rep = -1; rep < o->reps; rep++) {
        if (rep >= 0)
            progress_set("%s %s policy %s: solve %d/%d", step_tag(st, st->step, tag, sizeof tag), label,
                         cli_policy_name(r->policy), rep + 1, o->reps);
        const int counted = st->res->emu && r->policy != POLICY_SERIAL && rep == o->reps - 1;
        if (counted) emucount_reset();
        double t0 = now_s();
        if (r->policy != POLICY_SERIAL) s = ata_sptrsv(plan, su->b, su->x);
        else serial_tri_solve(&su->ser, su->b, su->x);
        double t1 = now_s();
        if (counted && s == ATA_OK) emucount_take(r);
        if (s != ATA_OK) { fail_run(r, s); break; }
        if (rep < 0 && r->policy == POLICY_SERIAL) {
            /* The baseline's loop does not check; its first answer is (as the
             * runtime's solves are) refused when not finite. */
            int bad = -1;
            for (int i = 0; i < n && bad < 0; i++)
                if (!isfinite(su->x[i])) bad = i;
            if (bad >= 0) {
                r->status = ATA_ERR_NONFINITE;
                snprintf(r->msg, sizeof r->msg, "serial baseline: row %d: x = %g is not finite (overflow, or NaN/Inf in b)",
                         bad, su->x[bad]);
                break;
            }
        }
        if (rep < 0) {
            r->check = su->ref_status == ATA_OK ? rel_diff(su->x, su->xref, n) : NAN;
            if (r->check > CHECK_TOL) {
                r->status = ATA_ERR_INTERNAL;
                r->wrong = 1;
                snprintf(r->msg, sizeof r->msg, "answer differs from the serial reference by %.3g "
                         "(relative, max norm)", r->check);
            }
        } else {
            /* Runtime policies: the plan's own timing, which leaves out a GPU
             * backend's copies of b and x (they would pull GPU ratios to 1). */
            ata_plan_info li;
            if (r->policy != POLICY_SERIAL && ata_plan_get_info(plan, &li) == ATA_OK) t1 = t0 + li.last_solve_s;
            t[r->reps++] = t1 - t0;
        }
    }
    r->solve_s = median_range(t, r->reps, &r->time_min_s, &r->time_max_s);
out:
    if (plan) {
        snprintf(r->choice[0], sizeof r->choice[0], "%s", ata_plan_choice(plan));
        ata_plan_info info;     /* what ran (auto may have settled on one worker) */
        if (ata_plan_get_info(plan, &info) == ATA_OK) r->info[0].threads_used = info.threads_used;
    }
    ata_plan_destroy(plan);
    free(t);
}

static double val_diff(const ata_csr *X, const ata_csr *Y)
{
    if (!X || !Y || X->nnz != Y->nnz || X->nrows != Y->nrows) return NAN;
    if (memcmp(X->col, Y->col, (size_t)X->nnz * sizeof *X->col)) return NAN;
    return rel_diff(X->val, Y->val, X->nnz);
}

typedef struct {
    ata_csr *ref;           /* ata_ref_ilu0 of A */
    ata_status ref_status;
    double sens;            /* ilu0_sensitivity, once asked for (0: not yet) */
} ilu0_setup;

/* How far rounding alone moves this matrix's ILU0 factors: the reference
 * factorisation of A with every value moved by one unit in the last place
 * (alternating signs), against the reference, relative, max norm. The
 * vendor's factorisation sums in another order (and with FMA), so its
 * factors differ by about this much: bcsstk13's small pivots turn 1 ulp
 * into 6.5e-8, and cuSPARSE's csrilu02 differed from the reference there by
 * 1.3e-8 (H200, 2026-11-26). ATA's policies keep the reference's order and
 * CHECK_TOL. */
static double ilu0_sensitivity(const ata_csr *A, ilu0_setup *su)
{
    if (su->sens > 0) return su->sens;
    ata_csr *P = NULL;
    double d = NAN;
    if (ata_csr_copy(A, &P) == ATA_OK) {
        for (long long k = 0; k < (long long)P->nnz; k++) P->val[k] = nextafter(P->val[k], k & 1 ? INFINITY : -INFINITY);
        if (ata_ref_ilu0(P) == ATA_OK) d = val_diff(P, su->ref);
    }
    ata_csr_free(P);
    su->sens = d > 0 ? d : DBL_MIN;
    return su->sens;
}

/* The numeric phase alone, as a user of the split API refactors each step:
 * ata_factor_setup once (untimed), then ata_factor_update_values with A's
 * own values (on the CPU after ATA_FACTOR_TRIALS - 1 untimed: with setup's,
 * its kernel trials), median of the repetitions (t: scratch of o->reps). The whole
 * call (ata_spilu0, the table's factor ms) is mostly analysis on a GPU: the
 * first H200 run, lap3d:100, spent ~2.5 ms of ~170 in the kernels. NaN when
 * the setup refuses (its error is not this run's). */
static double time_refactor(bench_state *st, const ata_csr *A, const ata_plan_options *po, double *t, bench_run *r)
{
    ata_factor_options fo = ata_factor_defaults();
    fo.plan = *po;
    ata_factor *F = NULL;
    if (ata_factor_setup(st->ctx, A, &fo, &F) != ATA_OK) { ata_factor_destroy(F); return NAN; }
    if (po->policy == ATA_POLICY_AUTO) {    /* what auto chose, said under the table */
        const ata_plan *L, *U;
        ata_factor_plans(F, &L, &U);
        snprintf(r->choice[0], sizeof r->choice[0], "%srefactor's L solve plan: %s",
                 st->res->backend == ATA_BACKEND_CPU ? "one factorisation (factor ms): the serial loop (the "
                 "analysis costs more than it saves); " : "", L ? ata_plan_choice(L) : "-");
    }
    /* the CPU's kernel trials (setup's factorisation the first): untimed */
    for (int k = 1; st->res->backend == ATA_BACKEND_CPU && k < ATA_FACTOR_TRIALS; k++)
        if (ata_factor_update_values(F, A->val) != ATA_OK) break;
    int n = 0;
    for (int rep = 0; rep < st->opt->reps; rep++) {
        const double t0 = now_s();
        if (ata_factor_update_values(F, A->val) != ATA_OK) break;
        t[n++] = now_s() - t0;
    }
    ata_factor_destroy(F);
    return n ? median(t, n) : NAN;
}

/* One factorisation as the ilu0 command times it: ata_spilu0, or for the
 * serial baseline the same job, factors in a new matrix, A kept (the copy
 * timed too: it was not, and auto, which runs this loop on a copy, read
 * 1.3-1.6x "the serial loop"). */
static ata_status ilu0_once(bench_state *st, const ata_csr *A, const ata_plan_options *po, const bench_run *r,
                            ata_csr **LU)
{
    *LU = NULL;
    if (r->policy != POLICY_SERIAL) return ata_spilu0(st->ctx, A, po, LU);
    ata_status s = ata_csr_copy(A, LU);
    return s == ATA_OK ? ata_ref_ilu0(*LU) : s;
}

static void run_ilu0(bench_state *st, const ata_csr *A, ilu0_setup *su, bench_run *r, const char *label)
{
    const bench_opts *o = st->opt;
    double *t = calloc((size_t)o->reps, sizeof *t);
    if (!t) { r->status = ATA_ERR_NOMEM; return; }
    ata_plan_options po = ata_plan_defaults();
    if (r->policy != POLICY_SERIAL) po.policy = (ata_policy)r->policy;
    po.S = o->S;
    if (o->R > 0) po.R = o->R;
    /* --warmup, as sptrsv's: untimed factorisations first (a failure
     * stops them; the first timed one reports it). lap2d:200's auto/serial
     * read 5.3 and 4.7 with auto first in a fresh process, 0.30 with the
     * serial loop first (make bench's recheck). */
    for (double tw = now_s(); now_s() - tw < 1e-3 * o->warmup_ms;) {
        ata_csr *LU;
        const ata_status s = ilu0_once(st, A, &po, r, &LU);
        ata_csr_free(LU);
        if (s != ATA_OK) break;
    }
    for (int rep = 0; rep < o->reps; rep++) {
        char tag[32];
        progress_set("%s %s policy %s: rep %d/%d", step_tag(st, st->step, tag, sizeof tag), label,
                     cli_policy_name(r->policy), rep + 1, o->reps);
        ata_csr *LU = NULL;
        const double t0 = now_s();
        const ata_status s = ilu0_once(st, A, &po, r, &LU);
        const double t1 = now_s();
        if (s != ATA_OK) { fail_run(r, s); ata_csr_free(LU); break; }
        t[r->reps++] = t1 - t0;
        if (rep == 0) {
            r->check = su->ref_status == ATA_OK ? val_diff(LU, su->ref) : NAN;
            double tol = CHECK_TOL;
            if (r->policy == ATA_POLICY_VENDOR && r->check > tol) tol = fmax(tol, 10 * ilu0_sensitivity(A, su));
            if (r->check > tol || (su->ref_status == ATA_OK && isnan(r->check))) {
                r->status = ATA_ERR_INTERNAL;
                r->wrong = 1;
                snprintf(r->msg, sizeof r->msg, "factors differ from the serial reference by %.3g "
                         "(relative, max norm; allowed %.3g)", r->check, tol);
            } else if (tol > CHECK_TOL) {   /* said in CSV/JSON's message */
                snprintf(r->msg, sizeof r->msg, "%.3g from the reference: within 10x the factors' "
                         "movement under a 1-ulp change of A (%.3g)", r->check, tol / 10);
            }
        }
        ata_csr_free(LU);
        if (r->status != ATA_OK) break;
    }
    r->factor_s = median_range(t, r->reps, &r->time_min_s, &r->time_max_s);
    r->refactor_s = r->policy == POLICY_SERIAL ? r->factor_s : NAN;   /* the reference has no analysis */
    if (r->policy != POLICY_SERIAL && r->status == ATA_OK) r->refactor_s = time_refactor(st, A, &po, t, r);
    /* The emulated module's counts of one more factorisation (the S-auto
     * probes of the first are cached by now; the analysis's uploads are in) */
    if (st->res->emu && r->policy != POLICY_SERIAL && r->status == ATA_OK) {
        ata_csr *LU = NULL;
        emucount_reset();
        if (ata_spilu0(st->ctx, A, &po, &LU) == ATA_OK) emucount_take(r);
        ata_csr_free(LU);
    }
    free(t);
}

/* ---------------------------------------------------------------- */
/* Per matrix                                                        */
/* ---------------------------------------------------------------- */

/* Speedups against the baselines of the same precision. */
static void fill_speedups(const bench_opts *o, bench_results *R, int mi)
{
    double base[2][3] = { { NAN, NAN, NAN }, { NAN, NAN, NAN } };     /* [precision] levelset, vendor, serial */
    for (int k = 0; k < R->nruns; k++) {
        bench_run *u = &R->runs[k];
        if (u->matrix != mi || u->status != ATA_OK || u->reps == 0) continue;
        double t = run_time(o, u);
        double *b = base[u->precision == ATA_PRECISION_MIXED];
        if (u->policy == ATA_POLICY_LEVELSET) b[0] = t;
        if (u->policy == ATA_POLICY_VENDOR) b[1] = t;
        if (u->policy == POLICY_SERIAL) b[2] = t;
    }
    for (int k = 0; k < R->nruns; k++) {
        bench_run *u = &R->runs[k];
        if (u->matrix != mi) continue;
        double t = run_time(o, u);
        const double *b = base[u->precision == ATA_PRECISION_MIXED];
        int ok = u->status == ATA_OK && u->reps > 0 && t > 0;
        u->speedup_levelset = ok && b[0] > 0 ? b[0] / t : NAN;
        u->speedup_vendor = ok && b[1] > 0 ? b[1] / t : NAN;
        u->speedup_serial = ok && b[2] > 0 ? b[2] / t : NAN;
    }
}

/* One line per distinct reason on a matrix, naming every policy it hit:
 * "bcsstk13: PCG stopped (levelset, ca, la): indefinite preconditioner: ..." */
static void report_failures(bench_state *st, const bench_matrix *m, const bench_run *runs, int nruns)
{
    const char *what = st->opt->cmd == CMD_ILU0 ? "ILU0 failed" : st->opt->cmd == CMD_SPTRSV ? "SpTRSV failed"
                     : st->opt->ksp == ATA_KSP_GMRES ? "GMRES stopped"
                     : st->opt->ksp == ATA_KSP_BICGSTAB ? "BiCGStab stopped" : "PCG stopped";
    for (int k = 0; k < nruns; k++) {
        const bench_run *r = &runs[k];
        if (r->status == ATA_OK) continue;
        int said = 0;
        for (int j = 0; j < k; j++)
            said |= runs[j].status == r->status && runs[j].wrong == r->wrong;
        if (said) continue;
        char pols[256] = "";
        for (int j = k; j < nruns; j++)
            if (runs[j].status == r->status && runs[j].wrong == r->wrong)
            {
                char name[64];
                snprintf(pols + strlen(pols), sizeof pols - strlen(pols), "%s%s", pols[0] ? ", " : "",
                         run_name(st->opt, &runs[j], name, sizeof name));
            }
        if (r->wrong)
            msg("%s: %s (%s): %s", m->label, what, pols, r->msg);
        else
            msg("%s: %s (%s): %s%s%s", m->label, what, pols, ata_status_string(r->status), r->msg[0] ? ": " : "",
                r->msg);
    }
}

static void run_matrix(bench_state *st, int mi)
{
    bench_opts *o = st->opt;
    bench_results *R = st->res;
    bench_matrix *m = &R->mats[mi];
    const bench_input *in = &o->inputs[mi];
    char tag[32];
    progress_set("%s %s: %s", step_tag(st, st->step + 1, tag, sizeof tag), m->label,
                 in->is_gen ? "generating" : "reading");
    ata_csr *A = NULL;
    ata_status s = load_matrix(in, &A);
    if (s != ATA_OK) {
        /* The library's detail usually names the file already. */
        const char *flag = in->is_gen ? "--gen" : "--matrix", *detail = ata_last_error();
        if (strstr(detail, in->text)) msg("%s: %s: %s", flag, ata_status_string(s), detail);
        else msg("%s %s: %s: %s", flag, in->text, ata_status_string(s), detail);
        st->any_failed = 1;
        st->step += o->cmd == CMD_INFO ? 1 : o->npolicies * o->nprec;
        return;
    }
    describe_matrix(st, m, A);
    R->nloaded++;
    if (o->cmd == CMD_INFO) {
        st->step++;
        for (int t = 0; t < 2; t++) probe_class(st->ctx, A, (ata_uplo)t, m->dag_class[t], sizeof m->dag_class[t]);
        ata_csr_free(A);
        return;
    }
    if (o->cmd == CMD_PCG && o->ksp == ATA_KSP_CG && !m->symmetric)
        msg("%s: matrix is not symmetric; PCG expects a symmetric positive definite matrix", m->label);

    sptrsv_setup ss;
    ilu0_setup is = { NULL, ATA_OK, 0 };
    int setup_ok = 1;
    if (o->cmd == CMD_SPTRSV && A->nrows == A->ncols) setup_ok = sptrsv_prepare(o, A, &ss) == 0;
    if (o->cmd == CMD_ILU0 && A->nrows == A->ncols) {
        is.ref_status = ata_csr_copy(A, &is.ref);
        if (is.ref_status == ATA_OK) is.ref_status = ata_ref_ilu0(is.ref);
    }
    /* A policy's runs, one per precision (pcg's --precision both: two), side
     * by side in the table. */
    int first = R->nruns;
    const int np = o->nprec;
    for (int k = 0; k < o->npolicies; k++)
        for (int q = 0; q < np; q++) {
            bench_run *r = &R->runs[R->nruns++];
            memset(r, 0, sizeof *r);
            r->matrix = mi;
            r->policy = o->policies[k];
            r->precision = o->precisions[q];
            r->check = NAN;
            r->relres = r->true_relres = r->per_iter_ms = NAN;
            r->wall_s = r->floor_bytes = r->floor_ms = r->floor_ratio = r->rss_mb = NAN;
        }
    for (int e = 0; e < o->npolicies; e++) {
        bench_run *r = &R->runs[first + st->exec_order[e] * np];
        st->step += np;
        if (A->nrows != A->ncols || !setup_ok) {
            for (int q = 0; q < np; q++) {
                r[q].status = A->nrows != A->ncols ? ATA_ERR_NOT_SQUARE : ATA_ERR_NOMEM;
                if (A->nrows != A->ncols) snprintf(r[q].msg, sizeof r[q].msg, "%s is %d x %d", m->label, A->nrows, A->ncols);
                else snprintf(r[q].msg, sizeof r[q].msg, "no memory for the vectors of n = %d", A->nrows);
            }
        } else if (o->cmd == CMD_PCG) {
            run_pcg(st, A, r, np, m->label);
        } else if (o->cmd == CMD_SPTRSV) {
            run_sptrsv(st, A, &ss, r, m->label);
        } else {
            run_ilu0(st, A, &is, r, m->label);
        }
        for (int q = 0; q < np; q++)
            if (r[q].status != ATA_OK) st->any_failed = 1;
    }
    /* The DAG class comes from the library (its thresholds); a serial row
     * or ILU0 (which returns no plan info) borrows it from a probe. */
    int tri = o->cmd == CMD_SPTRSV ? (int)o->uplo : 0;
    for (int k = first; k < R->nruns; k++)
        if (R->runs[k].ninfo > 0 && strcmp(R->runs[k].info_class[0], "-")) {
            snprintf(m->dag_class[tri], sizeof m->dag_class[tri], "%s", R->runs[k].info_class[0]);
            break;
        }
    if (!strcmp(m->dag_class[tri], "-") && A->nrows == A->ncols)
        probe_class(st->ctx, A, (ata_uplo)tri, m->dag_class[tri], sizeof m->dag_class[tri]);
    fill_speedups(o, R, mi);
    report_failures(st, m, &R->runs[first], R->nruns - first);
    if (o->cmd == CMD_SPTRSV && A->nrows == A->ncols) sptrsv_release(&ss);
    ata_csr_free(is.ref);
    ata_csr_free(A);
    if (!o->quiet) {
        progress_hold();
        /* pcg: a summary block per matrix within 100 columns, or with
         * --wide (and for the other commands) the full table. */
        int wide = o->cmd != CMD_PCG || o->wide;
        /* Title and header come with the first rows: a run whose every
         * input failed to load prints no empty table. */
        if (!st->header_done) {
            report_title(stdout, R);
            if (wide && !o->monitor) report_table_header(stdout, R);
            st->header_done = 1;
        }
        if (wide) {
            if (o->monitor) report_table_header(stdout, R);   /* the residuals were printed live */
            report_table_rows(stdout, R, mi);
            report_probe_line(stdout, R, mi);
        } else {
            report_summary(stdout, R, mi);
        }
        if (R->emu) emucount_lines(stdout, R, mi);
        progress_release();
    }
}

/* ---------------------------------------------------------------- */
/* main                                                              */
/* ---------------------------------------------------------------- */

static int check_output(const char *flag, const char *path)
{
    if (!path) return 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        msg("%s %s: cannot write: %s", flag, path, strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

/* write: the one input, as every other command would solve it (a spec's
 * ,perm=SEED applied by the generator), to o->write_path as Matrix Market
 * coordinate real general (%.17g, so every value reads back bit for bit).
 * The output's folder is checked before a large matrix is generated. */
static int write_matrix(const bench_opts *o)
{
    const bench_input *in = &o->inputs[0];
    const char *path = o->write_path;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (access(path, F_OK) == 0 ? access(path, W_OK) != 0 : access(dir, W_OK | X_OK) != 0) {
        msg("write %s: cannot write: %s", path, strerror(errno));
        return EXIT_RUN_FAILED;
    }
    ata_csr *A = NULL;
    double t0 = now_s();
    ata_status s = load_matrix(in, &A);
    if (s != ATA_OK) {
        const char *flag = in->is_gen ? "--gen" : "--matrix", *detail = ata_last_error();
        if (strstr(detail, in->text)) msg("%s: %s: %s", flag, ata_status_string(s), detail);
        else msg("%s %s: %s: %s", flag, in->text, ata_status_string(s), detail);
        return EXIT_RUN_FAILED;
    }
    double t1 = now_s();
    s = ata_matrix_write_mtx(path, A);
    double t2 = now_s();
    if (s != ATA_OK) {
        msg("write %s: %s: %s", path, ata_status_string(s), ata_last_error());
        ata_csr_free(A);
        return EXIT_RUN_FAILED;
    }
    if (!o->quiet)
        printf("%s: n %d, nnz %d (the whole matrix, Matrix Market coordinate real general) -> %s "
               "(%s %.1f s, written in %.1f s)\n", in->text, A->nrows, A->nnz, path,
               in->is_gen ? "generated in" : "read in", t1 - t0, t2 - t1);
    ata_csr_free(A);
    return 0;
}

static int needs_context(const bench_opts *o)
{
    if (o->cmd == CMD_INFO) return 1;
    for (int k = 0; k < o->npolicies; k++)
        if (o->policies[k] != POLICY_SERIAL) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int child = floor_triad_child();       /* the triad's own process (floor.c) */
    if (child >= 0) return child;
    bench_opts o;
    int rc = cli_parse(argc, argv, &o);
    if (rc) {
        cli_free(&o);
        return rc < 0 ? 0 : rc;
    }
    /* Files first: a missing input or an unwritable output is found before
     * minutes of benchmarking, not after. */
    int bad = 0;
    for (int i = 0; i < o.ninputs; i++)
        if (!o.inputs[i].is_gen && access(o.inputs[i].text, R_OK) != 0) {
            msg("--matrix %s: cannot read: %s", o.inputs[i].text, strerror(errno));
            bad = 1;
        }
    if (!bad)
        bad = check_output("--csv", o.csv) || check_output("--json", o.json) || check_output("--plot", o.plot);
    if (bad) {
        cli_free(&o);
        return EXIT_RUN_FAILED;
    }
    if (o.cmd == CMD_WRITE) {
        rc = write_matrix(&o);
        cli_free(&o);
        return rc;
    }

    bench_results R;
    memset(&R, 0, sizeof R);
    R.opt = &o;
    machine_collect(&R.machine);
    bench_state st;
    memset(&st, 0, sizeof st);
    st.opt = &o;
    st.res = &R;
    if (needs_context(&o)) {
        ata_context_options co = ata_context_defaults();
        co.backend = o.cmd == CMD_INFO ? ATA_BACKEND_CPU : o.backend;
        co.threads = o.cmd == CMD_INFO ? 1 : o.threads;
        ata_status s = ata_context_create(&co, &st.ctx);
        if (s != ATA_OK) {
            msg("--backend %s: cannot start the backend: %s: %s", ata_backend_name(co.backend),
                ata_status_string(s), ata_last_error());
            cli_free(&o);
            return EXIT_RUN_FAILED;
        }
        R.backend = ata_context_backend(st.ctx);
        R.threads = ata_context_threads(st.ctx);
        R.emu = R.backend != ATA_BACKEND_CPU && emucount_init();
    } else {
        R.backend = ATA_BACKEND_CPU;
        R.threads = 1;
    }
    R.triad_gbs[0] = R.triad_gbs[1] = NAN;
    /* 'all' compares with the vendor library where there is one, and
     * leaves out what only the CPU backend runs. */
    if (o.policy_all && (R.backend == ATA_BACKEND_CUDA || R.backend == ATA_BACKEND_HIP)) {
        int have = 0, kept = 0;
        for (int k = 0; k < o.npolicies; k++) {
            have |= o.policies[k] == ATA_POLICY_VENDOR;
            if (o.policies[k] == POLICY_SERIAL || !(policy_get((ata_policy)o.policies[k])->flags & POLICY_CPU_ONLY))
                o.policies[kept++] = o.policies[k];
        }
        o.npolicies = kept;
        if (!have && o.npolicies < POLICY_MAX) o.policies[o.npolicies++] = ATA_POLICY_VENDOR;
    }
    /* --policy all runs the baselines first; a list runs in its own order
     * (make bench's recheck turns it around between processes). */
    int ne = 0;
    static const int baselines[] = { ATA_POLICY_LEVELSET, ATA_POLICY_VENDOR, POLICY_SERIAL };
    for (int b = 0; b < 3 && o.policy_all; b++)
        for (int k = 0; k < o.npolicies; k++)
            if (o.policies[k] == baselines[b]) st.exec_order[ne++] = k;
    for (int k = 0; k < o.npolicies; k++) {
        int base = 0;
        for (int b = 0; b < 3 && o.policy_all; b++) base |= o.policies[k] == baselines[b];
        if (!base) st.exec_order[ne++] = k;
    }

    R.nmats = o.ninputs;
    R.mats = calloc((size_t)o.ninputs, sizeof *R.mats);
    R.runs = calloc((size_t)o.ninputs * (size_t)o.npolicies * (size_t)o.nprec, sizeof *R.runs);
    if (!R.mats || !R.runs) {
        msg("out of memory");
        ata_context_destroy(st.ctx);
        cli_free(&o);
        return EXIT_RUN_FAILED;
    }
    for (int i = 0; i < o.ninputs; i++) {
        make_label(&o.inputs[i], R.mats[i].label, sizeof R.mats[i].label);
        R.mats[i].source = o.inputs[i].text;
        R.mats[i].is_gen = o.inputs[i].is_gen;
    }
    st.nsteps = o.cmd == CMD_INFO ? o.ninputs : o.ninputs * o.npolicies * o.nprec;

    progress_start(!o.quiet);
    for (int i = 0; i < o.ninputs; i++) run_matrix(&st, i);
    progress_stop();
    if (!o.quiet && o.cmd == CMD_PCG && !o.wide && st.header_done) report_summary_end(stdout, &R);
    if (!o.quiet && o.cmd == CMD_INFO && R.nloaded > 0) {
        report_title(stdout, &R);
        report_info_table(stdout, &R);
    }
    fflush(stdout);

    if (o.csv && report_csv(o.csv, &R)) st.any_failed = 1;
    if (o.json && report_json(o.json, &R)) st.any_failed = 1;
    if (o.plot && svg_write(o.plot, &R)) st.any_failed = 1;

    for (int k = 0; k < R.nruns; k++) free(R.runs[k].history);
    for (int i = 0; i < R.nmats; i++) {
        free(R.mats[i].widths[0]);
        free(R.mats[i].widths[1]);
    }
    free(R.runs);
    free(R.mats);
    ata_context_destroy(st.ctx);
    cli_free(&o);
    return st.any_failed ? EXIT_RUN_FAILED : 0;
}
