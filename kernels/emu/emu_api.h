/* emu_api.h - the slice of the CUDA runtime / cuSPARSE (warp 32) or HIP
 * runtime / hipSPARSE (warp 64) that src/gpu/ and the kernels'
 * launch wrappers use, provided by the host SIMT emulator (emu.cc). The
 * stand-in headers in kernels/emu/include/ (cuda_runtime_api.h, cusparse.h,
 * hip/hip_runtime_api.h, hipsparse/hipsparse.h) include this file, so the
 * backend compiles unchanged. Device pointers are host pointers; every
 * stream operation runs synchronously, in order, at enqueue (or is recorded
 * while the stream captures a graph). The sparse library is NOT emulated:
 * SpSV and csrilu02 run ATA's serial reference (said once on stderr). */
#ifndef ATA_EMU_API_H
#define ATA_EMU_API_H
#include <stddef.h>
#include <stdint.h>

#ifndef ATA_EMU_WARP
#define ATA_EMU_WARP 32
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if ATA_EMU_WARP == 64
#define EMU_RT(x) hip##x
#define EMU_SP(x) hipsparse##x
#define EMU_SPC(x) HIPSPARSE_##x
#else
#define EMU_RT(x) cuda##x
#define EMU_SP(x) cusparse##x
#define EMU_SPC(x) CUSPARSE_##x
#endif

/* ------------------------------------------------------------- runtime */
typedef int EMU_RT(Error_t);
enum {
    EMU_RT(Success) = 0, EMU_RT(ErrorInvalidValue) = 1, EMU_RT(ErrorMemoryAllocation) = 2,
    EMU_RT(ErrorNoDevice) = 100, EMU_RT(ErrorInvalidDevice) = 101,
    EMU_RT(ErrorStreamCaptureUnsupported) = 900, EMU_RT(ErrorLaunchFailure) = 719
};
typedef struct emu_stream *EMU_RT(Stream_t);
typedef struct emu_event *EMU_RT(Event_t);
typedef struct emu_graph *EMU_RT(Graph_t);
typedef struct emu_graph *EMU_RT(GraphExec_t);
typedef enum {
    EMU_RT(MemcpyHostToHost) = 0, EMU_RT(MemcpyHostToDevice) = 1, EMU_RT(MemcpyDeviceToHost) = 2,
    EMU_RT(MemcpyDeviceToDevice) = 3, EMU_RT(MemcpyDefault) = 4
} EMU_RT(MemcpyKind);
enum { EMU_RT(StreamDefault) = 0, EMU_RT(StreamNonBlocking) = 1 };
typedef enum {
    EMU_RT(StreamCaptureModeGlobal) = 0, EMU_RT(StreamCaptureModeThreadLocal) = 1,
    EMU_RT(StreamCaptureModeRelaxed) = 2
} EMU_RT(StreamCaptureMode);
#if ATA_EMU_WARP == 64
enum { hipDeviceAttributeMultiprocessorCount = 63, hipDeviceAttributeWallClockRate = 10042,
       hipDeviceAttributeWarpSize = 87 };
typedef int hipDeviceAttribute_t;
EMU_RT(Error_t) hipHostMalloc(void **p, size_t bytes, unsigned flags);
EMU_RT(Error_t) hipHostFree(void *p);
EMU_RT(Error_t) hipGraphInstantiateWithFlags(EMU_RT(GraphExec_t) *exec, EMU_RT(Graph_t) g,
                                             unsigned long long flags);
typedef enum { HIP_R_64F = 1 } emu_data_type;
#else
enum { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrWarpSize = 10 };
typedef int cudaDeviceAttr;
EMU_RT(Error_t) cudaMallocHost(void **p, size_t bytes);
EMU_RT(Error_t) cudaFreeHost(void *p);
EMU_RT(Error_t) cudaGraphInstantiate(EMU_RT(GraphExec_t) *exec, EMU_RT(Graph_t) g, unsigned long long flags);
typedef enum { CUDA_R_64F = 1 } emu_data_type;
#endif

EMU_RT(Error_t) EMU_RT(GetDeviceCount)(int *n);
EMU_RT(Error_t) EMU_RT(SetDevice)(int dev);
EMU_RT(Error_t) EMU_RT(DeviceGetAttribute)(int *v, int attr, int dev);
EMU_RT(Error_t) EMU_RT(DeviceSynchronize)(void);
EMU_RT(Error_t) EMU_RT(GetLastError)(void);
const char *EMU_RT(GetErrorString)(EMU_RT(Error_t) e);
EMU_RT(Error_t) EMU_RT(Malloc)(void **p, size_t bytes);
EMU_RT(Error_t) EMU_RT(Free)(void *p);
EMU_RT(Error_t) EMU_RT(Memcpy)(void *dst, const void *src, size_t bytes, EMU_RT(MemcpyKind) k);
EMU_RT(Error_t) EMU_RT(MemcpyAsync)(void *dst, const void *src, size_t bytes, EMU_RT(MemcpyKind) k,
                                    EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(MemsetAsync)(void *dst, int value, size_t bytes, EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(StreamCreateWithFlags)(EMU_RT(Stream_t) *s, unsigned flags);
EMU_RT(Error_t) EMU_RT(StreamDestroy)(EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(StreamSynchronize)(EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(StreamBeginCapture)(EMU_RT(Stream_t) s, EMU_RT(StreamCaptureMode) mode);
EMU_RT(Error_t) EMU_RT(StreamEndCapture)(EMU_RT(Stream_t) s, EMU_RT(Graph_t) *g);
EMU_RT(Error_t) EMU_RT(GraphLaunch)(EMU_RT(GraphExec_t) e, EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(GraphExecDestroy)(EMU_RT(GraphExec_t) e);
EMU_RT(Error_t) EMU_RT(GraphDestroy)(EMU_RT(Graph_t) g);
EMU_RT(Error_t) EMU_RT(EventCreate)(EMU_RT(Event_t) *e);
enum { EMU_RT(EventDefault) = 0, EMU_RT(EventDisableTiming) = 2 };
EMU_RT(Error_t) EMU_RT(EventCreateWithFlags)(EMU_RT(Event_t) *e, unsigned flags);
EMU_RT(Error_t) EMU_RT(StreamWaitEvent)(EMU_RT(Stream_t) s, EMU_RT(Event_t) e, unsigned flags);
EMU_RT(Error_t) EMU_RT(EventDestroy)(EMU_RT(Event_t) e);
EMU_RT(Error_t) EMU_RT(EventRecord)(EMU_RT(Event_t) e, EMU_RT(Stream_t) s);
EMU_RT(Error_t) EMU_RT(EventSynchronize)(EMU_RT(Event_t) e);
EMU_RT(Error_t) EMU_RT(EventElapsedTime)(float *ms, EMU_RT(Event_t) a, EMU_RT(Event_t) b);

/* ------------------------------------------------ sparse (the reference) */
typedef enum {
    EMU_SPC(STATUS_SUCCESS) = 0, EMU_SPC(STATUS_NOT_INITIALIZED) = 1, EMU_SPC(STATUS_ALLOC_FAILED) = 2,
    EMU_SPC(STATUS_INVALID_VALUE) = 3, EMU_SPC(STATUS_ZERO_PIVOT) = 9
} EMU_SP(Status_t);
typedef struct emu_sp_handle *EMU_SP(Handle_t);
typedef struct emu_sp_mat *EMU_SP(SpMatDescr_t);
typedef struct emu_sp_vec *EMU_SP(DnVecDescr_t);
typedef struct emu_sp_spsv *EMU_SP(SpSVDescr_t);
typedef struct emu_sp_descr *EMU_SP(MatDescr_t);
typedef struct emu_sp_ilu *csrilu02Info_t;
typedef enum { EMU_SPC(OPERATION_NON_TRANSPOSE) = 0 } EMU_SP(Operation_t);
typedef enum { EMU_SPC(SPSV_ALG_DEFAULT) = 0 } EMU_SP(SpSVAlg_t);
typedef enum { EMU_SPC(INDEX_32I) = 2 } EMU_SP(IndexType_t);
typedef enum { EMU_SPC(INDEX_BASE_ZERO) = 0 } EMU_SP(IndexBase_t);
typedef enum { EMU_SPC(SPMAT_FILL_MODE) = 0, EMU_SPC(SPMAT_DIAG_TYPE) = 1 } EMU_SP(SpMatAttribute_t);
typedef enum { EMU_SPC(FILL_MODE_LOWER) = 0, EMU_SPC(FILL_MODE_UPPER) = 1 } EMU_SP(FillMode_t);
typedef enum { EMU_SPC(DIAG_TYPE_NON_UNIT) = 0, EMU_SPC(DIAG_TYPE_UNIT) = 1 } EMU_SP(DiagType_t);
typedef enum { EMU_SPC(MATRIX_TYPE_GENERAL) = 0 } EMU_SP(MatrixType_t);
typedef enum { EMU_SPC(SOLVE_POLICY_USE_LEVEL) = 1 } EMU_SP(SolvePolicy_t);

EMU_SP(Status_t) EMU_SP(Create)(EMU_SP(Handle_t) *h);
EMU_SP(Status_t) EMU_SP(Destroy)(EMU_SP(Handle_t) h);
EMU_SP(Status_t) EMU_SP(SetStream)(EMU_SP(Handle_t) h, EMU_RT(Stream_t) s);
EMU_SP(Status_t) EMU_SP(CreateCsr)(EMU_SP(SpMatDescr_t) *m, int64_t rows, int64_t cols, int64_t nnz,
                                   void *rowptr, void *col, void *val, EMU_SP(IndexType_t) it,
                                   EMU_SP(IndexType_t) jt, EMU_SP(IndexBase_t) base, emu_data_type t);
EMU_SP(Status_t) EMU_SP(DestroySpMat)(EMU_SP(SpMatDescr_t) m);
EMU_SP(Status_t) EMU_SP(SpMatSetAttribute)(EMU_SP(SpMatDescr_t) m, EMU_SP(SpMatAttribute_t) a,
                                           void *v, size_t size);
EMU_SP(Status_t) EMU_SP(CreateDnVec)(EMU_SP(DnVecDescr_t) *v, int64_t n, void *val, emu_data_type t);
EMU_SP(Status_t) EMU_SP(DestroyDnVec)(EMU_SP(DnVecDescr_t) v);
EMU_SP(Status_t) EMU_SP(DnVecSetValues)(EMU_SP(DnVecDescr_t) v, void *val);
EMU_SP(Status_t) EMU_SP(SpSV_createDescr)(EMU_SP(SpSVDescr_t) *d);
EMU_SP(Status_t) EMU_SP(SpSV_destroyDescr)(EMU_SP(SpSVDescr_t) d);
EMU_SP(Status_t) EMU_SP(SpSV_bufferSize)(EMU_SP(Handle_t) h, EMU_SP(Operation_t) op, const void *alpha,
                                         EMU_SP(SpMatDescr_t) m, EMU_SP(DnVecDescr_t) b,
                                         EMU_SP(DnVecDescr_t) x, emu_data_type t, EMU_SP(SpSVAlg_t) alg,
                                         EMU_SP(SpSVDescr_t) d, size_t *bytes);
EMU_SP(Status_t) EMU_SP(SpSV_analysis)(EMU_SP(Handle_t) h, EMU_SP(Operation_t) op, const void *alpha,
                                       EMU_SP(SpMatDescr_t) m, EMU_SP(DnVecDescr_t) b,
                                       EMU_SP(DnVecDescr_t) x, emu_data_type t, EMU_SP(SpSVAlg_t) alg,
                                       EMU_SP(SpSVDescr_t) d, void *buf);
/* The newer signature (cuSPARSE 12, hipSPARSE >= 3): no buffer. */
#define hipsparseVersionMajor 3
EMU_SP(Status_t) EMU_SP(SpSV_solve)(EMU_SP(Handle_t) h, EMU_SP(Operation_t) op, const void *alpha,
                                    EMU_SP(SpMatDescr_t) m, EMU_SP(DnVecDescr_t) b, EMU_SP(DnVecDescr_t) x,
                                    emu_data_type t, EMU_SP(SpSVAlg_t) alg, EMU_SP(SpSVDescr_t) d);
EMU_SP(Status_t) EMU_SP(CreateMatDescr)(EMU_SP(MatDescr_t) *d);
EMU_SP(Status_t) EMU_SP(DestroyMatDescr)(EMU_SP(MatDescr_t) d);
EMU_SP(Status_t) EMU_SP(SetMatIndexBase)(EMU_SP(MatDescr_t) d, EMU_SP(IndexBase_t) b);
EMU_SP(Status_t) EMU_SP(SetMatType)(EMU_SP(MatDescr_t) d, EMU_SP(MatrixType_t) t);
EMU_SP(Status_t) EMU_SP(CreateCsrilu02Info)(csrilu02Info_t *info);
EMU_SP(Status_t) EMU_SP(DestroyCsrilu02Info)(csrilu02Info_t info);
EMU_SP(Status_t) EMU_SP(Dcsrilu02_bufferSize)(EMU_SP(Handle_t) h, int m, int nnz, const EMU_SP(MatDescr_t) d,
                                              double *val, const int *rowptr, const int *col,
                                              csrilu02Info_t info, int *bytes);
EMU_SP(Status_t) EMU_SP(Dcsrilu02_analysis)(EMU_SP(Handle_t) h, int m, int nnz, const EMU_SP(MatDescr_t) d,
                                            const double *val, const int *rowptr, const int *col,
                                            csrilu02Info_t info, EMU_SP(SolvePolicy_t) pol, void *buf);
EMU_SP(Status_t) EMU_SP(Dcsrilu02)(EMU_SP(Handle_t) h, int m, int nnz, const EMU_SP(MatDescr_t) d,
                                   double *val, const int *rowptr, const int *col, csrilu02Info_t info,
                                   EMU_SP(SolvePolicy_t) pol, void *buf);
EMU_SP(Status_t) EMU_SP(Xcsrilu02_zeroPivot)(EMU_SP(Handle_t) h, csrilu02Info_t info, int *pos);

/* ------------------------------------------------- emulator's own calls */
/* Launches made while `on` is set ignore dependencies by design (the T_u
 * probe: every task at once, results discarded): TSan ignores their races. */
void emu_expect_races(int on);
/* Blocks per SM the emulator reports (occupancy queries). */
int emu_blocks_per_sm(void);
/* The device clock in ticks (ATA_EMU_TIMER_HZ): emulated time, advanced by
 * the device's own work (warp collectives), not by host wall time. */
unsigned long long emu_clock(void);

#ifdef __cplusplus
}
#endif
#endif
