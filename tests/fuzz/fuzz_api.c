/* fuzz_api.c - libFuzzer target for the public API on arbitrary CSR
 * structures: the bytes give n, options, row lengths (or raw row
 * pointers), columns (in range, or raw and possibly negative) and values.
 * Every public entry must either refuse the matrix cleanly - exactly when
 * the structure check refuses it - or agree with the serial reference. */
#include <limits.h>
#include <stdint.h>
#include "fuzz_common.h"
#include "csr.h"

typedef struct { const uint8_t *p; size_t n, at; } fuzz_bytes;

static uint8_t next(fuzz_bytes *b) { return b->at < b->n ? b->p[b->at++] : 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes in = { data, size, 0 };
    const int n = 1 + next(&in) % 48;
    const uint8_t opt = next(&in), mode = next(&in), s = next(&in);
    const int raw_rowptr = mode & 1, raw_cols = mode & 2, tidy = mode & 4, dominant = mode & 8;
    int *rowptr = malloc(((size_t)n + 1) * sizeof *rowptr);
    if (!rowptr) abort();
    rowptr[0] = raw_rowptr && (mode & 16) ? (int8_t)next(&in) : 0;
    for (int i = 0; i < n; i++)
        rowptr[i + 1] = rowptr[i] + (raw_rowptr ? (int8_t)next(&in) % 9 : next(&in) % 9);
    int nnz = rowptr[n] < 0 ? 0 : rowptr[n];
    if (raw_rowptr && (mode & 32)) nnz += (int8_t)next(&in) % 3;
    if (nnz < 0) nnz = 0;
    /* exact sizes: any read past them is AddressSanitizer's */
    int *col = malloc((size_t)(nnz ? nnz : 1) * sizeof *col);
    double *val = malloc((size_t)(nnz ? nnz : 1) * sizeof *val);
    if (!col || !val) abort();
    for (int p = 0; p < nnz; p++) {
        const uint8_t c = next(&in), v = next(&in);
        col[p] = raw_cols ? (int8_t)c : c % n;
        val[p] = (int8_t)v / 8.0;
    }
    if (tidy && !raw_rowptr)         /* sort each row and drop repeats: mostly valid structures */
        for (int i = 0; i < n; i++) {
            for (int a = rowptr[i] + 1; a < rowptr[i + 1]; a++)
                for (int q = a; q > rowptr[i] && col[q - 1] > col[q]; q--) {
                    int t = col[q]; col[q] = col[q - 1]; col[q - 1] = t;
                }
            for (int a = rowptr[i] + 1; a < rowptr[i + 1]; a++)
                if (col[a] == col[a - 1]) col[a - 1] = INT_MIN;   /* a hole: compacted below */
        }
    if (tidy && !raw_rowptr) {
        int w = 0;
        for (int i = 0; i < n; i++) {
            const int lo = rowptr[i], hi = rowptr[i + 1];
            rowptr[i] = w;
            for (int q = lo; q < hi; q++)
                if (col[q] != INT_MIN) { col[w] = col[q]; val[w++] = val[q]; }
        }
        rowptr[n] = w;
        nnz = w;
    }
    if (dominant)
        for (int i = 0; i < n && !raw_rowptr; i++)
            for (int q = rowptr[i]; q < rowptr[i + 1]; q++)
                if (col[q] == i) val[q] += 16;
    ata_csr A = { .nrows = n, .ncols = n, .nnz = nnz, .rowptr = rowptr, .col = col, .val = val };
    const ata_status cs = csr_check_structure(&A, "fuzz");
    ata_plan_options po = ata_plan_defaults();
    po.policy = (ata_policy)((opt >> 3) % ATA_POLICY_VENDOR);
    po.S = 1 + s % 32;
    po.uplo = (ata_uplo)(opt & 1);
    po.diag = (opt & 2) ? ATA_UNIT : ATA_NON_UNIT;
    po.traversal = (opt & 4) ? ATA_PUSH : ATA_PULL;
    if (cs != ATA_OK) {
        /* every entry refuses it, with the structure check's status */
        ata_plan *plan = NULL;
        ata_csr *LU = NULL;
        ata_status st = ata_sptrsv_plan_create(fuzz_ctx(), &A, &po, &plan);
        if (st != cs || plan) FUZZ_FAIL("plan_create on a bad structure: %s, expected %s", ata_status_string(st),
                                        ata_status_string(cs));
        st = ata_spilu0(fuzz_ctx(), &A, &po, &LU);
        if (st != cs || LU) FUZZ_FAIL("spilu0 on a bad structure: %s, expected %s", ata_status_string(st),
                                      ata_status_string(cs));
        st = ata_ref_ilu0(&A);
        if (st != cs) FUZZ_FAIL("ref ilu0 on a bad structure: %s, expected %s", ata_status_string(st),
                                ata_status_string(cs));
    } else fuzz_compare(&A, po.policy, po.S, po.traversal == ATA_PUSH, po.diag == ATA_UNIT);
    free(rowptr); free(col); free(val);
    return 0;
}
