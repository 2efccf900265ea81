// Developer self-test of the fused system against a naive fp32 GPU formulation written
// independently here (one thread per query row for out/LSE, one per key column for the
// column scores). Fresh random inputs per case; prints one line per case and a summary.
//   fused_selftest [--quick] [--force-sm80]
#include "attnvar.h"

#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static __device__ float naive_score(const half *q, const half *k, int i, int j, int H, int D,
                                    int b, int h, int Lq, int Lkv, int wl) {
  const half *qi = q + (((long)b * Lq + i) * H + h) * D;
  const half *kj = k + (((long)b * Lkv + j) * H + h) * D;
  float acc = 0.f;
  for (int d = 0; d < D; d++) acc += __half2float(qi[d]) * __half2float(kj[d]);
  float s = acc / sqrtf((float)D);
  if (wl == WL_GEMMA2) s = 50.f * tanhf(s / 50.f);
  return s;
}

// Per query row: natural-log LSE of scores and of kf logits, and out = softmax · V (fp32).
__global__ void naive_rows(const half *q, const half *k, const half *v, const float *er,
                           float *out, float *lse, float *lse_kf, int B, int H, int Lq, int Lkv,
                           int D, int wl) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)B * H * Lq) return;
  int i = idx % Lq, h = (idx / Lq) % H, b = idx / ((long)Lq * H);
  int jmax = min(Lkv - 1, i + (Lkv - Lq));
  float m = -INFINITY, mk = -INFINITY;
  for (int j = 0; j <= jmax; j++) {
    float s = naive_score(q, k, i, j, H, D, b, h, Lq, Lkv, wl);
    m = fmaxf(m, s);
    if (wl == WL_KF) mk = fmaxf(mk, (s - logf(er[(((long)b * H + h) * Lq + i) * Lkv + j])) / 1.5f);
  }
  float l = 0.f, lk = 0.f;
  float *o = out + (((long)b * Lq + i) * H + h) * D;
  for (int d = 0; d < D; d++) o[d] = 0.f;
  for (int j = 0; j <= jmax; j++) {
    float s = naive_score(q, k, i, j, H, D, b, h, Lq, Lkv, wl);
    float pr = expf(s - m);
    l += pr;
    const half *vj = v + (((long)b * Lkv + j) * H + h) * D;
    for (int d = 0; d < D; d++) o[d] += pr * __half2float(vj[d]);
    if (wl == WL_KF) lk += expf((s - logf(er[(((long)b * H + h) * Lq + i) * Lkv + j])) / 1.5f - mk);
  }
  for (int d = 0; d < D; d++) o[d] /= l;
  lse[idx] = m + logf(l);
  if (wl == WL_KF) lse_kf[idx] = mk + logf(lk);
}

// Per key column: column sum of P (and P^2), kf score, corm flag and its smallest margin.
__global__ void naive_cols(const half *q, const half *k, const float *er, const float *mask,
                           const float *lse, const float *lse_kf, float *c1, float *c2,
                           float *flag, float *margin, int B, int H, int Lq, int Lkv, int D,
                           int wl) {
  long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)B * H * Lkv) return;
  int j = idx % Lkv, h = (idx / Lkv) % H, b = idx / ((long)Lkv * H);
  float a = 0.f, a2 = 0.f, mg = INFINITY;
  int any = 0;
  for (int i = max(0, j - (Lkv - Lq)); i < Lq; i++) {
    float s = naive_score(q, k, i, j, H, D, b, h, Lq, Lkv, wl);
    long row = ((long)b * H + h) * Lq + i;
    float pr = expf(s - lse[row]);
    if (wl == WL_KF) {
      a += expf((s - logf(er[row * Lkv + j])) / 1.5f - lse_kf[row]);
    } else {
      a += pr;
      a2 += pr * pr;
    }
    float mk = mask ? mask[(long)i * Lkv + j] : 0.f;
    if (mask) {
      any |= pr >= mk;
      mg = fminf(mg, fabsf(pr - mk) / mk);
    }
  }
  c1[idx] = a;
  c2[idx] = a2;
  flag[idx] = any;
  margin[idx] = mg;
}

static uint64_t rng_state;
static double urand() {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand() { return sqrt(-2 * log(urand())) * cos(6.283185307179586 * urand()); }

static double rel_l2(const std::vector<float> &a, const std::vector<float> &ref, double *maxabs) {
  double num = 0, den = 0;
  *maxabs = 0;
  for (size_t i = 0; i < a.size(); i++) {
    double d = (double)a[i] - ref[i];
    if (!(fabs(d) <= 1e30)) return INFINITY; // NaN or inf
    num += d * d;
    den += (double)ref[i] * ref[i];
    *maxabs = fmax(*maxabs, fabs(d));
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

static const char *wl_names[] = {"attn", "h2o", "roco", "kf", "snapkv", "corm", "gemma2"};

static int run_case(const attn_ctx *ctx, int wl, int B, int H, int L, int D) {
  attn_shape sh = {B, H, D, L, L};
  char why[256];
  if (attn_system_fused.supports(ctx, (workload_id)wl, &sh, why, sizeof why) != ATTN_OK) {
    printf("%-7s B=%d H=%d S=%d D=%d unsupported: %s\n", wl_names[wl], B, H, L, D, why);
    return 1;
  }
  size_t nq = (size_t)B * L * H * D, ns = (size_t)B * H * L;
  std::vector<half> hq(nq), hk(nq), hv(nq);
  for (size_t i = 0; i < nq; i++) {
    hq[i] = __float2half((float)nrand());
    hk[i] = __float2half((float)nrand());
    hv[i] = __float2half((float)nrand());
  }
  half *q, *k, *v, *out;
  float *er = nullptr, *mask = nullptr, *score, *score2, *ws = nullptr, *rout, *lse, *lsek, *c1,
        *c2, *fl, *mg;
  uint8_t *flags;
  CK(cudaMalloc(&q, nq * 2));
  CK(cudaMalloc(&k, nq * 2));
  CK(cudaMalloc(&v, nq * 2));
  CK(cudaMalloc(&out, nq * 2));
  CK(cudaMemcpy(q, hq.data(), nq * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(k, hk.data(), nq * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(v, hv.data(), nq * 2, cudaMemcpyHostToDevice));
  if (wl == WL_KF) {
    size_t n = ns * L;
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) h[i] = 1.f + fabsf((float)nrand());
    CK(cudaMalloc(&er, n * 4));
    CK(cudaMemcpy(er, h.data(), n * 4, cudaMemcpyHostToDevice));
  }
  if (wl == WL_CORM) {
    size_t n = (size_t)L * L;
    std::vector<float> h(n);
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) h[(size_t)i * L + j] = 1.f / (i + 1);
    CK(cudaMalloc(&mask, n * 4));
    CK(cudaMemcpy(mask, h.data(), n * 4, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&score, ns * 4));
  CK(cudaMalloc(&score2, ns * 4));
  CK(cudaMalloc(&flags, ns));
  size_t wsb = attn_system_fused.workspace_bytes(ctx, (workload_id)wl, &sh);
  if (wsb) CK(cudaMalloc(&ws, wsb));
  // poison outputs: NaN (0xff bytes) so unwritten elements fail
  CK(cudaMemset(out, 0xff, nq * 2));
  CK(cudaMemset(score, 0xff, ns * 4));
  CK(cudaMemset(score2, 0xff, ns * 4));
  CK(cudaMemset(flags, 0xee, ns));
  attn_io io = {q, k, v, er, mask, out, score, score2, flags};
  int rc = attn_system_fused.run(ctx, (workload_id)wl, &sh, &io, ws);
  CK(cudaStreamSynchronize(ctx->stream));
  if (rc != ATTN_OK) {
    printf("%-7s run failed rc=%d\n", wl_names[wl], rc);
    return 0;
  }
  CK(cudaMalloc(&rout, nq * 4));
  CK(cudaMalloc(&lse, ns * 4));
  CK(cudaMalloc(&lsek, ns * 4));
  CK(cudaMalloc(&c1, ns * 4));
  CK(cudaMalloc(&c2, ns * 4));
  CK(cudaMalloc(&fl, ns * 4));
  CK(cudaMalloc(&mg, ns * 4));
  naive_rows<<<(unsigned)((ns + 127) / 128), 128>>>(q, k, v, er, rout, lse, lsek, B, H, L, L, D, wl);
  CK(cudaGetLastError());
  naive_cols<<<(unsigned)((ns + 127) / 128), 128>>>(q, k, er, mask, lse, lsek, c1, c2, fl, mg, B, H, L,
                                                  L, D, wl);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  std::vector<half> hout(nq);
  std::vector<float> fout(nq), rref(nq), s1(ns), s2(ns), r1(ns), r2(ns), rfl(ns), rmg(ns);
  std::vector<uint8_t> hfl(ns);
  CK(cudaMemcpy(hout.data(), out, nq * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rref.data(), rout, nq * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < nq; i++) fout[i] = __half2float(hout[i]);
  CK(cudaMemcpy(s1.data(), score, ns * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(s2.data(), score2, ns * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hfl.data(), flags, ns, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r1.data(), c1, ns * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r2.data(), c2, ns * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rfl.data(), fl, ns * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(rmg.data(), mg, ns * 4, cudaMemcpyDeviceToHost));

  double ma, e_out = rel_l2(fout, rref, &ma);
  bool ok = e_out < 2e-3;
  printf("%-7s B=%d H=%d S=%-5d D=%-3d out rel_l2=%.2e max_abs=%.2e", wl_names[wl], B, H, L, D,
         e_out, ma);
  if (wl == WL_SNAPKV) { // pool the naive column sums on the host
    std::vector<float> pooled(ns);
    for (size_t r = 0; r < ns / L; r++)
      for (int j = 0; j < L; j++) {
        double s = 0;
        for (int d = -2; d <= 2; d++)
          if (j + d >= 0 && j + d < L) s += r1[r * L + j + d];
        pooled[r * L + j] = (float)(s / 5);
      }
    r1 = pooled;
  }
  if (wl == WL_H2O || wl == WL_ROCO || wl == WL_KF || wl == WL_SNAPKV) {
    double e = rel_l2(s1, r1, &ma);
    printf(" score rel_l2=%.2e max_abs=%.2e", e, ma);
    ok = ok && e < 1e-3;
  }
  if (wl == WL_ROCO) {
    double e = rel_l2(s2, r2, &ma);
    printf(" score2 rel_l2=%.2e", e);
    ok = ok && e < 1e-3;
  }
  if (wl == WL_CORM) {
    long bad = 0, near = 0, ones = 0;
    for (size_t i = 0; i < ns; i++) {
      ones += rfl[i] > 0.5f;
      if (hfl[i] > 1) { bad++; continue; }
      if ((hfl[i] != 0) != (rfl[i] > 0.5f)) {
        if (rmg[i] < 1e-3f) near++;
        else bad++;
      }
    }
    printf(" flags mismatched=%ld near_ties=%ld ones=%ld/%zu", bad, near, ones, ns);
    ok = ok && bad == 0;
  }
  printf(" %s\n", ok ? "PASS" : "FAIL");
  cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(out); cudaFree(er); cudaFree(mask);
  cudaFree(score); cudaFree(score2); cudaFree(flags); cudaFree(ws); cudaFree(rout);
  cudaFree(lse); cudaFree(lsek); cudaFree(c1); cudaFree(c2); cudaFree(fl); cudaFree(mg);
  return ok;
}

static float time_case(const attn_ctx *ctx, int wl, int L, int reps) {
  attn_shape sh = {1, 32, 128, L, L};
  size_t nq = (size_t)L * 32 * 128, ns = (size_t)32 * L;
  half *q, *k, *v, *out;
  float *er = nullptr, *mask = nullptr, *score, *score2, *ws = nullptr;
  uint8_t *flags;
  CK(cudaMalloc(&q, nq * 2)); CK(cudaMalloc(&k, nq * 2)); CK(cudaMalloc(&v, nq * 2));
  CK(cudaMalloc(&out, nq * 2));
  std::vector<half> h(nq);
  for (size_t i = 0; i < nq; i++) h[i] = __float2half((float)nrand());
  CK(cudaMemcpy(q, h.data(), nq * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(k, h.data(), nq * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(v, h.data(), nq * 2, cudaMemcpyHostToDevice));
  if (wl == WL_KF) {
    CK(cudaMalloc(&er, ns * L * 4));
    std::vector<float> hf((size_t)L * L);
    for (auto &x : hf) x = 1.f + fabsf((float)nrand());
    for (int r = 0; r < 32; r++) CK(cudaMemcpy(er + (size_t)r * L * L, hf.data(), hf.size() * 4, cudaMemcpyHostToDevice));
  }
  if (wl == WL_CORM) {
    std::vector<float> hf((size_t)L * L);
    for (int i = 0; i < L; i++) for (int j = 0; j < L; j++) hf[(size_t)i * L + j] = 1.f / (i + 1);
    CK(cudaMalloc(&mask, hf.size() * 4));
    CK(cudaMemcpy(mask, hf.data(), hf.size() * 4, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&score, ns * 4)); CK(cudaMalloc(&score2, ns * 4)); CK(cudaMalloc(&flags, ns));
  size_t wsb = attn_system_fused.workspace_bytes(ctx, (workload_id)wl, &sh);
  if (wsb) CK(cudaMalloc(&ws, wsb));
  attn_io io = {q, k, v, er, mask, out, score, score2, flags};
  for (int i = 0; i < 10; i++) attn_system_fused.run(ctx, (workload_id)wl, &sh, &io, ws);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, ctx->stream));
  for (int i = 0; i < reps; i++) attn_system_fused.run(ctx, (workload_id)wl, &sh, &io, ws);
  CK(cudaEventRecord(e1, ctx->stream));
  CK(cudaEventSynchronize(e1));
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(out); cudaFree(er); cudaFree(mask);
  cudaFree(score); cudaFree(score2); cudaFree(flags); cudaFree(ws);
  return ms / reps;
}

int main(int argc, char **argv) {
  int quick = 0, force80 = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--force-sm80")) force80 = 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  attn_ctx ctx = {};
  CK(cudaStreamCreate(&ctx.stream));
  ctx.sm_count = prop.multiProcessorCount;
  ctx.cc_major = prop.major;
  ctx.cc_minor = prop.minor;
  ctx.force_sm80 = force80;
  printf("# fused selftest on %s (cc %d.%d)%s\n", prop.name, prop.major, prop.minor,
         force80 ? " forced sm80" : "");
  rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
  struct { int B, H, L, D; } sizes[] = {{1, 1, 1, 128}, {1, 2, 17, 128}, {2, 3, 100, 64},
                                        {1, 2, 257, 128}, {1, 1, 64, 64},  {2, 4, 513, 128},
                                        {1, 32, 1024, 128}};
  int pass = 0, total = 0;
  for (auto &s : sizes)
    for (int wl = 0; wl < WL_COUNT; wl++) {
      total++;
      pass += run_case(&ctx, wl, s.B, s.H, s.L, s.D);
    }
  if (!quick)
    for (int wl = 0; wl < WL_COUNT; wl++) {
      total++;
      pass += run_case(&ctx, wl, 1, 32, 4096, 128);
    }
  printf("%d passed, %d failed\n", pass, total - pass);
  printf("# timing B=1 H=32 D=128 (fused, ms, mean of 20 after 10 warmups)\n");
  for (int wl = 0; wl < WL_COUNT; wl++) {
    float t = time_case(&ctx, wl, 4096, 20);
    printf("time %-7s S=4096 %.4f ms  %.1f TFLOP/s(paper count)\n", wl_names[wl], t,
           4.0 * 32 * 4096.0 * 4096 * 128 / 2 / (t * 1e-3) / 1e12);
  }
  for (int L = 1024; L <= 8192; L *= 2) {
    float t = time_case(&ctx, WL_H2O, L, 20);
    printf("time h2o     S=%-4d %.4f ms\n", L, t);
  }
  return pass != total;
}
