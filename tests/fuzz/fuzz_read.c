/* fuzz_read.c - libFuzzer target for the reader, every format, through the
 * entry users call (ata_matrix_read_opts on a file). Byte 0 picks the file
 * name's extension (the reader chooses Matrix Market or Rutherford-Boeing by
 * it; compression and archives by content), whether duplicates are summed,
 * and the policy; the rest is the file. A matrix read must pass
 * ata_csr_validate and read the same with duplicates summed (it has
 * none); a small square one then goes through the serial
 * reference and the CPU runtime, which must agree (fuzz_common.h). */
#include <stdint.h>
#include <unistd.h>
#include "fuzz_common.h"

static char fuzz_dir[256];

static void fuzz_cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz: cannot remove %s\n", fuzz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    const char *t = getenv("TMPDIR");
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ata-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(fuzz_dir)) abort();
    atexit(fuzz_cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ext[8] = { "mtx", "rua", "rsa", "mtx.gz", "tar.gz", "rb", "psa", "mtx" };
    if (size < 1) return 0;
    const uint8_t sel = data[0];
    char path[400];
    snprintf(path, sizeof path, "%s/in.%s", fuzz_dir, ext[sel & 7]);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    if (fclose(f) != 0) abort();
    ata_read_options o = ata_read_defaults();
    o.sum_duplicates = (sel >> 3) & 1;
    o.max_input_bytes = 8u << 20;          /* a gzip bomb stops at 8 MB */
    ata_csr *A = NULL;
    ata_status st = ata_matrix_read_opts(path, &o, &A);
    if (st != ATA_OK) {
        if (A) FUZZ_FAIL("read failed (%s) but returned a matrix", ata_status_string(st));
        if (!strstr(ata_last_error(), "in.")) FUZZ_FAIL("read message does not name the file: %s", ata_last_error());
        return 0;
    }
    if (ata_csr_validate(A, "fuzz") != ATA_OK) FUZZ_FAIL("reader returned an invalid CSR: %s", ata_last_error());
    if (!o.sum_duplicates) {
        /* without duplicates, summing them changes nothing */
        ata_csr *B = NULL;
        o.sum_duplicates = 1;
        if (ata_matrix_read_opts(path, &o, &B) != ATA_OK) FUZZ_FAIL("read with summing failed: %s", ata_last_error());
        if (B->nnz != A->nnz || memcmp(B->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof *A->rowptr)
            || memcmp(B->col, A->col, (size_t)A->nnz * sizeof *A->col)
            || memcmp(B->val, A->val, (size_t)A->nnz * sizeof *A->val))
            FUZZ_FAIL("summing duplicates changed a matrix that has none");
        ata_csr_free(B);
    }
    if (A->nrows == A->ncols && A->nrows <= 4000 && A->nnz <= 200000) {
        const ata_policy pol = (ata_policy)((sel >> 4) % ATA_POLICY_VENDOR);
        fuzz_compare(A, pol, 1 + (sel >> 5), 0, (sel >> 7) & 1);
    }
    ata_csr_free(A);
    return 0;
}
