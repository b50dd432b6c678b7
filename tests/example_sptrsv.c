/* example_sptrsv.c - solver code calling ata_sptrsv (shown in README.md;
 * tests/install_check.sh builds it against an installed copy). */
#include <stdio.h>
#include <stdlib.h>
#include "ata.h"

int main(void)
{
    ata_csr *A;
    ata_context *ctx;
    ata_plan *plan;
    if (ata_gen_laplace2d(200, 200, &A) != ATA_OK) return 1;   /* or ata_matrix_read("A.mtx", &A) */

    ata_context_options co = ata_context_defaults();            /* backend auto: CUDA, HIP, else CPU */
    ata_plan_options po = ata_plan_defaults();                   /* policy ca, S auto, lower, pull */
    ata_status st = ata_context_create(&co, &ctx);
    if (st == ATA_OK) st = ata_sptrsv_plan_create(ctx, A, &po, &plan);   /* analysis, once */
    if (st != ATA_OK) {
        fprintf(stderr, "ata: %s: %s\n", ata_status_string(st), ata_last_error());
        return 1;
    }
    double *b = malloc(A->nrows * sizeof *b), *x = malloc(A->nrows * sizeof *x);
    for (int i = 0; i < A->nrows; i++) b[i] = 1.0;
    for (int step = 0; step < 10; step++)                       /* solve, many times */
        if ((st = ata_sptrsv(plan, b, x)) != ATA_OK) break;
    printf("%s: x[0] = %.6f, x[n-1] = %.6f on the %s backend\n", ata_status_string(st), x[0],
           x[A->nrows - 1], ata_backend_name(ata_context_backend(ctx)));
    ata_plan_destroy(plan);
    ata_context_destroy(ctx);
    ata_csr_free(A);
    free(b);
    free(x);
    return st == ATA_OK ? 0 : 1;
}
