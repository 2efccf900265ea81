/* Test fixture (no GPU): gemm_gpu.h on the host, so gemmbench.c's GPU path (the poisoned run,
 * the inputs check, the full and sampled checks of C, exit codes, the log) runs on the CPU
 * (tests/gemm/test_gpu_path.sh). The "device" draws A and B with gemm_fill_host, the bits the
 * real fill writes, and its "kernel" is C = A·B in double, rounded to the dtype. Planted
 * faults (FAKE_GPU_FAULT):
 *   block   a 64 x 64 block of C (rows and columns 64..127) left unwritten (NaN), as a tile
 *           that a kernel skipped
 *   column  the last column of C unwritten (an N-edge bug)
 *   scale   every entry 0.5 % too large (a systematic error)
 *   input   one element of the device's A differs from the host's draw
 *   launch  the run fails with an error, as a failed launch */
#include "gemm_gpu.h"

#include <stdlib.h>
#include <string.h>

static hx_ctx ctx;
static char err[256];
static gemm_problem P;
static unsigned char *buf[3];

static const char *fault(void) {
  const char *f = getenv("FAKE_GPU_FAULT");
  return f ? f : "";
}

int gemm_gpu_open(hx_device_info *info, gemm_device *dev, char *why, size_t why_len) {
  (void)why, (void)why_len;
  hx_device_info_cpu(info);
  snprintf(info->gpu, sizeof info->gpu, "FIXTURE (host stand-in for the GPU)");
  snprintf(info->cc, sizeof info->cc, "9.0");
  info->sms = 132;
  memset(&ctx, 0, sizeof ctx);
  ctx.err = err;
  ctx.err_len = sizeof err;
  ctx.cc_major = 9;
  *dev = (gemm_device){9, 0, 132, 232448, 1024, 65536};
  return 1;
}

const hx_ctx *gemm_gpu_ctx(void) { return &ctx; }

void gemm_gpu_setup(const gemm_problem *p, uint64_t seed) {
  P = *p;
  size_t es = gemm_elem_bytes(p->dtype);
  size_t n[3] = {(size_t)p->m * p->k, (size_t)p->k * p->n, (size_t)p->m * p->n};
  for (int i = 0; i < 3; i++) buf[i] = hx_host_alloc(n[i] * es, "fake device buffer");
  gemm_fill_host(buf[0], 0, n[0], seed, GEMM_STREAM_A, p->dtype);
  gemm_fill_host(buf[1], 0, n[1], seed, GEMM_STREAM_B, p->dtype);
  if (!strcmp(fault(), "input")) buf[0][es * (n[0] / 2)] ^= 0x10;
}

int gemm_gpu_prepare(gemm_plan *pl) {
  (void)pl;
  return HX_OK;
}

static void put(size_t e, double v) {
  if (P.dtype == GEMM_FP32)
    ((float *)buf[2])[e] = (float)v;
  else
    ((uint16_t *)buf[2])[e] = rng_float_to_elem((float)v, P.dtype == GEMM_BF16);
}

int gemm_gpu_run(const gemm_plan *pl) {
  (void)pl;
  if (!strcmp(fault(), "launch"))
    return hx_fail(&ctx, HX_ERR, "fixture: launching the kernel failed");
  const long M = P.m, N = P.n, K = P.k;
  double *row = hx_host_alloc((size_t)N * sizeof *row, "fake row");
  for (long i = 0; i < M; i++) {
    for (long j = 0; j < N; j++) row[j] = 0;
    for (long k = 0; k < K; k++) {
      double a = gemm_load(buf[0], (size_t)i * K + k, P.dtype);
      for (long j = 0; j < N; j++) row[j] += a * gemm_load(buf[1], (size_t)k * N + j, P.dtype);
    }
    for (long j = 0; j < N; j++) {
      int skip = (!strcmp(fault(), "block") && i >= 64 && i < 128 && j >= 64 && j < 128) ||
                 (!strcmp(fault(), "column") && j == N - 1);
      if (!skip) put((size_t)i * N + j, !strcmp(fault(), "scale") ? row[j] * 1.005 : row[j]);
    }
  }
  hx_host_free(row);
  return HX_OK;
}

int gemm_gpu_time(const gemm_plan *pl, int warmup, int runs, float *ms, hx_timing *how) {
  (void)pl, (void)warmup;
  for (int i = 0; i < runs; i++) ms[i] = 1.0f;
  *how = (hx_timing){HX_TIMING_EVENTS, 1};
  return HX_OK;
}

void gemm_gpu_poison_c(void) { memset(buf[2], 0xff, (size_t)P.m * P.n * gemm_elem_bytes(P.dtype)); }

void gemm_gpu_download(gemm_buf which, size_t e0, size_t n, void *dst) {
  size_t es = gemm_elem_bytes(P.dtype);
  memcpy(dst, buf[which] + e0 * es, n * es);
}

void gemm_gpu_close(void) {
  for (int i = 0; i < 3; i++) hx_host_free(buf[i]), buf[i] = NULL;
}
