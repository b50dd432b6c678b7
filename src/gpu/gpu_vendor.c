/* gpu_vendor.c - policy `vendor`: the vendor's library as the baseline our
 * kernels are measured against. SpSV (cuSPARSE generic API / hipSPARSE) on
 * the CSR of the triangle (a push plan's CSC is transposed back to CSR), and
 * csrilu02 for ILU0, on the plan's device copy. On the emulator the runtime
 * stand-ins run the serial reference instead (kernels/emu/). */
#include "gpu_internal.h"

static ata_status ensure_sparse(gpu_ctx *g)
{
    if (g->have_sparse) return ATA_OK;
    ata_status st = ATA_OK;
    SCHECK_GO(SP(Create)(&g->sparse));
    g->have_sparse = 1;
    SCHECK_GO(SP(SetStream)(g->sparse, g->stream));
    return ATA_OK;
fail:
    return st;
}

void gpu_vendor_release(gpu_plan *d)
{
    if (d->vflags & V_SPSV) SP(SpSV_destroyDescr)(d->vspsv);
    if (d->vflags & V_MAT) SP(DestroySpMat)(d->vmat);
    if (d->vflags & V_VB) SP(DestroyDnVec)(d->vvb);
    if (d->vflags & V_VX) SP(DestroyDnVec)(d->vvx);
    if (d->vflags & V_ILU) SP(DestroyCsrilu02Info)(d->vilu);
    if (d->vflags & V_DESCR) SP(DestroyMatDescr)(d->vdescr);
    d->vflags = 0;
    gpu_free(d->vptr); gpu_free(d->vidx); gpu_free(d->vval); gpu_free(d->vtmp); gpu_free(d->vbuf);
    d->vptr = d->vidx = NULL;
    d->vval = d->vtmp = NULL;
    d->vbuf = NULL;
}

ata_status gpu_vendor_setup(ata_plan *p, gpu_plan *d)
{
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    ata_csr *Tt = NULL;
    ATA_TRY(ensure_sparse(g));
    const int n = p->n;
    if (p->kind == PLAN_ILU0) {
        int bytes = 0, pos = -1;
        SCHECK_GO(SP(CreateMatDescr)(&d->vdescr));
        d->vflags |= V_DESCR;
        SCHECK_GO(SP(SetMatIndexBase)(d->vdescr, SPC(INDEX_BASE_ZERO)));
        SCHECK_GO(SP(SetMatType)(d->vdescr, SPC(MATRIX_TYPE_GENERAL)));
        SCHECK_GO(SP(CreateCsrilu02Info)(&d->vilu));
        d->vflags |= V_ILU;
        SCHECK_GO(SP(Dcsrilu02_bufferSize)(g->sparse, n, d->nnz, d->vdescr, d->val, d->ptr, d->idx,
                                           d->vilu, &bytes));
        if ((st = gpu_malloc(&d->vbuf, (size_t)(bytes > 0 ? bytes : 8), "csrilu02 buffer"))) goto fail;
        SCHECK_GO(SP(Dcsrilu02_analysis)(g->sparse, n, d->nnz, d->vdescr, d->val, d->ptr, d->idx, d->vilu,
                                         SPC(SOLVE_POLICY_USE_LEVEL), d->vbuf));
        if (SP(Xcsrilu02_zeroPivot)(g->sparse, d->vilu, &pos) == SPC(STATUS_ZERO_PIVOT)) {
            st = ata_fail(ATA_ERR_MISSING_DIAG, "ilu0: csrilu02: structural zero pivot in row %d", pos);
            goto fail;
        }
        return ATA_OK;
    }
    /* SpSV on CSR(T); a push plan holds CSC(T) = CSR(T^T): transpose back. */
    int *rp = d->ptr, *ci = d->idx;
    double *vv = d->val;
    if (p->opt.traversal == ATA_PUSH) {
        if ((st = ata_csr_transpose(p->T, &Tt)) != ATA_OK) goto fail;
        if ((st = gpu_malloc((void **)&d->vptr, ((size_t)n + 1) * sizeof(int), "vendor row pointers")) ||
            (st = gpu_malloc((void **)&d->vidx, (size_t)Tt->nnz * sizeof(int), "vendor columns")) ||
            (st = gpu_malloc((void **)&d->vval, (size_t)Tt->nnz * sizeof(double), "vendor values")))
            goto fail;
        if ((st = gpu_upload(g, d->vptr, Tt->rowptr, ((size_t)n + 1) * sizeof(int))) ||
            (st = gpu_upload(g, d->vidx, Tt->col, (size_t)Tt->nnz * sizeof(int))) ||
            (st = gpu_upload(g, d->vval, Tt->val, (size_t)Tt->nnz * sizeof(double))))
            goto fail;
        rp = d->vptr; ci = d->vidx; vv = d->vval;
        ata_csr_free(Tt);
        Tt = NULL;
    }
    if ((st = gpu_malloc((void **)&d->vtmp, 2 * (size_t)(n > 0 ? n : 1) * sizeof(double), "vendor vectors"))) goto fail;
    int fe = ata_gpu_fill(2LL * n, 0.0, d->vtmp, SV(g));
    if (fe) { st = gpu_fail((gpu_err)fe, "vendor vector fill"); goto fail; }
    SCHECK_GO(SP(CreateCsr)(&d->vmat, n, n, d->nnz, rp, ci, vv, SPC(INDEX_32I), SPC(INDEX_32I),
                            SPC(INDEX_BASE_ZERO), GPU_R_64F));
    d->vflags |= V_MAT;
    SP(FillMode_t) fill = p->opt.uplo == ATA_LOWER ? SPC(FILL_MODE_LOWER) : SPC(FILL_MODE_UPPER);
    SP(DiagType_t) dt = p->opt.diag == ATA_UNIT ? SPC(DIAG_TYPE_UNIT) : SPC(DIAG_TYPE_NON_UNIT);
    SCHECK_GO(SP(SpMatSetAttribute)(d->vmat, SPC(SPMAT_FILL_MODE), &fill, sizeof fill));
    SCHECK_GO(SP(SpMatSetAttribute)(d->vmat, SPC(SPMAT_DIAG_TYPE), &dt, sizeof dt));
    SCHECK_GO(SP(CreateDnVec)(&d->vvb, n, d->vtmp, GPU_R_64F));
    d->vflags |= V_VB;
    SCHECK_GO(SP(CreateDnVec)(&d->vvx, n, d->vtmp + n, GPU_R_64F));
    d->vflags |= V_VX;
    SCHECK_GO(SP(SpSV_createDescr)(&d->vspsv));
    d->vflags |= V_SPSV;
    const double one = 1.0;
    size_t bytes = 0;
    SCHECK_GO(SP(SpSV_bufferSize)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                                  GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, &bytes));
    if ((st = gpu_malloc(&d->vbuf, bytes ? bytes : 8, "SpSV buffer"))) goto fail;
    SCHECK_GO(SP(SpSV_analysis)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                                GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, d->vbuf));
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
fail:
    ata_csr_free(Tt);
    return st;
}

ata_status gpu_vendor_sptrsv(ata_plan *p, const double *b, double *x)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    if (p->n == 0) return ATA_OK;
    GCHECK(GPU(SetDevice)(g->device));
    const double one = 1.0;
    SCHECK_GO(SP(DnVecSetValues)(d->vvb, (void *)b));
    SCHECK_GO(SP(DnVecSetValues)(d->vvx, x));
#if SPSV_SOLVE_HAS_BUFFER
    SCHECK_GO(SP(SpSV_solve)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                             GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv, d->vbuf));
#else
    SCHECK_GO(SP(SpSV_solve)(g->sparse, SPC(OPERATION_NON_TRANSPOSE), &one, d->vmat, d->vvb, d->vvx,
                             GPU_R_64F, SPC(SPSV_ALG_DEFAULT), d->vspsv));
#endif
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    return ATA_OK;
fail:
    return st;
}

ata_status gpu_vendor_ilu0(ata_plan *p)
{
    gpu_plan *d = p->dev;
    gpu_ctx *g = GC(p->ctx);
    ata_status st = ATA_OK;
    int pos = -1;
    GCHECK(GPU(SetDevice)(g->device));
    SCHECK_GO(SP(Dcsrilu02)(g->sparse, p->n, d->nnz, d->vdescr, d->val, d->ptr, d->idx, d->vilu,
                            SPC(SOLVE_POLICY_USE_LEVEL), d->vbuf));
    GCHECK_GO(GPU(StreamSynchronize)(g->stream));
    if (SP(Xcsrilu02_zeroPivot)(g->sparse, d->vilu, &pos) == SPC(STATUS_ZERO_PIVOT))
        return ata_fail(ATA_ERR_ZERO_PIVOT, "ilu0: zero pivot in row %d (csrilu02)", pos);
    return ATA_OK;
fail:
    return st;
}
