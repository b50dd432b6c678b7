/* test_util.h - shared helpers of the cmocka tests. */
#ifndef ATA_TEST_UTIL_H
#define ATA_TEST_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "ata.h"

/* Folder of the shared matrices: $ATA_MATRICES, else ../shared/matrices. */
const char *tu_matrix_dir(void);
/* Sorted list of files in tu_matrix_dir()/sub (NULL-terminated, malloc'd);
 * NULL with a loud "SKIPPED" line if the folder is absent. */
char **tu_list(const char *sub);
void tu_free_list(char **list);
/* Normwise backward error of T x = b on the `uplo` triangle of T:
 * ||T x - b||_inf / (||T||_inf ||x||_inf + ||b||_inf). */
double tu_backward_error(const ata_csr *T, ata_uplo uplo, ata_diag diag,
                         const double *x, const double *b);
/* max_i |x_i - y_i| / max_i |y_i| */
double tu_rel_diff(const double *x, const double *y, int n);
/* ||b - A x|| / ||b||, computed with the reference SpMV. */
double tu_true_relres(const ata_csr *A, const double *x, const double *b);
/* Deterministic pseudo-random vector in [-1, 1]. */
void tu_random_vec(double *v, int n, uint64_t seed);
/* One solve x of T x = b against the reference xr, by the rule for its
 * policy and traversal: pull bitwise, push within 1e-12, vendor within a
 * backward-error bound. */
void tu_check_solution(const ata_csr *A, const char *name, const ata_plan_options *po,
                       const double *b, const double *x, const double *xr, int n);
/* Pull solves are bitwise the reference's, except on a backend that splits
 * rows of more than tu_pull_split_above off-diagonal entries between lanes
 * (partial sums in a fixed tree: the GPU's elastic map, gpu_kernels.h): a
 * pull solve of a triangle with such a row is held to 1e-12 (relative, in
 * the 2-norm) instead. 0 (the default): no backend splits rows. */
extern int tu_pull_split_above;
/* 1 when the `uplo` triangle of A (rows of A's CSR) has a row that such a
 * backend splits. */
int tu_pull_splits(const ata_csr *A, ata_uplo uplo);
/* ||x - y||_2 / ||y||_2 (||x - y||_2 when y = 0; inf on a NaN). */
double tu_rel_diff2(const double *x, const double *y, int n);
/* One matrix through policies pols[0..npol) x pull/push x lower/upper x
 * unit/non-unit with adaptive-task size S (0: auto), every plan solved
 * twice: pull bitwise equal to the serial reference, push within 1e-12,
 * vendor within a backward-error bound; a reference error (unusable
 * diagonal, overflow) must come back the same way. Plan statistics are
 * checked too. Returns the number of solves checked. Shared by the CPU and
 * GPU suites. */
int tu_check_sweep(ata_context *ctx, const ata_csr *A, const char *name, int S,
                   const ata_policy *pols, int npol);
/* Several plans (policies pols[0..npol), lower/upper, pull/push) alive at
 * once on ctx, solves interleaved, each checked against the reference: pull
 * bitwise, push within 1e-12. Shared by the CPU and GPU suites. */
void tu_check_many_plans(ata_context *ctx, const ata_policy *pols, int npol);
/* A lower, non-unit solve of a generated matrix (ata_gen_from_spec): b
 * random (seed), xr the serial reference's solution, x room for another. */
typedef struct tu_problem {
    ata_csr *A;
    int n;
    double *b, *x, *xr;
} tu_problem;
void tu_problem_make(tu_problem *pb, const char *spec, uint64_t seed);
void tu_problem_free(tu_problem *pb);
/* A relabelled into its lower triangle's level order (the layout PCG
 * uses): the CPU plans' order is then the identity (the direct path of the
 * pull solve, cpu_exec.c). */
ata_csr *tu_level_ordered(const ata_csr *A);
/* A real matrix from tu_matrix_dir()/real (NULL, with a SKIPPED line, when
 * it is absent). */
ata_csr *tu_read_real(const char *name);
/* x and y hold the same bits. */
int tu_bitwise_equal(const double *x, const double *y, int n);
/* A context of the CPU backend with `threads` workers (0: the default). */
ata_context *tu_cpu_context(int threads);
/* A temporary folder per test program (cmocka group setup/teardown), files
 * in it, and shell commands the tests build their inputs with. */
int tu_tmp_make(void **state);
int tu_tmp_remove(void **state);
const char *tu_tmp_dir(void);
void tu_tmp_path(char *buf, size_t len, const char *name);
void tu_write_text(const char *path, const char *text);
/* Run the command fmt (with a and b put in); fail the test if it fails. */
void tu_run(const char *fmt, const char *a, const char *b);
/* Assert a status with the library's detail in the failure message. */
#define TU_OK(expr) do { ata_status s_ = (expr); if (s_ != ATA_OK) \
    fail_msg("%s -> %s: %s", #expr, ata_status_string(s_), ata_last_error()); } while (0)

#endif
