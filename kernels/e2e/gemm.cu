// gemm.cu: the model's linear layers on cuBLAS (fp16 in/out, fp32 accumulation), and a
// small benchmark of the layer's GEMM shapes against a large square GEMM (the ceiling).
#include "e2e.h"
#include "harness_gpu.h"
extern "C" {
#include "kvline.h" // plain C header without its own extern "C"
}

#include <cublas_v2.h>
#include <stdio.h>

// Row-major y[rows, out] = x[rows, in]·W[out, in]ᵀ is, in cuBLAS's column-major view,
// yᵀ (out x rows) = W (in x out)ᵀ · xᵀ (in x rows): op(A) = T on W, op(B) = N on x.
extern "C" void e2e_gemm_xwT(void *cublas, const uint16_t *x, int ldx, const uint16_t *w,
                             uint16_t *y, int ldy, long long stride_y, int rows, int out, int in,
                             float beta, int batch) {
  cublasHandle_t h = (cublasHandle_t)cublas;
  const float alpha = 1.0f;
  if (batch == 1) {
    HX_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &alpha, w, CUDA_R_16F, in, x,
                           CUDA_R_16F, ldx, &beta, y, CUDA_R_16F, ldy, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
    return;
  }
  // The same x for every batch entry (stride 0): one launch for q, k and v projections.
  HX_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, out, rows, in, &alpha, w,
                                       CUDA_R_16F, in, (long long)out * in, x, CUDA_R_16F, ldx, 0,
                                       &beta, y, CUDA_R_16F, ldy, stride_y, batch,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Median milliseconds of `runs` launches of one GEMM shape (after 3 warmups).
static double time_gemm(const hx_ctx *ctx, const uint16_t *x, const uint16_t *w, uint16_t *y,
                        int rows, int out, int in, int batch, int runs) {
  struct arg_t {
    const hx_ctx *ctx;
    const uint16_t *x, *w;
    uint16_t *y;
    int rows, out, in, batch;
  } a = {ctx, x, w, y, rows, out, in, batch};
  hx_run_fn fn = [](void *p) -> int {
    arg_t *g = (arg_t *)p;
    e2e_gemm_xwT(g->ctx->cublas, g->x, g->in, g->w, g->y, g->out, (long long)g->rows * g->out,
                 g->rows, g->out, g->in, 0.0f, g->batch);
    return 0;
  };
  float ms[64];
  if (runs > 64) runs = 64;
  hx_timing how;
  hx_time_runs(ctx->stream, fn, &a, 3, runs, ms, &how);
  return hx_stats_of(ms, runs, how).median_ms;
}

extern "C" void e2e_gemm_bench(const e2e_config *cfg, const hx_ctx *ctx) {
  const int s = cfg->seqlen, h = cfg->hidden, f = cfg->mlp;
  struct {
    const char *name;
    int rows, out, in, batch;
  } shapes[] = {
      {"qkv", s, h, h, 3},
      {"o", s, h, h, 1},
      {"gate_up", s, 2 * f, h, 1},
      {"down", s, h, f, 1},
      {"ceiling", 8192, 8192, 8192, 1},
  };
  size_t max_x = 0, max_w = 0, max_y = 0;
  for (auto &g : shapes) {
    size_t xs = (size_t)g.rows * g.in, ws = (size_t)g.batch * g.out * g.in,
           ys = (size_t)g.batch * g.rows * g.out;
    max_x = xs > max_x ? xs : max_x;
    max_w = ws > max_w ? ws : max_w;
    max_y = ys > max_y ? ys : max_y;
  }
  uint16_t *x = (uint16_t *)hx_dev_alloc(max_x * 2, "gemm bench x");
  uint16_t *w = (uint16_t *)hx_dev_alloc(max_w * 2, "gemm bench w");
  uint16_t *y = (uint16_t *)hx_dev_alloc(max_y * 2, "gemm bench y");
  // Values do not change the speed of a dense GEMM; small normals keep fp16 finite.
  e2e_fill_normal(x, max_x, cfg->seed, 0xbe0c1u, 0.0f, 1.0f, ctx->stream);
  e2e_fill_normal(w, max_w, cfg->seed, 0xbe0c2u, 0.0f, 0.01f, ctx->stream);
  for (auto &g : shapes) {
    double ms = time_gemm(ctx, x, w, y, g.rows, g.out, g.in, g.batch, 20);
    double tflop = 2.0 * g.rows * g.out * (double)g.in * g.batch / 1e12;
    fprintf(hx_log(), "gemm");
    kv_put(hx_log(), "shape", g.name);
    kv_putf(hx_log(), "m", "%d", g.rows);
    kv_putf(hx_log(), "n", "%d", g.out * g.batch);
    kv_putf(hx_log(), "k", "%d", g.in);
    kv_putf(hx_log(), "median_ms", "%.4f", ms);
    kv_putf(hx_log(), "tflops", "%.1f", tflop / (ms / 1e3));
    fputc('\n', hx_log());
  }
  hx_dev_free(x);
  hx_dev_free(w);
  hx_dev_free(y);
}
