/* hx_ctx.h: the context a program's GPU code is given (made once by hx_gpu_init, harness_gpu.h)
 * and the status codes of the code that must not exit: a GPU system, a kernel's entry point. Such
 * code returns HX_OK, or HX_ERR / HX_OOM / HX_UNSUPPORTED with its reason written through
 * hx_fail; the program decides how its log ends (hx_die_system). Plain C: attnvar's systems
 * (attn_ctx, attn_system.h, begins with these fields), gemmbench, kronlayer and llama_e2e share
 * it. The checks of CUDA and cuBLAS calls that return these codes: cuda_check.h. */
#ifndef HX_CTX_H
#define HX_CTX_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#elif defined(REPRO_HAVE_CUDA)
#include <cuda_runtime_api.h>
#else
typedef struct CUstream_st *cudaStream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes; their numbers are the exit codes of the same outcome (exitcode.h). */
typedef enum { HX_OK = 0, HX_ERR = 1, HX_OOM = 3, HX_UNSUPPORTED = 4 } hx_status;

/* The context's fields, as one list so that a context of more fields (attn_ctx) can begin with
 * them by name. */
#define HX_CTX_FIELDS                                                                    \
  cudaStream_t stream;                                                                   \
  void *cublas; /* cublasHandle_t, bound to stream and to a counted workspace */         \
  int sm_count;                                                                          \
  int cc_major, cc_minor;                                                                \
  char *err; /* where a failing call writes why (hx_fail), err_len bytes; "" at first */ \
  size_t err_len;

typedef struct {
  HX_CTX_FIELDS
} hx_ctx;

/* Write the reason to ctx->err (when there is a ctx and a buffer) and return code. */
int hx_fail(const hx_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hx_vfail(const hx_ctx *ctx, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Propagate a status other than HX_OK from a call that already wrote its reason. */
#define HX_TRY(expr)                      \
  do {                                    \
    int try_rc_ = (expr);                 \
    if (try_rc_ != HX_OK) return try_rc_; \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
