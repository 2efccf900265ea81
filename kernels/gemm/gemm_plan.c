/* gemm_plan.c: tile plans of wgmma and mma and the host-side checks of their launch
 * configuration (gemm_plan.h). Plain C: the CPU tests run it. */
#include "gemm_plan.h"

#include "hx_ctx.h"
#include "kvline.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int refuse(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t why_len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  return HX_UNSUPPORTED;
}

static int ceil_div(long a, long b) { return (int)((a + b - 1) / b); }

/* What both of our kernels need of the problem: 16-bit inputs, 16-byte row pitches. */
static int check_ours(const char *sys, const gemm_problem *p, char *why, size_t why_len) {
  if (p->dtype == GEMM_FP32)
    return refuse(why, why_len,
                  "%s takes fp16 or bf16 inputs (fp32 would need tf32 tensor-core math, not "
                  "implemented); --system cublas runs fp32",
                  sys);
  if (p->k % 8 || p->n % 8)
    return refuse(why, why_len,
                  "%s loads rows in 16-byte pieces (TMA and cp.async): K and N must be "
                  "multiples of 8 (have K=%ld, N=%ld)",
                  sys, p->k, p->n);
  return HX_OK;
}

static int check_smem(const char *sys, int bytes, const gemm_device *dev, char *why,
                      size_t why_len) {
  if (bytes > GEMM_SMEM_LIMIT)
    return refuse(why, why_len, "%s: plan needs %d bytes of shared memory, over 227 KiB", sys,
                  bytes);
  if (dev && bytes > dev->smem_optin)
    return refuse(why, why_len, "%s: plan needs %d bytes of shared memory, the device allows %d",
                  sys, bytes, dev->smem_optin);
  return HX_OK;
}

static void tiles(gemm_plan *pl, const gemm_problem *p) {
  pl->tiles_m = ceil_div(p->m, pl->bm);
  pl->tiles_n = ceil_div(p->n, pl->bn);
  pl->tiles = pl->tiles_m * pl->tiles_n;
  pl->k_blocks = ceil_div(p->k, pl->bk);
}

static int plan_wgmma(const gemm_problem *p, int tile_n, int cluster, const gemm_device *dev,
                      gemm_plan *pl, char *why, size_t why_len) {
  if (dev && (dev->cc_major != 9 || dev->cc_minor != 0))
    return refuse(why, why_len,
                  "wgmma is built for sm_90a and runs on compute capability 9.0 only (have %d.%d)",
                  dev->cc_major, dev->cc_minor);
  int rc = check_ours("wgmma", p, why, why_len);
  if (rc) return rc;
  int sms = dev ? dev->sms : 132;
  if (tile_n == 0) { /* 256-wide tiles unless there are too few of them to fill the SMs */
    long t256 = (long)ceil_div(p->m, GW_BM) * ceil_div(p->n, 256);
    tile_n = t256 >= sms ? 256 : 128;
  }
  if (tile_n != 128 && tile_n != 256)
    return refuse(why, why_len, "wgmma: tile width %d (expected 128 or 256)", tile_n);
  pl->bm = GW_BM, pl->bn = tile_n, pl->bk = GW_BK;
  pl->stages = GW_STAGES(tile_n);
  pl->threads = GW_THREADS;
  pl->smem_bytes = GW_SMEM_BYTES(tile_n);
  pl->group_m = GW_GROUP_M;
  pl->cluster = cluster ? cluster : 1;
  if (pl->cluster != 1 && pl->cluster != 2)
    return refuse(why, why_len, "wgmma: cluster of %d CTAs (expected 1 or 2)", pl->cluster);
  tiles(pl, p);
  /* one CTA (cluster) per unit of work, at most one per SM; gemm_gpu.cu lowers it to the
   * clusters the device can hold at once */
  pl->units = gw_units(pl->tiles_m, pl->tiles_n, pl->cluster);
  int slots = sms / pl->cluster;
  pl->grid = (pl->units < slots ? pl->units : slots) * pl->cluster;
  /* the launch: shared memory, threads, the register split setmaxnreg makes */
  if ((rc = check_smem("wgmma", pl->smem_bytes, dev, why, why_len))) return rc;
  if (dev && dev->max_threads < GW_THREADS)
    return refuse(why, why_len, "wgmma: %d threads per block, the device allows %d", GW_THREADS,
                  dev->max_threads);
  int regs = 128 * GW_PRODUCER_REGS + GW_CONSUMERS * 128 * GW_CONSUMER_REGS;
  if (regs > (dev ? dev->regs_per_sm : 65536) ||
      GW_PRODUCER_REGS + GW_CONSUMERS * GW_CONSUMER_REGS != 3 * GW_ENTRY_REGS ||
      GW_ENTRY_REGS != (65536 / GW_THREADS) / 8 * 8)
    return refuse(why, why_len,
                  "wgmma: register split %d/%d does not add up to %d per thread at entry",
                  GW_PRODUCER_REGS, GW_CONSUMER_REGS, GW_ENTRY_REGS);
  /* TMA: boxes of at most 256 rows, 128-byte inner extent for the 128B swizzle, every box
   * destination 1024-byte aligned (stage sizes are multiples of 1024) */
  if (GW_BOX * 2 != 128 || GW_BM > 256 || GW_BK > 256 || GW_A_STAGE_BYTES % GW_ALIGN ||
      GW_B_BOX_BYTES % GW_ALIGN || tile_n % GW_BOX || GW_BK != GW_BOX)
    return refuse(why, why_len, "wgmma: box sizes do not fit TMA's 128B swizzle");
  snprintf(pl->impl, sizeof pl->impl, "wgmma-%dx%dx%d-s%d-ws-persistent%s", pl->bm, pl->bn, pl->bk,
           pl->stages, pl->cluster == 2 ? "-c2" : "");
  return HX_OK;
}

static int plan_mma(const gemm_problem *p, const gemm_device *dev, gemm_plan *pl, char *why,
                    size_t why_len) {
  if (dev && dev->cc_major < 8)
    return refuse(why, why_len, "mma needs compute capability 8.0 or later (have %d.%d)",
                  dev->cc_major, dev->cc_minor);
  int rc = check_ours("mma", p, why, why_len);
  if (rc) return rc;
  pl->bm = GM_BM, pl->bn = GM_BN, pl->bk = GM_BK;
  pl->stages = GM_STAGES;
  pl->threads = GM_THREADS;
  pl->smem_bytes = GM_SMEM_BYTES;
  pl->group_m = GM_GROUP_M;
  tiles(pl, p);
  pl->grid = pl->tiles;
  if ((rc = check_smem("mma", pl->smem_bytes, dev, why, why_len))) return rc;
  if (dev && dev->max_threads < GM_THREADS)
    return refuse(why, why_len, "mma: %d threads per block, the device allows %d", GM_THREADS,
                  dev->max_threads);
  snprintf(pl->impl, sizeof pl->impl, "mma-sync-%dx%dx%d-s%d", pl->bm, pl->bn, pl->bk, pl->stages);
  return HX_OK;
}

int gemm_plan_make(int system, const gemm_problem *p, int tile_n, int cluster,
                   const gemm_device *dev, gemm_plan *pl, char *why, size_t why_len) {
  memset(pl, 0, sizeof *pl);
  pl->system = system;
  switch (system) {
  case GEMM_SYS_REF: snprintf(pl->impl, sizeof pl->impl, "ref-double-ikj"); return HX_OK;
  case GEMM_SYS_CUBLAS:
    snprintf(pl->impl, sizeof pl->impl, "cublasGemmEx-compute32F");
    return HX_OK;
  case GEMM_SYS_WGMMA: return plan_wgmma(p, tile_n, cluster, dev, pl, why, why_len);
  case GEMM_SYS_MMA: return plan_mma(p, dev, pl, why, why_len);
  default: return refuse(why, why_len, "unknown system %d", system);
  }
}

void gemm_plan_print(const gemm_plan *pl) {
  if (pl->system != GEMM_SYS_WGMMA && pl->system != GEMM_SYS_MMA) return;
  FILE *out = hx_log();
  fputs("plan", out);
  kv_put(out, "kernel", pl->system == GEMM_SYS_WGMMA ? "wgmma" : "mma");
  kv_putf(out, "tile", "%dx%dx%d", pl->bm, pl->bn, pl->bk);
  kv_putf(out, "stages", "%d", pl->stages);
  kv_putf(out, "threads", "%d", pl->threads);
  kv_putf(out, "smem_bytes", "%d", pl->smem_bytes);
  kv_putf(out, "group_m", "%d", pl->group_m);
  kv_putf(out, "tiles", "%dx%d", pl->tiles_m, pl->tiles_n);
  kv_putf(out, "k_blocks", "%d", pl->k_blocks);
  kv_putf(out, "grid", "%d", pl->grid);
  if (pl->system == GEMM_SYS_WGMMA) {
    kv_putf(out, "cluster", "%d", pl->cluster);
    kv_put(out, "swizzle", "128B");
    kv_putf(out, "regs", "%d/%d", GW_PRODUCER_REGS, GW_CONSUMER_REGS);
  } else {
    kv_put(out, "swizzle", "xor16B");
  }
  if (pl->kernel_regs) { /* what the compiled kernel reports (gemm_gpu.cu) */
    kv_putf(out, "kernel_regs", "%d", pl->kernel_regs);
    kv_putf(out, "local_bytes", "%d", pl->local_bytes);
    kv_putf(out, "ctas_per_sm", "%d", pl->ctas_per_sm);
  }
  fputc('\n', out);
  hx_log_flush();
}
