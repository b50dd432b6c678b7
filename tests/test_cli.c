/* test_cli.c - the ata-bench command, run as a user runs it: help, usage
 * errors, bad files, and small runs whose CSV and JSON are read back.
 * The binary is $ATA_BUILD/ata-bench (ATA_BUILD from tests/run.sh). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"

static char bench[4096];
static char tmpdir[256];

typedef struct {
    int rc;             /* exit status; -1 if killed by a signal */
    char *out, *err;
} run_result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t k;
    while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 >= cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    if (b) b[n] = '\0';
    return b;
}

/* A shell command line, stdout and stderr each into a file of tmpdir. */
static run_result run_shell(const char *line)
{
    char cmd[20480];
    snprintf(cmd, sizeof cmd, "%s >'%s/out' 2>'%s/err' </dev/null", line, tmpdir, tmpdir);
    int st = system(cmd);
    run_result r;
    r.rc = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char path[512];
    snprintf(path, sizeof path, "%s/out", tmpdir);
    r.out = slurp(path);
    snprintf(path, sizeof path, "%s/err", tmpdir);
    r.err = slurp(path);
    return r;
}

/* ata-bench with `args`. */
static run_result run(const char *args)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s' %s", bench, args);
    return run_shell(cmd);
}

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static const char *tmp_path(const char *name)
{
    static char p[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("ATA_BUILD");
    snprintf(bench, sizeof bench, "%s/ata-bench", b && *b ? b : "build");
    if (access(bench, X_OK) != 0) {
        fprintf(stderr, "test_cli: %s not found or not executable (build it first: make)\n", bench);
        return -1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ata-test-cli-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "test_cli: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A usage error: exit status 2 and exactly one line on stderr holding `word`. */
static void expect_usage_error(const char *args, const char *word)
{
    run_result r = run(args);
    if (r.rc != 2 || count_lines(r.err) != 1 || !strstr(r.err, word))
        fail_msg("ata-bench %s: expected exit 2 and one stderr line naming '%s'; got exit %d, stderr:\n%s",
                 args, word, r.rc, r.err);
    run_free(&r);
}

static void test_no_args(void **state)
{
    (void)state;
    run_result r = run("");
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "Usage"));
    /* One short line, not the whole --help. */
    const char *nl = strchr(r.err, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
    assert_non_null(strstr(r.err, "--help"));
    run_free(&r);
}

static const char *all_flags[] = {
    "--matrix", "--gen", "--policy", "--serial", "--backend", "--threads", "--S", "--R", "--traversal",
    "--uplo", "--diag", "--pc", "--reorder", "--rtol", "--maxit", "--monitor", "--reps", "--csv", "--json",
    "--plot", "--quiet", "--help", "--version", "--precond", "--shift", "--nrhs", "--no-floor", "--wide",
    "--ksp", "--restart", "--precision", "--warmup",
};

static void test_help_lists_every_flag(void **state)
{
    (void)state;
    run_result r = run("--help");
    assert_int_equal(r.rc, 0);
    for (size_t k = 0; k < sizeof all_flags / sizeof all_flags[0]; k++) {
        char needle[64];
        snprintf(needle, sizeof needle, "  %s ", all_flags[k]);     /* a flag at the start of a help line */
        if (!strstr(r.out, needle)) fail_msg("--help does not list %s", all_flags[k]);
    }
    static const char *words[] = { "pcg", "sptrsv", "ilu0", "info", "levelset", "syncfree", "ca", "la",
                                   "greedy", "vendor", "serial", "all", "auto", "cpu", "cuda", "hip",
                                   "lap2d", "lap3d", "circuit", "write", "Exit status" };
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (!strstr(r.out, words[k])) fail_msg("--help does not mention %s", words[k]);
    run_free(&r);
    /* Every command's own help is the same text. */
    r = run("sptrsv --help");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "--uplo"));
    run_free(&r);
}

/* Every listed flag is accepted by a command it applies to (the help text
 * lists nothing the parser rejects). */
static void test_listed_flags_are_accepted(void **state)
{
    (void)state;
    static const char *cases[] = {
        "pcg --matrix x.mtx", "pcg --gen lap2d:4", "pcg --policy levelset,ca", "pcg --serial",
        "pcg --backend cpu", "pcg --threads 2", "pcg --S auto", "pcg --S 64", "pcg --R 50",
        "pcg --traversal push", "sptrsv --uplo upper", "sptrsv --diag unit", "pcg --pc ic0",
        "pcg --reorder rcm", "pcg --rtol 1e-8", "pcg --maxit 10", "pcg --monitor", "ilu0 --reps 2",
        "info --csv x.csv", "info --json x.json", "info --plot x.svg", "pcg --quiet", "pcg --policy=all",
        "pcg --pc jacobi", "pcg --precond ic0", "pcg --shift positive-definite", "pcg --shift nonzero",
        "sptrsv --nrhs 4", "pcg --no-floor", "pcg --wide", "pcg --ksp cg", "pcg --ksp bicgstab",
        "pcg --ksp bcgs", "pcg --ksp gmres", "pcg --ksp=GMRES", "pcg --restart 10",
        "write --gen lap2d:4 x.mtx", "write --matrix x.mtx y.mtx --quiet",
        "pcg --precision double", "pcg --precision mixed", "pcg --precision both", "pcg --precision=MIXED",
        "sptrsv --warmup 0", "sptrsv --warmup 2.5", "ilu0 --warmup 0",
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[256];
        snprintf(args, sizeof args, "%s --help", cases[k]);
        run_result r = run(args);
        if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
        run_free(&r);
    }
}

static void test_version(void **state)
{
    (void)state;
    run_result r = run("--version");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, ATA_VERSION_STRING));
    assert_non_null(strstr(r.out, "cpu"));
    run_free(&r);
}

static void test_bad_flag(void **state)
{
    (void)state;
    expect_usage_error("pcg --bogus", "--bogus");
    expect_usage_error("pcg --bogus=3", "--bogus");
    expect_usage_error("pcg stray", "stray");
    expect_usage_error("bogus", "bogus");
    expect_usage_error("--gen lap2d:4", "--gen");       /* no command */
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_usage_error("pcg --threads -3", "--threads");
    expect_usage_error("pcg --threads 2x", "--threads");
    expect_usage_error("pcg --policy bogus", "bogus");
    expect_usage_error("pcg --policy levelset,", "--policy");
    expect_usage_error("pcg --S x", "--S");
    expect_usage_error("pcg --S 0", "--S");
    expect_usage_error("pcg --R -1", "--R");
    expect_usage_error("pcg --rtol abc", "--rtol");
    expect_usage_error("pcg --rtol nan", "--rtol");
    expect_usage_error("pcg --maxit 0", "--maxit");
    expect_usage_error("pcg --reps 0", "--reps");
    expect_usage_error("pcg --backend foo", "--backend");
    expect_usage_error("pcg --reorder xyz", "--reorder");
    expect_usage_error("pcg --pc ilu1", "--pc");
    expect_usage_error("pcg --precond ilu1", "--precond");
    expect_usage_error("pcg --shift inblocks", "--shift");
    expect_usage_error("sptrsv --nrhs 0", "--nrhs");
    expect_usage_error("sptrsv --warmup -1", "--warmup");
    expect_usage_error("sptrsv --warmup 5ms", "--warmup");
    expect_usage_error("sptrsv --warmup nan", "--warmup");
    expect_usage_error("pcg --warmup 10", "--warmup");       /* sptrsv and ilu0 only */
    expect_usage_error("pcg --nrhs 4", "--nrhs");          /* sptrsv only */
    expect_usage_error("sptrsv --wide", "--wide");         /* pcg only */
    expect_usage_error("pcg --wide=1", "--wide");          /* a switch */
    expect_usage_error("pcg --traversal sideways", "--traversal");
    expect_usage_error("sptrsv --uplo middle", "--uplo");
    expect_usage_error("sptrsv --diag maybe", "--diag");
    expect_usage_error("pcg --gen lap9d:3", "--gen");
    expect_usage_error("pcg --gen ''", "--gen");
    expect_usage_error("pcg --threads", "--threads");      /* missing value */
    expect_usage_error("pcg --monitor=1", "--monitor");    /* a switch takes none */
    expect_usage_error("sptrsv --rtol 1e-3", "--rtol");    /* pcg only */
    expect_usage_error("pcg --uplo upper", "--uplo");      /* sptrsv only */
    expect_usage_error("info --policy ca --gen lap2d:4", "--policy");
    expect_usage_error("info", "info");                    /* no input */
    expect_usage_error("pcg --serial --policy ca", "--serial");
    /* --ksp: a usage error that names the flag and every choice */
    static const char *ksp_words[] = { "--ksp", "nonsense", "cg", "bicgstab", "gmres" };
    for (size_t k = 0; k < sizeof ksp_words / sizeof ksp_words[0]; k++)
        expect_usage_error("pcg --ksp nonsense", ksp_words[k]);
    expect_usage_error("pcg --ksp", "--ksp");              /* missing value */
    expect_usage_error("pcg --ksp ''", "--ksp");
    expect_usage_error("pcg --restart 0", "--restart");
    expect_usage_error("pcg --restart -5", "--restart");
    expect_usage_error("pcg --restart 3x", "--restart");
    expect_usage_error("sptrsv --ksp gmres", "--ksp");     /* pcg only */
    expect_usage_error("ilu0 --restart 10", "--restart");
    /* --precision: pcg only, three values */
    static const char *prec_words[] = { "--precision", "single", "double", "mixed", "both" };
    for (size_t k = 0; k < sizeof prec_words / sizeof prec_words[0]; k++)
        expect_usage_error("pcg --precision single", prec_words[k]);
    expect_usage_error("pcg --precision", "--precision");  /* missing value */
    expect_usage_error("sptrsv --precision mixed", "--precision");
    expect_usage_error("ilu0 --precision both", "--precision");
    /* write: one input, one output file, plain text, no report flags */
    expect_usage_error("write --gen lap2d:4", "output file");
    expect_usage_error("write --gen lap2d:4,lap2d:5 x.mtx", "one input");
    expect_usage_error("write x.mtx", "one input");
    expect_usage_error("write --gen lap2d:4 x.mtx y.mtx", "y.mtx");
    expect_usage_error("write --gen lap2d:4 x.mtx.gz", "x.mtx.gz");
    expect_usage_error("write --gen lap2d:4 x.mtx --csv y.csv", "--csv");
    expect_usage_error("write --gen lap2d:4 x.mtx --policy ca", "--policy");
    expect_usage_error("pcg --gen lap2d:4 x.mtx", "x.mtx");   /* an operand is write's only */
}

static void test_missing_file(void **state)
{
    (void)state;
    run_result r = run("pcg --matrix /nonexistent/dir/zzz_missing.mtx --backend cpu --threads 1");
    assert_true(r.rc != 0 && r.rc != -1);
    assert_int_equal(count_lines(r.err), 1);
    if (!strstr(r.err, "zzz_missing.mtx")) fail_msg("message does not name the file: %s", r.err);
    assert_string_equal(r.out, "");     /* nothing ran */
    run_free(&r);
}

static void test_unwritable_output(void **state)
{
    (void)state;
    run_result r = run("pcg --gen lap2d:4 --backend cpu --csv /nonexistent/dir/out.csv");
    assert_int_equal(r.rc, 1);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "/nonexistent/dir/out.csv"));
    run_free(&r);
}

static void test_bad_matrix_files(void **state)
{
    (void)state;
    char **list = tu_list("bad");
    if (!list) skip();
    int n = 0;
    for (char **p = list; *p; p++, n++) {
        char args[4200];
        snprintf(args, sizeof args, "pcg --matrix '%s' --backend cpu --threads 1 --policy levelset --quiet", *p);
        run_result r = run(args);
        /* A clean run failure (1), not a usage error, crash or success. */
        if (r.rc != 1) fail_msg("%s: expected exit 1, got %d; stderr: %s", *p, r.rc, r.err);
        const char *base = strrchr(*p, '/') ? strrchr(*p, '/') + 1 : *p;
        char stem[256];
        snprintf(stem, sizeof stem, "%s", base);
        char *dot = strchr(stem, '.');
        if (dot) *dot = '\0';
        if (!strstr(r.err, stem)) fail_msg("%s: message does not name the file: %s", *p, r.err);
        run_free(&r);
    }
    tu_free_list(list);
    assert_true(n > 0);
}

/* Length of the CSV field at p: up to the next unquoted comma or the end of
 * the line (a quoted field may hold commas and doubled quotes). */
static size_t csv_span(const char *p)
{
    if (*p != '"') return strcspn(p, ",\n");
    const char *q = p + 1;
    while (*q && !(*q == '"' && q[1] != '"')) q += *q == '"' ? 2 : 1;
    return (size_t)(q - p) + (*q == '"');
}

/* The value of column `name` in CSV line `line` (a quoted value is given
 * with its quotes; the header has none). */
static int csv_field(const char *header, const char *line, const char *name, char *out, size_t n)
{
    int col = 0, want = -1;
    const char *p = header;
    size_t len = strlen(name);
    while (*p && *p != '\n') {
        size_t w = csv_span(p);
        if (w == len && !strncmp(p, name, len)) want = col;
        col++;
        p += w;
        if (*p == ',') p++;
    }
    if (want < 0) return -1;
    p = line;
    for (int c = 0; c < want && *p && *p != '\n'; c++) {
        p += csv_span(p);
        if (*p == ',') p++;
    }
    size_t w = csv_span(p);
    snprintf(out, n, "%.*s", (int)w, p);
    return 0;
}

/* Lines of a file, split in place. */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    for (char *s = text; *s && n < max;) {
        lines[n++] = s;
        char *e = strchr(s, '\n');
        if (!e) break;
        *e = '\0';
        s = e + 1;
    }
    return n;
}

static void test_small_pcg_run(void **state)
{
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "pcg --gen lap2d:20 --policy levelset,ca --backend cpu --threads 2 --wide --csv '%s' "
             "--json '%s'", tmp_path("pcg.csv"), tmp_path("pcg.json"));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    assert_non_null(strstr(r.out, "levelset"));
    assert_non_null(strstr(r.out, "vs levelset"));
    run_free(&r);

    char *csv = slurp(tmp_path("pcg.csv"));
    char *lines[8];
    int nl = split_lines(csv, lines, 8);
    assert_int_equal(nl, 3);
    static const char *columns[] = { "matrix", "n", "nnz", "policy", "status", "iterations", "relres",
                                     "analysis_s", "factor_s", "solve_s", "solve_s_min", "solve_s_max",
                                     "per_iter_ms", "L_plan_bytes", "speedup_levelset", "dag_class",
                                     "dag_levels", "dag_m", "L_S", "L_atasks", "L_c", "L_f", "U_atasks",
                                     "L_T_l", "L_T_l_min", "L_T_l_max", "L_T_u_min", "L_T_u_max",
                                     "commit", "date", "host", "cpu", "cores", "load1" };
    /* No column twice, and none that repeats another under a second name. */
    {
        char hdr[4096];
        snprintf(hdr, sizeof hdr, ",%s,", lines[0]);
        for (char *c = hdr + 1, *e; (e = strchr(c, ',')); c = e + 1) {
            char name[80];
            snprintf(name, sizeof name, ",%.*s,", (int)(e - c), c);
            char *first = strstr(hdr, name);
            if (first && strstr(first + 1, name)) fail_msg("CSV column %s appears twice", name);
        }
        static const char *dups[] = { ",plan_mb,", ",solve_ms,", ",L_levels,", ",L_m,", ",L_class," };
        for (size_t k = 0; k < sizeof dups / sizeof *dups; k++)
            if (strstr(hdr, dups[k])) fail_msg("CSV repeats a quantity as %s", dups[k]);
    }
    char v[2][64], its[2][64], st[64];
    for (size_t k = 0; k < sizeof columns / sizeof columns[0]; k++)
        if (csv_field(lines[0], lines[1], columns[k], v[0], sizeof v[0]))
            fail_msg("CSV has no column %s; header: %s", columns[k], lines[0]);
    for (int row = 0; row < 2; row++) {
        csv_field(lines[0], lines[1 + row], "policy", v[row], sizeof v[row]);
        csv_field(lines[0], lines[1 + row], "iterations", its[row], sizeof its[row]);
        csv_field(lines[0], lines[1 + row], "status", st, sizeof st);
        assert_string_equal(st, "ok");
    }
    assert_string_equal(v[0], "levelset");
    assert_string_equal(v[1], "ca");
    assert_true(atoi(its[0]) > 0);
    assert_string_equal(its[0], its[1]);    /* policies change scheduling, not arithmetic */
    csv_field(lines[0], lines[1], "n", v[0], sizeof v[0]);
    assert_string_equal(v[0], "400");
    csv_field(lines[0], lines[1], "speedup_levelset", v[0], sizeof v[0]);
    assert_true(atof(v[0]) == 1.0);
    free(csv);

    char *json = slurp(tmp_path("pcg.json"));
    assert_non_null(strstr(json, "\"policy\": \"levelset\""));
    assert_non_null(strstr(json, "\"policy\": \"ca\""));
    assert_non_null(strstr(json, "\"level_widths\": ["));
    const char *p1 = strstr(json, "\"iterations\": ");
    assert_non_null(p1);
    const char *p2 = strstr(p1 + 1, "\"iterations\": ");
    assert_non_null(p2);
    assert_null(strstr(p2 + 1, "\"iterations\": "));
    assert_int_equal(atoi(p1 + 14), atoi(its[0]));
    assert_int_equal(atoi(p2 + 14), atoi(its[0]));
    /* Balanced braces and brackets: a cheap well-formedness check. */
    int depth = 0, in_str = 0;
    for (const char *c = json; *c; c++) {
        if (in_str) { if (*c == '\\') c++; else if (*c == '"') in_str = 0; continue; }
        if (*c == '"') in_str = 1;
        else if (*c == '{' || *c == '[') depth++;
        else if (*c == '}' || *c == ']') { depth--; assert_true(depth >= 0); }
    }
    assert_int_equal(depth, 0);
    free(json);
}

/* pcg's bandwidth floor, wall time and peak RSS: the floor's bytes are the
 * model's exact count for lap2d:20 (n 400, nnz 1920): A 4*401 + 12*1920,
 * ILU0's L plan stores the strict lower triangle (760), U the upper with
 * the diagonal (1160), 17 vectors of 8n bytes fused on the CPU backend; the
 * serial reference runs unfused (3 vectors more) and its triangles are
 * counted as the plans would store them. */
static void test_pcg_floor_columns(void **state)
{
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "pcg --gen lap2d:20 --policy serial,levelset --backend cpu --threads 2 --wide --csv '%s'",
             tmp_path("floor.csv"));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    assert_non_null(strstr(r.out, "floor ms/it"));
    assert_non_null(strstr(r.out, "x floor"));
    assert_non_null(strstr(r.out, "peak RSS MB"));
    assert_non_null(strstr(r.out, "GB/s at 1 thread"));
    assert_non_null(strstr(r.out, "a model"));
    run_free(&r);
    char *csv = slurp(tmp_path("floor.csv"));
    char *lines[4];
    assert_int_equal(split_lines(csv, lines, 4), 3);
    const double vec = 8.0 * 400, A = 4.0 * 401 + 12.0 * 1920, L = 4.0 * 401 + 12.0 * 760, U = 4.0 * 401 + 12.0 * 1160;
    const double want[2] = { A + L + U + 20 * vec, A + L + U + 17 * vec };     /* serial, levelset */
    for (int row = 0; row < 2; row++) {
        char v[64];
        double d[8];
        static const char *names[] = { "floor_bytes_per_it", "floor_ms_per_it", "floor_ratio", "per_iter_ms",
                                       "triad_gbs", "triad_gbs_1thread", "peak_rss_mb", "wall_s" };
        for (int k = 0; k < 8; k++) {
            if (csv_field(lines[0], lines[1 + row], names[k], v, sizeof v))
                fail_msg("CSV has no column %s; header: %s", names[k], lines[0]);
            d[k] = atof(v);
            if (!(d[k] > 0)) fail_msg("row %d: %s = '%s', expected > 0", row, names[k], v);
        }
        if (d[0] != want[row]) fail_msg("row %d: floor_bytes_per_it %.0f, expected %.0f", row, d[0], want[row]);
        /* floor = bytes / triad bandwidth; ratio = ms/it / floor */
        assert_true(fabs(d[1] - 1e3 * d[0] / (d[4] * 1e9)) <= 1e-9 * d[1]);
        assert_true(fabs(d[2] - d[3] / d[1]) <= 1e-9 * d[2]);
        if (row == 0) assert_true(d[4] == d[5]);        /* serial: the 1-thread triad */
        assert_true(d[6] > 1 && d[6] < 4096);            /* MB: a process, not bytes or KB */
        char solve[64];
        csv_field(lines[0], lines[1 + row], "solve_s", solve, sizeof solve);
        assert_true(d[7] >= atof(solve));                /* the whole call contains the solve */
    }
    free(csv);
    /* --no-floor: no triad, the floor columns empty, RSS still there */
    snprintf(args, sizeof args, "pcg --gen lap2d:20 --policy levelset --backend cpu --threads 2 --no-floor --csv '%s'",
             tmp_path("nofloor.csv"));
    r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    assert_null(strstr(r.out, "GB/s"));
    run_free(&r);
    csv = slurp(tmp_path("nofloor.csv"));
    assert_int_equal(split_lines(csv, lines, 4), 2);
    char v[64];
    assert_int_equal(csv_field(lines[0], lines[1], "floor_ms_per_it", v, sizeof v), 0);
    assert_string_equal(v, "");
    assert_int_equal(csv_field(lines[0], lines[1], "peak_rss_mb", v, sizeof v), 0);
    assert_true(atof(v) > 0);
    free(csv);
}

static void test_monitor_and_serial(void **state)
{
    (void)state;
    run_result r = run("pcg --gen lap2d:10 --serial --monitor");
    if (r.rc != 0) fail_msg("exit %d, stderr: %s", r.rc, r.err);
    /* printed live by the library's monitor callback, named for what it is */
    assert_non_null(strstr(r.out, "    0 KSP relative residual (recurrence) 1.0"));
    assert_non_null(strstr(r.out, "serial"));
    run_free(&r);
    /* --shift and --precond jacobi reach the solver; --nrhs solves columns together */
    char path[4096], args[4400];
    snprintf(path, sizeof path, "%s/real/LFAT5.mtx", tu_matrix_dir());
    if (access(path, R_OK) == 0) {
        snprintf(args, sizeof args, "pcg --matrix '%s' --shift positive-definite --backend cpu --threads 2", path);
        r = run(args);
        if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
        run_free(&r);
        snprintf(args, sizeof args, "pcg --matrix '%s' --backend cpu --threads 2", path);
        r = run(args);   /* without the shift: fails, and the message names the flag */
        assert_int_not_equal(r.rc, 0);
        assert_non_null(strstr(r.err, "--shift positive-definite"));
        run_free(&r);
    } else {
        printf("SKIPPED: %s not found\n", path);
    }
    r = run("pcg --gen lap2d:20 --precond jacobi --backend cpu --threads 2");
    if (r.rc != 0) fail_msg("--precond jacobi: exit %d, stderr: %s", r.rc, r.err);
    assert_non_null(strstr(r.out, "jacobi"));
    run_free(&r);
    r = run("sptrsv --gen lap2d:30 --nrhs 5 --backend cpu --threads 2 --reps 2 --policy levelset,serial");
    if (r.rc != 0) fail_msg("--nrhs: exit %d, stderr: %s", r.rc, r.err);
    run_free(&r);
}

static void test_sptrsv_ilu0_info_runs(void **state)
{
    (void)state;
    char args[1024];
    snprintf(args, sizeof args, "sptrsv --gen lap2d:30,circuit:500 --policy all --backend cpu --threads 2 --reps 2 "
             "--csv '%s' --plot '%s'", tmp_path("s.csv"), tmp_path("s.svg"));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    run_free(&r);
    char *csv = slurp(tmp_path("s.csv"));
    char *lines[20];
    int nl = split_lines(csv, lines, 20);
    assert_int_equal(nl, 1 + 2 * 7);    /* 2 matrices x 7 CPU policies (auto among them) */
    for (int k = 1; k < nl; k++) {
        char st[64], chk[64];
        csv_field(lines[0], lines[k], "status", st, sizeof st);
        csv_field(lines[0], lines[k], "check", chk, sizeof chk);
        assert_string_equal(st, "ok");
        assert_true(atof(chk) <= 1e-12);
    }
    free(csv);
    char *svg = slurp(tmp_path("s.svg"));
    assert_non_null(strstr(svg, "<svg"));
    assert_non_null(strstr(svg, "</svg>"));
    assert_non_null(strstr(svg, "circuit:500"));
    free(svg);

    r = run("ilu0 --gen lap2d:15 --policy levelset,ca,serial --backend cpu --threads 2");
    if (r.rc != 0) fail_msg("ilu0: exit %d, stderr: %s", r.rc, r.err);
    assert_non_null(strstr(r.out, "vs serial"));
    run_free(&r);

    r = run("info --gen lap2d:10,circuit:300");
    if (r.rc != 0) fail_msg("info: exit %d, stderr: %s", r.rc, r.err);
    assert_non_null(strstr(r.out, "lower"));
    assert_non_null(strstr(r.out, "upper"));
    assert_non_null(strstr(r.out, "circuit:300"));
    run_free(&r);
}

/* The CSV rows of a pcg run, policy by policy: iterations, relres and
 * true_relres (CSV doubles are the shortest text that reads back as the
 * same double, so equal text is equal bits). */
static void pcg_numbers(const char *input, const char *csv_name, char out[2][3][64])
{
    char args[1024];
    snprintf(args, sizeof args, "pcg %s --policy levelset,serial --backend cpu --threads 2 --no-floor --quiet --csv '%s'",
             input, tmp_path(csv_name));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    run_free(&r);
    char *csv = slurp(tmp_path(csv_name));
    char *lines[4];
    assert_int_equal(split_lines(csv, lines, 4), 3);
    static const char *cols[] = { "iterations", "relres", "true_relres" };
    for (int row = 0; row < 2; row++) {
        char st[64];
        assert_int_equal(csv_field(lines[0], lines[1 + row], "status", st, sizeof st), 0);
        assert_string_equal(st, "ok");
        for (int c = 0; c < 3; c++)
            assert_int_equal(csv_field(lines[0], lines[1 + row], cols[c], out[row][c], sizeof out[row][c]), 0);
    }
    assert_true(atoi(out[0][0]) > 0);
    free(csv);
}

/* write: a generated matrix (permuted, so ,perm=SEED is what is written)
 * read back with --matrix solves to the same bits as the --gen run; the
 * file read and written again is byte for byte the same file; bad paths are
 * one stderr line and exit 1, and leave no file behind. */
static void test_write_roundtrip(void **state)
{
    (void)state;
    static const char *specs[] = { "circuit:3000,perm=2", "lap2d:30x7" };
    for (int k = 0; k < 2; k++) {
        char args[1024];
        snprintf(args, sizeof args, "write --gen %s '%s'", specs[k], tmp_path("w.mtx"));
        run_result r = run(args);
        if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
        assert_non_null(strstr(r.out, "w.mtx"));
        assert_string_equal(r.err, "");
        run_free(&r);
        char *text = slurp(tmp_path("w.mtx"));
        assert_true(!strncmp(text, "%%MatrixMarket matrix coordinate real general\n", 46));
        char gen[2][3][64], file[2][3][64], in[600];
        snprintf(in, sizeof in, "--gen %s", specs[k]);
        pcg_numbers(in, "wg.csv", gen);
        snprintf(in, sizeof in, "--matrix '%s'", tmp_path("w.mtx"));
        pcg_numbers(in, "wf.csv", file);
        for (int row = 0; row < 2; row++)
            for (int c = 0; c < 3; c++)
                if (strcmp(gen[row][c], file[row][c]))
                    fail_msg("%s: row %d column %d: --gen %s, --matrix %s", specs[k], row, c, gen[row][c], file[row][c]);
        snprintf(args, sizeof args, "write --matrix '%s' '%s' --quiet", tmp_path("w.mtx"), tmp_path("w2.mtx"));
        r = run(args);
        assert_int_equal(r.rc, 0);
        assert_string_equal(r.out, "");
        run_free(&r);
        char *again = slurp(tmp_path("w2.mtx"));
        if (strcmp(text, again)) fail_msg("%s: the file read and written again differs", specs[k]);
        free(text);
        free(again);
    }
    run_result r = run("write --gen lap2d:4 /nonexistent/dir/w.mtx");
    assert_int_equal(r.rc, 1);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "/nonexistent/dir/w.mtx"));
    assert_string_equal(r.out, "");
    run_free(&r);
    char args[1024];
    snprintf(args, sizeof args, "write --matrix /nonexistent/zzz_in.mtx '%s'", tmp_path("w3.mtx"));
    r = run(args);
    assert_int_equal(r.rc, 1);
    assert_int_equal(count_lines(r.err), 1);
    assert_non_null(strstr(r.err, "zzz_in.mtx"));
    run_free(&r);
    assert_int_equal(access(tmp_path("w3.mtx"), F_OK), -1);
}

/* A breakdown is a row with its reason, one line on stderr, exit 1, and
 * the other policies still run. */
/* --ksp reaches the library and every report names the method. Until
 * BiCGStab and GMRES are built (issue 23), the library answers
 * ATA_ERR_UNSUPPORTED: the run must then fail cleanly (exit 1, status
 * 'unsupported', one stderr line naming the method), like any failed solve.
 * Once they are built the same test passes with status 'ok' (exit 0, a
 * converged residual): either is accepted, but the ksp and restart columns
 * must name what was asked in both cases, and nothing else is. That the
 * method and the restart reach the solver: today the library's own message
 * names the method; once built, GMRES(1) must take more iterations than
 * GMRES(30) (or not converge), which CG run in its place would not. */
static void test_pcg_ksp(void **state)
{
    (void)state;
    static const struct { const char *arg, *ksp, *title; int restart; } cases[] = {
        { "", "cg", "ilu0-PCG", 0 },
        { "--ksp gmres", "gmres", "ilu0-GMRES(30)", 30 },
        { "--ksp gmres --restart 7", "gmres", "ilu0-GMRES(7)", 7 },
        { "--ksp bicgstab", "bicgstab", "ilu0-BiCGStab", 0 },
        { "--ksp bcgs --restart 7", "bicgstab", "ilu0-BiCGStab", 0 },   /* PETSc's name; restart ignored */
        { "--ksp gmres --restart 1", "gmres", "ilu0-GMRES(1)", 1 },
    };
    int its_ok[2] = { -1, -1 };         /* lap2d:20 serial row: GMRES(30), GMRES(1) (-2: not converged) */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int gm = !strcmp(cases[k].arg, "--ksp gmres") ? 0 : cases[k].restart == 1 ? 1 : -1;
        char args[1200];
        snprintf(args, sizeof args, "pcg --gen lap2d:20,circuit:300 %s --policy serial,levelset --backend cpu "
                 "--threads 2 --no-floor --csv '%s' --json '%s'", cases[k].arg, tmp_path("ksp.csv"), tmp_path("ksp.json"));
        unlink(tmp_path("ksp.csv"));
        run_result r = run(args);
        if (!strstr(r.out, cases[k].title)) fail_msg("ata-bench %s: the summary does not name %s:\n%s", args,
                                                     cases[k].title, r.out);
        char *csv = slurp(tmp_path("ksp.csv"));
        char *lines[8];
        int nl = split_lines(csv, lines, 8);
        if (nl != 5) fail_msg("ata-bench %s: %d CSV lines, expected 5 (exit %d, stderr %s)", args, nl, r.rc, r.err);
        /* the new columns come after every existing one (then the plans' choices) */
        const char *tail = strstr(lines[0], ",message,ksp,restart,choice,choice_U,precision");
        if (!tail || tail[strlen(",message,ksp,restart,choice,choice_U,precision")])
            fail_msg("CSV header does not end in message,ksp,restart,choice,choice_U,precision: %s", lines[0]);
        for (int row = 1; row < nl; row++) {     /* no comma inside a choice: the last two fields split plainly */
            char ch[600];
            csv_field(lines[0], lines[row], "choice", ch, sizeof ch);
            if (strchr(ch, ',')) fail_msg("row %d: a comma in the choice '%s'", row, ch);
        }
        int unsupported = 0, notconv = 0;
        for (int row = 1; row < nl; row++) {
            char v[64], st[64], its[32], rr[64], want[16];
            csv_field(lines[0], lines[row], "ksp", v, sizeof v);
            if (strcmp(v, cases[k].ksp)) fail_msg("%s: row %d: ksp '%s', expected %s", args, row, v, cases[k].ksp);
            csv_field(lines[0], lines[row], "restart", v, sizeof v);
            snprintf(want, sizeof want, "%d", cases[k].restart);
            if (strcmp(v, want)) fail_msg("%s: row %d: restart '%s', expected %s", args, row, v, want);
            csv_field(lines[0], lines[row], "status", st, sizeof st);
            csv_field(lines[0], lines[row], "iterations", its, sizeof its);
            csv_field(lines[0], lines[row], "true_relres", rr, sizeof rr);
            if (!strcmp(st, "ok")) {
                /* rtol 1e-6 on the solver's residual (recurrence, GMRES's
                 * least-squares estimate); the recomputed one within 10x */
                if (atoi(its) < 1 || !(strtod(rr, NULL) <= 1e-5))
                    fail_msg("%s: row %d: ok with %s iterations, true relres %s", args, row, its, rr);
                if (gm >= 0 && row == 1) its_ok[gm] = atoi(its);
            } else if (gm == 1 && !strcmp(st, "not_converged")) {
                notconv++;
                if (row == 1) its_ok[gm] = -2;
            } else if (!strcmp(st, "unsupported") && strcmp(cases[k].ksp, "cg")) {
                unsupported++;
                csv_field(lines[0], lines[row], "message", v, sizeof v);
                if (!strstr(v, cases[k].ksp)) fail_msg("%s: row %d: message '%s' does not name %s", args, row, v,
                                                       cases[k].ksp);
            } else {
                fail_msg("%s: row %d: status '%s' (expected ok%s)", args, row, st,
                         strcmp(cases[k].ksp, "cg") ? " or unsupported" : "");
            }
        }
        if (unsupported) {
            if (r.rc != 1 || !strstr(r.err, "unsupported") || !strstr(r.err, cases[k].ksp))
                fail_msg("%s: unsupported rows: expected exit 1 and stderr naming it; exit %d, stderr:\n%s", args, r.rc, r.err);
        } else if (r.rc != (notconv ? 1 : 0)) {
            fail_msg("%s: %s but exit %d, stderr:\n%s", args, notconv ? "rows not converged" : "every row ok", r.rc, r.err);
        }
        free(csv);
        /* JSON: the settings and every result name the method */
        char *json = slurp(tmp_path("ksp.json"));
        char needle[64];
        snprintf(needle, sizeof needle, "\"ksp\": \"%s\", \"restart\": %d}", cases[k].ksp, cases[k].restart);
        if (!strstr(json, needle)) fail_msg("%s: JSON settings lack %s", args, needle);
        snprintf(needle, sizeof needle, "\"ksp\": \"%s\"", cases[k].ksp);
        int n = 0;
        for (const char *p = json; (p = strstr(p, needle)); p++) n++;
        if (n != 5) fail_msg("%s: JSON names %s %d times, expected 5 (settings + 4 results)", args, cases[k].ksp, n);
        free(json);
        run_free(&r);
    }
    if (its_ok[0] > 0 && its_ok[1] != -1 && its_ok[1] != -2 && its_ok[1] <= its_ok[0])
        fail_msg("GMRES(1) took %d iterations, GMRES(30) %d: the restart does not reach the solver", its_ok[1], its_ok[0]);
}

static void test_failed_solve_is_reported(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/real/bcsstk13.mtx", tu_matrix_dir());
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "SKIPPED: %s not found (set ATA_MATRICES)\n", path);
        skip();
    }
    char args[1200];
    snprintf(args, sizeof args, "pcg --matrix '%s' --gen lap2d:8 --policy levelset,ca --backend cpu --threads 2 --wide",
             path);
    run_result r = run(args);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "bcsstk13"));
    int rows = 0;
    for (const char *p = r.out; (p = strstr(p, "bcsstk13")); p++) {
        const char *eol = strchr(p, '\n');
        const char *s1 = strstr(p, "indefinite_pc"), *s2 = strstr(p, "breakdown");
        if ((s1 && (!eol || s1 < eol)) || (s2 && (!eol || s2 < eol))) rows++;
    }
    assert_int_equal(rows, 2);
    assert_non_null(strstr(r.out, "lap2d:8"));      /* the next matrix still ran */
    run_free(&r);
}

/* The line of `text` that starts with `prefix`, copied into `out`; NULL if none. */
static char *line_starting(const char *text, const char *prefix, char *out, size_t n)
{
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, prefix, len)) {
            snprintf(out, n, "%.*s", (int)strcspn(p, "\n"), p);
            return out;
        }
    return NULL;
}

/* The longest line of `text`, in characters (the output is ASCII). */
static int longest_line(const char *text)
{
    int best = 0;
    for (const char *p = text; *p;) {
        int w = (int)strcspn(p, "\n");
        if (w > best) best = w;
        p += w;
        if (*p) p++;
    }
    return best;
}

/* --precision both: every policy once per precision, in that order, the
 * table's rows and the CSV's and JSON's records saying which; the
 * precision column last in the CSV; mixed converges in about double's
 * iterations and its CPU plans count 4 bytes a value; the title says the
 * repetitions are interleaved. A mixed run of a preconditioner other than
 * ILU0 fails as unsupported, naming it. */
static void test_pcg_precision(void **state)
{
    (void)state;
    char args[1400];
    snprintf(args, sizeof args, "pcg --gen lap2d:20,circuit:300 --policy serial,ca --precision both --backend cpu "
             "--threads 2 --no-floor --reps 2 --csv '%s' --json '%s'", tmp_path("prec.csv"), tmp_path("prec.json"));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    if (longest_line(r.out) > 100) fail_msg("a line of %d columns (limit 100):\n%s", longest_line(r.out), r.out);
    assert_non_null(strstr(r.out, "factors double and mixed (repetitions interleaved)"));
    char line[512];
    if (!line_starting(r.out, "  policy    prec ", line, sizeof line)) fail_msg("no precision column:\n%s", r.out);
    assert_non_null(line_starting(r.out, "  ca        double ", line, sizeof line));
    assert_non_null(line_starting(r.out, "  ca        mixed ", line, sizeof line));
    char *csv = slurp(tmp_path("prec.csv"));
    char *lines[16];
    const int nl = split_lines(csv, lines, 16);
    if (nl != 9) fail_msg("%d CSV lines, expected 9 (2 matrices x 2 policies x 2 precisions, and a header)", nl);
    const char *last = strrchr(lines[0], ',');
    assert_non_null(last);
    assert_string_equal(last, ",precision");
    static const char *order[] = { "double", "mixed" };
    for (int row = 1; row < nl; row += 2) {
        char f[2][5][128];
        static const char *names[] = { "matrix", "policy", "iterations", "status", "L_matrix_bytes" };
        for (int q = 0; q < 2; q++) {
            char prec[32];
            csv_field(lines[0], lines[row + q], "precision", prec, sizeof prec);
            if (strcmp(prec, order[q])) fail_msg("row %d: precision '%s', expected %s", row + q, prec, order[q]);
            /* the last field too, for a reader that splits on commas */
            assert_string_equal(strrchr(lines[row + q], ',') + 1, order[q]);
            for (int k = 0; k < 5; k++) csv_field(lines[0], lines[row + q], names[k], f[q][k], sizeof f[q][k]);
            assert_string_equal(f[q][3], "ok");
        }
        assert_string_equal(f[0][0], f[1][0]);
        assert_string_equal(f[0][1], f[1][1]);
        const int itd = atoi(f[0][2]), itm = atoi(f[1][2]);
        printf("  %s %s: %d iterations in double, %d mixed\n", f[0][0], f[0][1], itd, itm);
        assert_true(itd > 0 && itm <= itd + itd / 20 + 1);
        if (!strcmp(f[0][1], "ca")) assert_true(atoll(f[1][4]) < atoll(f[0][4]));     /* floats: fewer bytes */
    }
    free(csv);
    char *json = slurp(tmp_path("prec.json"));
    assert_non_null(strstr(json, "\"precision\": \"both\""));
    int nd = 0, nm = 0;
    for (const char *p = json; (p = strstr(p, "\"precision\": \"double\"")); p++) nd++;
    for (const char *p = json; (p = strstr(p, "\"precision\": \"mixed\"")); p++) nm++;
    assert_int_equal(nd, 4);
    assert_int_equal(nm, 4);
    free(json);
    run_free(&r);

    /* one precision: no interleaving, the title names it */
    r = run("pcg --gen lap2d:12 --policy ca --precision mixed --backend cpu --threads 2 --no-floor");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "factors mixed"));
    assert_non_null(line_starting(r.out, "  ca        mixed ", line, sizeof line));
    run_free(&r);
    /* without the flag, no precision column (the summary as before) */
    r = run("pcg --gen lap2d:12 --policy ca --backend cpu --threads 2 --no-floor");
    assert_int_equal(r.rc, 0);
    assert_null(strstr(r.out, "prec"));
    run_free(&r);
    /* mixed is for ILU0 */
    r = run("pcg --gen lap2d:12 --policy ca --pc jacobi --precision both --backend cpu --threads 2 --no-floor");
    assert_int_equal(r.rc, 1);
    assert_non_null(line_starting(r.out, "  ca        mixed ", line, sizeof line));
    assert_non_null(strstr(line, "unsupported"));
    assert_non_null(line_starting(r.out, "  ca        double ", line, sizeof line));
    assert_non_null(strstr(line, "ok"));
    assert_non_null(strstr(r.err, "ca/mixed"));
    assert_non_null(strstr(r.err, "jacobi"));
    run_free(&r);
}

/* pcg's default output, the summary: every line within 100 columns, no
 * wide-table column, and per policy a row whose S, its, relres, setup s,
 * solve s, ms/it, x floor and status are the CSV's numbers of the same run,
 * formatted. --wide gives back the full table, one row per policy. */
static void test_pcg_summary(void **state)
{
    (void)state;
    char args[2200];
    snprintf(args, sizeof args, "pcg --gen lap2d:20 --policy serial,levelset,ca --backend cpu --threads 2 --csv '%s'",
             tmp_path("sum.csv"));
    run_result r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    if (longest_line(r.out) > 100) fail_msg("a line of %d columns (limit 100):\n%s", longest_line(r.out), r.out);
    assert_null(strchr(r.out, '\r'));
    assert_null(strchr(r.out, '\033'));
    static const char *wide_only[] = { "SpMV ms/it", "peak RSS MB", "vs levelset", "analysis s", "atasks" };
    for (size_t k = 0; k < sizeof wide_only / sizeof *wide_only; k++)
        if (strstr(r.out, wide_only[k])) fail_msg("default output has the wide column '%s':\n%s", wide_only[k], r.out);
    char line[512];
    /* the problem */
    if (!line_starting(r.out, "lap2d:20: n 400, nnz 1920, DAG ", line, sizeof line))
        fail_msg("no problem line 'lap2d:20: n 400, nnz 1920, DAG ...':\n%s", r.out);
    /* the header names every field */
    if (!line_starting(r.out, "  policy ", line, sizeof line)) fail_msg("no header line:\n%s", r.out);
    static const char *heads[] = { "policy", " S ", "its", "relres", "setup s", "solve s", "ms/it", "x floor", "status" };
    for (size_t k = 0; k < sizeof heads / sizeof *heads; k++)
        if (!strstr(line, heads[k])) fail_msg("header '%s' lacks '%s'", line, heads[k]);
    /* every row against the CSV */
    char *csv = slurp(tmp_path("sum.csv"));
    char *lines[8];
    assert_int_equal(split_lines(csv, lines, 8), 4);
    for (int row = 1; row <= 3; row++) {
        char pol[64], want[9][64], f[8][64], prefix[80];
        csv_field(lines[0], lines[row], "policy", pol, sizeof pol);
        snprintf(prefix, sizeof prefix, "  %s ", pol);
        if (!line_starting(r.out, prefix, line, sizeof line)) fail_msg("no summary row for %s:\n%s", pol, r.out);
        static const char *names[] = { "L_S", "iterations", "relres", "analysis_s", "factor_s", "solve_s",
                                       "per_iter_ms", "floor_ratio" };
        for (int k = 0; k < 8; k++)
            if (csv_field(lines[0], lines[row], names[k], f[k], sizeof f[k]))
                fail_msg("CSV has no column %s", names[k]);
        assert_true(atoi(f[1]) > 0);
        assert_true(atof(f[7]) > 0);        /* the floor was measured: x floor is a number */
        snprintf(want[0], sizeof want[0], "%s", pol);
        snprintf(want[1], sizeof want[1], "%s", *f[0] ? f[0] : "-");       /* serial: no plan, no S */
        snprintf(want[2], sizeof want[2], "%s", f[1]);
        snprintf(want[3], sizeof want[3], "%.2e", atof(f[2]));
        snprintf(want[4], sizeof want[4], "%.4f", atof(f[3]) + atof(f[4]));
        snprintf(want[5], sizeof want[5], "%.4f", atof(f[5]));
        snprintf(want[6], sizeof want[6], "%.3f", atof(f[6]));
        snprintf(want[7], sizeof want[7], "%.2fx", atof(f[7]));
        snprintf(want[8], sizeof want[8], "ok");
        char got[9][64];
        int n = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s %63s", got[0], got[1], got[2], got[3], got[4],
                       got[5], got[6], got[7], got[8]);
        if (n != 9) fail_msg("row '%s': %d fields, expected 9", line, n);
        for (int k = 0; k < 9; k++)
            if (strcmp(got[k], want[k]))
                fail_msg("row '%s': field %d is '%s', the CSV says '%s'", line, k + 1, got[k], want[k]);
    }
    char *header_default = strdup(lines[0]);
    free(csv);
    run_free(&r);

    /* --wide: the full table, every row naming its matrix; the CSV has the same columns */
    snprintf(args, sizeof args, "pcg --gen lap2d:20 --policy serial,levelset,ca --backend cpu --threads 2 --wide "
             "--csv '%s'", tmp_path("wide.csv"));
    r = run(args);
    if (r.rc != 0) fail_msg("ata-bench %s: exit %d, stderr: %s", args, r.rc, r.err);
    if (!line_starting(r.out, "matrix ", line, sizeof line)) fail_msg("--wide: no table header:\n%s", r.out);
    for (size_t k = 0; k < sizeof wide_only / sizeof *wide_only; k++)
        if (!strstr(line, wide_only[k])) fail_msg("--wide: the header lacks '%s': %s", wide_only[k], line);
    assert_true(longest_line(r.out) > 200);
    int rows = 0;
    for (const char *p = r.out; (p = strstr(p, "\nlap2d:20 ")); p++) rows++;
    assert_int_equal(rows, 3);
    assert_null(strstr(r.out, "lap2d:20: n 400"));      /* not the summary */
    char *csv_wide = slurp(tmp_path("wide.csv"));
    csv_wide[strcspn(csv_wide, "\n")] = '\0';
    assert_string_equal(csv_wide, header_default);      /* the same CSV columns */
    free(csv_wide);
    free(header_default);
    run_free(&r);

    /* a run that fails: the status names the reason within the 100 columns */
    char path[1024];
    snprintf(path, sizeof path, "%s/real/bcsstk13.mtx", tu_matrix_dir());
    if (access(path, R_OK) == 0) {
        snprintf(args, sizeof args, "pcg --matrix '%s' --policy levelset,ca --backend cpu --threads 2", path);
        r = run(args);
        assert_int_equal(r.rc, 1);
        assert_true(longest_line(r.out) <= 100);
        assert_non_null(line_starting(r.out, "bcsstk13: n 2003, nnz 83883", line, sizeof line));
        assert_non_null(line_starting(r.out, "  levelset ", line, sizeof line));
        assert_non_null(strstr(line, "indefinite_pc"));
        assert_non_null(line_starting(r.out, "  ca ", line, sizeof line));
        assert_non_null(strstr(line, "indefinite_pc"));
        run_free(&r);
    } else {
        printf("SKIPPED: %s not found (the failing-run part)\n", path);
    }
}

/* The progress line: on a terminal (script(1) gives the run a pty), after
 * ATA_BENCH_PROGRESS_AFTER seconds (0 here), "[pcg] MATRIX policy P:
 * iteration N" rewritten in place with \r, and erased before the output
 * that follows; with stderr in a file, none at all. */
static void test_progress_line(void **state)
{
    (void)state;
    const char *bench_args = "pcg --gen lap3d:60 --serial --reps 2 --no-floor";
    char cmd[8192];
    /* stderr not a terminal: nothing, even with no delay */
    snprintf(cmd, sizeof cmd, "env ATA_BENCH_PROGRESS_AFTER=0 '%s' %s", bench, bench_args);
    run_result r = run_shell(cmd);
    if (r.rc != 0) fail_msg("%s: exit %d, stderr: %s", cmd, r.rc, r.err);
    assert_null(strstr(r.err, "[pcg"));
    assert_null(strchr(r.err, '\r'));
    assert_null(strchr(r.out, '\r'));
    run_free(&r);
    if (system("command -v script >/dev/null 2>&1") != 0) {
        printf("SKIPPED: script(1) not found: the terminal half of the progress test\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "script -qec \"env ATA_BENCH_PROGRESS_AFTER=0 '%s' %s\" /dev/null", bench, bench_args);
    r = run_shell(cmd);
    if (r.rc != 0) fail_msg("%s: exit %d, output: %s", cmd, r.rc, r.out);
    const char *first = strstr(r.out, "\r\033[K[pcg] lap3d:60 policy serial");
    if (!first) fail_msg("no progress line on the terminal:\n%s", r.out);
    if (!strstr(r.out, "policy serial, rep 1/2: iteration ") && !strstr(r.out, "policy serial, rep 2/2: iteration "))
        fail_msg("the progress line never showed an iteration:\n%s", r.out);
    const char *last = first;
    for (const char *p; (p = strstr(last + 1, "[pcg]"));) last = p;
    const char *erased = strstr(last, "\r\033[K");
    const char *title = strstr(r.out, "ata-bench pcg: ");
    if (!erased || !title || title < erased) fail_msg("the last progress line was not erased before the output:\n%s", r.out);
    run_free(&r);
}

/* The serial baseline (bench/serial.c: extracted triangle, CSparse-style
 * loop) answers as the reference does for every triangle, traversal and
 * diagonal (the reciprocal's too): the run's check against ata_ref_* would
 * mark it wrong_answer; the CSV names the diagonal asked for. */
static void test_serial_baseline_variants(void **state)
{
    (void)state;
    static const char *variants[] = { "--uplo lower --traversal pull", "--uplo upper --traversal pull",
                                      "--uplo lower --traversal push", "--uplo upper --traversal push" };
    static const char *diags[] = { "nonunit", "unit", "inverse" };
    for (int v = 0; v < 4; v++)
        for (int d = 0; d < 3; d++) {
            char args[512], line[3][64];
            snprintf(args, sizeof args, "sptrsv --gen lap2d:17x9,perm=3 --policy serial --reps 2 %s --diag %s "
                     "--quiet --csv %s", variants[v], diags[d], tmp_path("serial.csv"));
            run_result r = run(args);
            assert_int_equal(r.rc, 0);
            run_free(&r);
            char *csv = slurp(tmp_path("serial.csv"));
            char *lines[4];
            assert_int_equal(split_lines(csv, lines, 4), 2);
            assert_int_equal(csv_field(lines[0], lines[1], "status", line[0], sizeof line[0]), 0);
            assert_string_equal(line[0], "ok");
            assert_int_equal(csv_field(lines[0], lines[1], "check", line[1], sizeof line[1]), 0);
            if (!(atof(line[1]) <= 1e-14)) fail_msg("%s: check %s", args, line[1]);
            assert_int_equal(csv_field(lines[0], lines[1], "diag", line[2], sizeof line[2]), 0);
            assert_string_equal(line[2], diags[d]);
            free(csv);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_args),
        cmocka_unit_test(test_help_lists_every_flag),
        cmocka_unit_test(test_listed_flags_are_accepted),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_bad_flag),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_unwritable_output),
        cmocka_unit_test(test_bad_matrix_files),
        cmocka_unit_test(test_small_pcg_run),
        cmocka_unit_test(test_pcg_floor_columns),
        cmocka_unit_test(test_monitor_and_serial),
        cmocka_unit_test(test_sptrsv_ilu0_info_runs),
        cmocka_unit_test(test_pcg_ksp),
        cmocka_unit_test(test_pcg_precision),
        cmocka_unit_test(test_failed_solve_is_reported),
        cmocka_unit_test(test_pcg_summary),
        cmocka_unit_test(test_progress_line),
        cmocka_unit_test(test_serial_baseline_variants),
        cmocka_unit_test(test_write_roundtrip),
    };
    return cmocka_run_group_tests_name("cli", tests, setup, teardown);
}
