// kron_kernels.cu: v3's kernels. k_stage applies a stage's axes to tiles held in shared memory
// on the CUDA cores (register-tiled FMA), k_stage_tc<T, WM, WN> runs single-axis and pair
// stages on the tensor cores (3xTF32 mma for fp32, DMMA for fp64), and k_grad computes every
// gA_k. kron_tile.h has the index arithmetic, shared with the CPU emulation in kron_cpu.c,
// which runs the same plans thread by thread; kron_launch.cu launches the kernels through the
// lookups at the end of this file (kron_kernels.cuh).
#include "kron_kernels.cuh"
#include "kron_tile.h"
#include "mma_sm80.cuh"

extern __shared__ __align__(16) unsigned char kron_smem[];

// Programmatic dependent launch (sm_90): a v3 kernel lets the next one launch as soon as every
// block of it runs (the next one's blocks take SM room as it frees up, and do their setup and
// A's copy meanwhile), and waits for the previous kernel's completion (and its writes) before
// it reads a buffer another kernel wrote. Without the launch attribute both are no-ops.
__device__ __forceinline__ void pdl_launch_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait_previous() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// CV consecutive elements: one 16-byte access, or one element
template <int CV, typename T> struct chunk {
  static __device__ __forceinline__ void ld(const T *p, T *r) { r[0] = p[0]; }
  static __device__ __forceinline__ void st(T *p, const T *r) { p[0] = r[0]; }
};
template <> struct chunk<4, float> {
  static __device__ __forceinline__ void ld(const float *p, float *r) {
    float4 v = *reinterpret_cast<const float4 *>(p);
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
  }
  static __device__ __forceinline__ void st(float *p, const float *r) {
    *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
  }
};
template <> struct chunk<2, double> {
  static __device__ __forceinline__ void ld(const double *p, double *r) {
    double2 v = *reinterpret_cast<const double2 *>(p);
    r[0] = v.x, r[1] = v.y;
  }
  static __device__ __forceinline__ void st(double *p, const double *r) {
    *reinterpret_cast<double2 *>(p) = make_double2(r[0], r[1]);
  }
};

// one element global -> shared, asynchronously
__device__ __forceinline__ void cp_elem(float *s, const float *g) { fused::cp_async4(s, g); }
__device__ __forceinline__ void cp_elem(double *s, const double *g) { fused::cp_async8(s, g); }

// The register-tiled micro-kernel: acc[i][j] += sum_{k0 <= k < k1} P[k][row i] Q[k][col j].
// Row chunk r (RV elements) sits at prow[r] of a P row, column chunk c (CV) at qoff[c] of a Q
// row; -1: outside the matrix. Such a chunk reads column 0 instead (a valid address) and its
// accumulators hold garbage the callers never store: no branch and no zeroing per k (in ncu,
// per-k validity tests are half such a loop's instructions: studies/kron-layer/README.md).
template <typename T, int TM, int TN, int RV, int CV>
__device__ __forceinline__ void mk_loop(const T *P, int ldp, const int *prow, const T *Q, int ldq,
                                        const int *qoff, int k0, int k1, T (&acc)[TM][TN]) {
  const T *pp[TM / RV], *qp[TN / CV];
#pragma unroll
  for (int r = 0; r < TM / RV; r++) pp[r] = P + (long long)k0 * ldp + (prow[r] >= 0 ? prow[r] : 0);
#pragma unroll
  for (int c = 0; c < TN / CV; c++) qp[c] = Q + (long long)k0 * ldq + (qoff[c] >= 0 ? qoff[c] : 0);
  constexpr int kUnroll = TM * TN * sizeof(T) <= 64 ? 4 : 2; // 8x8 fp32 at 4 spills
#pragma unroll kUnroll
  for (int k = k0; k < k1; k++) {
    T a[TM], b[TN];
#pragma unroll
    for (int r = 0; r < TM / RV; r++) {
      chunk<RV, T>::ld(pp[r], a + r * RV);
      pp[r] += ldp;
    }
#pragma unroll
    for (int c = 0; c < TN / CV; c++) {
      chunk<CV, T>::ld(qp[c], b + c * CV);
      qp[c] += ldq;
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
      for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
  }
}

// ---- tensor cores: a warp's wm x wn block of mma tiles (kron_tile.h has the fragments) ------
template <typename T> struct tc_ops;

// two neighbouring elements in one store (8 or 16 bytes, aligned by the caller)
template <typename T> struct pair;
template <> struct pair<float> {
  static __device__ __forceinline__ void st(float *p, float a, float b) {
    *reinterpret_cast<float2 *>(p) = make_float2(a, b);
  }
};
template <> struct pair<double> {
  static __device__ __forceinline__ void st(double *p, double a, double b) {
    *reinterpret_cast<double2 *>(p) = make_double2(a, b);
  }
};

// fp32: m16n8k8 tf32 three times (3xTF32): x = big + small with big = x truncated to tf32 (a
// mask: cvt.rna compiles to a compare-and-select sequence that dominates the loop in ncu,
// studies/kron-layer/README.md) and small = x - big (exact; the tensor core reads its top 19
// bits, as it does any fp32 operand). big*big + big*small + small*big keeps fp32 accuracy
// (small*small is below it, and so is small's truncation), the small products first.
template <> struct tc_ops<float> {
  static constexpr int ES = 4, MR = 16, KS = 8, AR = 4, BR = 2, CR = 4;
  static __device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  template <int N>
  static __device__ __forceinline__ void split(const float (&x)[N], uint32_t (&big)[N],
                                               uint32_t (&small)[N]) {
#pragma unroll
    for (int i = 0; i < N; i++) {
      big[i] = __float_as_uint(x[i]) & 0xffffe000u;
      small[i] = __float_as_uint(x[i] - __uint_as_float(big[i]));
    }
  }
  template <int WM, int WN>
  static __device__ __forceinline__ void step(float (&acc)[WM][WN][CR], const float (&a)[WM][AR],
                                              const float (&b)[WN][BR]) {
    uint32_t ab[WM][AR], as[WM][AR], bb[WN][BR], bs[WN][BR];
#pragma unroll
    for (int i = 0; i < WM; i++) split(a[i], ab[i], as[i]);
#pragma unroll
    for (int j = 0; j < WN; j++) split(b[j], bb[j], bs[j]);
      // pass by pass: consecutive mma's go to different accumulators (each one's three are
      // dependent)
#pragma unroll
    for (int i = 0; i < WM; i++)
#pragma unroll
      for (int j = 0; j < WN; j++) mma(acc[i][j], as[i], bb[j]);
#pragma unroll
    for (int i = 0; i < WM; i++)
#pragma unroll
      for (int j = 0; j < WN; j++) mma(acc[i][j], ab[i], bs[j]);
#pragma unroll
    for (int i = 0; i < WM; i++)
#pragma unroll
      for (int j = 0; j < WN; j++) mma(acc[i][j], ab[i], bb[j]);
  }
};

// fp64: m8n8k4 DMMA
template <> struct tc_ops<double> {
  static constexpr int ES = 8, MR = 8, KS = 4, AR = 1, BR = 1, CR = 2;
  template <int WM, int WN>
  static __device__ __forceinline__ void step(double (&acc)[WM][WN][CR], const double (&a)[WM][AR],
                                              const double (&b)[WN][BR]) {
#pragma unroll
    for (int i = 0; i < WM; i++)
#pragma unroll
      for (int j = 0; j < WN; j++)
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, "
                     "{%0,%1};\n"
                     : "+d"(acc[i][j][0]), "+d"(acc[i][j][1])
                     : "d"(a[i][0]), "d"(b[j][0]));
  }
};

// acc += sum over k in [k0, k1) of Am(m, k) Bm(k, n) for the warp's tiles at (m0, n0): Am(m, k)
// at Am[m*a_sm + k*a_sk], Bm(k, n) at Bm[k*ldb + n], or Bm[n*ldb + k] with BN (n-major: a
// transposed tile; compile-time, so the fragments' offsets stay immediates); k1 - k0 a
// multiple of the k step.
template <typename T, int WM, int WN, int BN>
__device__ __forceinline__ void tc_gemm(T (&acc)[WM][WN][tc_ops<T>::CR], const T *Am, int a_sm,
                                        int a_sk, const T *Bm, int ldb, int m0, int n0, int k0,
                                        int k1) {
  const int b_sk = BN ? 1 : ldb, b_sn = BN ? ldb : 1;
  using O = tc_ops<T>;
  const int lane = threadIdx.x & 31;
  const T *ap[O::AR], *bp[O::BR];
#pragma unroll
  for (int i = 0; i < O::AR; i++) {
    int r, k;
    kron_tc_frag_a(O::ES, lane, i, &r, &k);
    ap[i] = Am + (m0 + r) * a_sm + (k0 + k) * a_sk;
  }
#pragma unroll
  for (int i = 0; i < O::BR; i++) {
    int k, c;
    kron_tc_frag_b(O::ES, lane, i, &k, &c);
    bp[i] = Bm + (k0 + k) * b_sk + (n0 + c) * b_sn;
  }
  const int a_tile = O::MR * a_sm, a_step = O::KS * a_sk, b_step = O::KS * b_sk,
            b_tile = KRON_TC_N * b_sn;
#pragma unroll 2
  for (int k = k0; k < k1; k += O::KS) {
    T a[WM][O::AR], b[WN][O::BR];
#pragma unroll
    for (int i = 0; i < WM; i++)
#pragma unroll
      for (int r = 0; r < O::AR; r++) a[i][r] = ap[r][i * a_tile];
#pragma unroll
    for (int j = 0; j < WN; j++)
#pragma unroll
      for (int r = 0; r < O::BR; r++) b[j][r] = bp[r][j * b_tile];
    O::template step<WM, WN>(acc, a, b);
#pragma unroll
    for (int r = 0; r < O::AR; r++) ap[r] += a_step;
#pragma unroll
    for (int r = 0; r < O::BR; r++) bp[r] += b_step;
  }
}

// visit(row, col, regs) for every STEP-th accumulator register of the warp's tiles, rows and
// columns relative to (m0, n0); regs points at the register and, with STEP 2, its neighbour:
// registers 2i, 2i+1 of a lane are columns col, col + 1 of a row (kron_tc_frag_c, tested), so
// they go as one 2-element store
template <typename T, int WM, int WN, int STEP, typename F>
__device__ __forceinline__ void tc_each_regs(const T (&acc)[WM][WN][tc_ops<T>::CR], F visit) {
  using O = tc_ops<T>;
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int i = 0; i < WM; i++)
#pragma unroll
    for (int j = 0; j < WN; j++)
#pragma unroll
      for (int r = 0; r < O::CR; r += STEP) {
        int row, col;
        kron_tc_frag_c(O::ES, lane, r, &row, &col);
        visit(i * O::MR + row, j * KRON_TC_N + col, &acc[i][j][r]);
      }
}

// visit(row, col, value) for each accumulator
template <typename T, int WM, int WN, typename F>
__device__ __forceinline__ void tc_each(const T (&acc)[WM][WN][tc_ops<T>::CR], F visit) {
  tc_each_regs<T, WM, WN, 1>(acc, [&](int row, int col, const T *v) { visit(row, col, v[0]); });
}

template <typename T, int WM, int WN>
__device__ __forceinline__ void tc_zero(T (&acc)[WM][WN][tc_ops<T>::CR]) {
#pragma unroll
  for (int i = 0; i < WM; i++)
#pragma unroll
    for (int j = 0; j < WN; j++)
#pragma unroll
      for (int r = 0; r < tc_ops<T>::CR; r++) acc[i][j][r] = 0;
}
// A_l into shared memory as P: row b holds A[.][b] (forward) or A[b][.] (trans, and always for
// the tensor cores, whose fragments read either way: `rows`); the padding columns are zero, so
// a row chunk that straddles f reads zeros. rows: a straight copy with cp.async (16 bytes
// where aligned). Forward, a transpose element by element with cp.async:
// consecutive threads read consecutive elements of a row of A (coalesced) and write down a
// column (bank conflicts, but asynchronous: a register-staged, conflict-free transpose stalls
// the stage on its synchronous global loads, studies/kron-layer/README.md).
template <typename T>
__device__ void load_a(T *dst, int lda, const T *__restrict__ A, int f, int rows) {
  constexpr int VW = 16 / sizeof(T);
  bool aligned = reinterpret_cast<size_t>(A) % 32 == 0;
  if (rows && aligned && f % VW == 0) {
    kron_radix r = {f / VW, f, (long long)f * f / VW, VW}; // unit (column chunk c, row s)
    kron_walk w = kron_walk_start(&r, threadIdx.x, blockDim.x);
    for (int e = threadIdx.x; e < (int)r.units; e += blockDim.x, kron_walk_next(&w))
      fused::cp_async16(dst + w.s * lda + w.c * VW, A + e * VW, true);
  } else {
    kron_radix r = {f, f, (long long)f * f, 1}; // element e = (row i, column j): digits (j, i)
    kron_walk w = kron_walk_start(&r, threadIdx.x, blockDim.x);
    for (int e = threadIdx.x; e < f * f; e += blockDim.x, kron_walk_next(&w))
      cp_elem(rows ? dst + w.s * lda + w.c : dst + w.c * lda + w.s, A + e);
  }
  int pad = lda - f;
  for (int e = threadIdx.x; e < f * pad; e += blockDim.x) dst[e / pad * lda + f + e % pad] = 0;
}

// Tile `t` global -> shared (asynchronously) or shared -> global, each thread walking its
// units blockDim.x apart from w0 (kron_walk_start of radix r, once per kernel: the walk is the
// same for every tile). TR: the tiling is transposed (tl.tr, known to the caller: the
// offsets fold at compile time); transposed tiles are loads only.
template <typename T, int TR>
__device__ __forceinline__ void tile_copy(const kron_tiling &tl, const kron_radix &r,
                                          const kron_walk &w0, long long t, const T *__restrict__ g,
                                          T *s, T *gout) {
  constexpr int VW = 16 / sizeof(T);
  const long long gb = kron_tile_base(&tl, t);
  kron_walk w = w0;
  for (int e = threadIdx.x; e < (int)r.units; e += blockDim.x, kron_walk_next(&w)) {
    int sm =
        TR ? kron_tr_sm(&tl, r.per, w.c, w.s, w.nb) : kron_stage_sm(&tl, r.per, w.c, w.s, w.nb);
    long long ga = gb + (TR ? kron_tr_goff(&tl, r.per, w.c, w.s, w.nb)
                            : kron_stage_goff(&tl, r.per, w.c, w.s, w.nb));
    if (gout) {
      if (r.per > 1) { // shared -> registers -> global, 16 bytes each way
        T v[VW];
        chunk<VW, T>::ld(s + sm, v);
        chunk<VW, T>::st(gout + ga, v);
      } else {
        gout[ga] = s[sm];
      }
    } else if (r.per > 1) {
      fused::cp_async16(s + sm, g + ga, true);
    } else {
      cp_elem(s + sm, g + ga);
    }
  }
}

// One contraction of the stage's axis (kron_ctr): out[hi][a][lo] = sum_b P[b][a] in[hi][b][lo],
// work unit u = (hi, row group, column group) with a TM x TN micro-tile per unit.
template <typename T, int TM, int TN, int CV>
__device__ __forceinline__ void contract_mt(const kron_ctr &c, const T *P, int lda, const T *src,
                                            T *dst) {
  constexpr int RV = 16 / sizeof(T);
  const int f = c.f, st = (int)c.st, nlo = (int)c.nlo, V = (int)c.V, ld = (int)c.ld;
  const int ma = kron_groups(f, TM), nl = kron_groups(nlo, TN), units = (int)c.H * ma * nl;
  for (int u = threadIdx.x; u < units; u += blockDim.x) {
    int hi, ag, lg;
    kron_unit(u, ma, nl, &hi, &ag, &lg);
    int prow[TM / RV], qoff[TN / CV];
#pragma unroll
    for (int r = 0; r < TM / RV; r++) {
      int a0 = kron_chunk0(r, ma, ag, RV);
      prow[r] = a0 < f ? a0 : -1;
    }
#pragma unroll
    for (int q = 0; q < TN / CV; q++) {
      int lo0 = kron_chunk0(q, nl, lg, CV);
      qoff[q] = lo0 < nlo ? kron_lo_off(lo0, V, ld) : -1;
    }
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
      for (int j = 0; j < TN; j++) acc[i][j] = 0;
    int base = hi * f * st;
    mk_loop<T, TM, TN, RV, CV>(P, lda, prow, src + base, st, qoff, 0, f, acc);
#pragma unroll
    for (int r = 0; r < TM / RV; r++)
#pragma unroll
      for (int i = 0; i < RV; i++) {
        int a = prow[r] + i;
        if (prow[r] < 0 || a >= f) continue;
#pragma unroll
        for (int q = 0; q < TN / CV; q++)
          if (qoff[q] >= 0)
            chunk<CV, T>::st(dst + base + a * st + qoff[q], &acc[r * RV + i][q * CV]);
      }
  }
}

template <typename T>
__device__ void contract(const stage_args &a, int l, const T *P, const T *src, T *dst) {
  constexpr int VW = 16 / sizeof(T), TM8 = sizeof(T) == 4 ? 8 : 4; // no 8x8 for fp64 (registers)
  kron_ctr c = kron_ctr_of(&a.st.t, a.f, a.g, l);
  switch (a.st.mt[l]) {
  case KRON_MT_8x8: contract_mt<T, TM8, 8, VW>(c, P, a.lda[l], src, dst); break;
  case KRON_MT_4x8: contract_mt<T, 4, 8, VW>(c, P, a.lda[l], src, dst); break;
  case KRON_MT_4x4: contract_mt<T, 4, 4, VW>(c, P, a.lda[l], src, dst); break;
  case KRON_MT_4x4S: contract_mt<T, 4, 4, 1>(c, P, a.lda[l], src, dst); break;
  default: contract_mt<T, 8, 1, 1>(c, P, a.lda[l], src, dst); break;
  }
}

// A stage's tile loop, both stage kernels': A_l into shared memory, then persistent blocks walk
// tiles blockIdx.x + i·gridDim.x, each prefetching its next tile (cp.async) into the other input
// buffer (buf[it & 1]) while body(t, cur, rx, w0) contracts tile t at cur and stores it.
template <typename T, int TR, typename Body>
__device__ __forceinline__ void stage_tiles(const stage_args &a, const T *__restrict__ in,
                                            Body body) {
  constexpr int VW = 16 / sizeof(T);
  T *sm = reinterpret_cast<T *>(kron_smem);
  const kron_tiling &tl = a.st.t;
  const kron_radix rx = TR ? kron_tr_radix(&tl, VW) : kron_stage_radix(&tl, VW);
  const kron_walk w0 = kron_walk_start(&rx, threadIdx.x, blockDim.x);
  pdl_launch_next();
  for (int l = 0; l < a.g; l++) // A is no kernel's output
    load_a(sm + a.a_sm[l], a.lda[l], static_cast<const T *>(a.A[l]), a.f[l],
           a.trans || a.st.mt[l] == KRON_MT_TC);
  pdl_wait_previous(); // `in` is; and `out` may still be read by the previous kernel
  long long t = blockIdx.x;
  if (t < tl.tiles) tile_copy<T, TR>(tl, rx, w0, t, in, sm + a.buf[0], nullptr);
  fused::cp_async_commit();
  for (int it = 0; t < tl.tiles; t += gridDim.x, it++) {
    T *cur = sm + a.buf[it & 1], *next = sm + a.buf[(it & 1) ^ 1];
    if (t + gridDim.x < tl.tiles) tile_copy<T, TR>(tl, rx, w0, t + gridDim.x, in, next, nullptr);
    fused::cp_async_commit();
    fused::cp_async_wait<1>(); // this tile's copies (and A's, with the first) are done...
    __syncthreads();           // ...for every thread
    body(t, cur, rx, w0);
    __syncthreads(); // the tile's buffers are read before the next prefetch overwrites them
  }
  fused::cp_async_wait<0>();
}

// A stage on the CUDA cores: the stage's axes in turn between the input and the work buffer
// buf[2], the side outputs and the last one copied out.
template <typename T>
__global__ void __launch_bounds__(KRON_THREADS, 2)
    k_stage(const stage_args a, const T *__restrict__ in, T *out) {
  T *sm = reinterpret_cast<T *>(kron_smem);
  const kron_tiling &tl = a.st.t;
  stage_tiles<T, 0>(a, in, [&](long long t, T *cur, const kron_radix &rx, const kron_walk &w0) {
    T *src = cur, *dst = sm + a.buf[2];
    for (int j = 0; j < a.g; j++) {
      int l = a.trans ? a.g - 1 - j : j;
      contract<T>(a, l, sm + a.a_sm[l], src, dst);
      __syncthreads();
      T *sw = src;
      src = dst;
      dst = sw;
      if (j + 1 < a.g && a.side[j]) tile_copy<T, 0>(tl, rx, w0, t, nullptr, src, (T *)a.side[j]);
    }
    tile_copy<T, 0>(tl, rx, w0, t, nullptr, src, out);
  });
}

// Where a warp's unit of a tensor-core stage sits (kron_tc_unit) and where its C fragments go
// from the tile's base in global memory (element (a, v) at a·Q + kron_tile_coff(v)): the same
// in every tile, so computed once per unit change (once per kernel when every warp has one
// unit; done per tile, this setup costs as much as the tile's mma loop in ncu,
// studies/kron-layer/README.md).
template <typename T, int WN> struct tc_place {
  int u = -1, m0, n0, ro[tc_ops<T>::CR], co[WN][tc_ops<T>::CR];
  __device__ __forceinline__ void at(int unit, const kron_tiling &tl, int WM) {
    using O = tc_ops<T>;
    const int lane = threadIdx.x & 31, Q = (int)tl.Q;
    u = unit;
    kron_tc_unit(u, O::ES, (int)tl.V, WM, WN, &m0, &n0);
#pragma unroll
    for (int r = 0; r < O::CR; r++) {
      int row, col;
      kron_tc_frag_c(O::ES, lane, r, &row, &col);
      ro[r] = (m0 + row) * Q;
#pragma unroll
      for (int j = 0; j < WN; j++) co[j][r] = (int)kron_tile_coff(&tl, n0 + j * KRON_TC_N + col);
    }
  }
};

// A single-axis stage on the tensor cores: out[a][v] = sum_b A'(a, b) in[b][v], an f x V x f
// GEMM per tile, warp tiles (kron_tc_unit) walked by the warps, stored from the registers
// straight to the tile's place in global memory. A is in shared memory as copied (row r = A's
// row r): A'(a, b) = A[a][b] forward, A[b][a] with trans; in[b][v] at b·ld + v, or v·ld + b in
// a transposed tile. Whole 32-byte sectors: with W = 1 the 8 lanes of a fragment column write 8
// consecutive rows (Q = 1); with W even a lane's two neighbouring columns (registers 2i, 2i+1:
// kron_tc_frag_c, tested) go as one 2-element store and 4 lanes fill a row's sector (single
// elements there are slower than a copy-out through shared memory: studies/kron-layer/README.md).
template <typename T, int WM, int WN, int TR>
__device__ __forceinline__ void stage_tc(const stage_args &a, const T *__restrict__ in, T *out) {
  using O = tc_ops<T>;
  const T *As = reinterpret_cast<const T *>(kron_smem) + a.a_sm[0];
  const kron_tiling &tl = a.st.t;
  const int f = a.f[0], ld = (int)tl.ld, Q = (int)tl.Q, nw = blockDim.x >> 5;
  const int units = kron_tc_units(O::ES, f, (int)tl.V, WM, WN);
  const int a_sm = a.trans ? 1 : a.lda[0], a_sk = a.trans ? a.lda[0] : 1;
  tc_place<T, WN> pl;
  stage_tiles<T, TR>(a, in, [&](long long t, T *cur, const kron_radix &, const kron_walk &) {
    T *o = out + kron_tile_base(&tl, t);
    for (int u = threadIdx.x >> 5; u < units; u += nw) {
      if (u != pl.u) pl.at(u, tl, WM);
      T acc[WM][WN][O::CR];
      tc_zero<T, WM, WN>(acc);
      tc_gemm<T, WM, WN, TR>(acc, As, a_sm, a_sk, cur, ld, pl.m0, pl.n0, 0, f);
      if (tl.W % 2 == 0) {
#pragma unroll
        for (int i = 0; i < WM; i++)
#pragma unroll
          for (int j = 0; j < WN; j++)
#pragma unroll
            for (int r = 0; r < O::CR; r += 2)
              pair<T>::st(o + i * O::MR * Q + pl.ro[r] + pl.co[j][r], acc[i][j][r],
                          acc[i][j][r + 1]);
      } else {
#pragma unroll
        for (int i = 0; i < WM; i++)
#pragma unroll
          for (int j = 0; j < WN; j++)
#pragma unroll
            for (int r = 0; r < O::CR; r++)
              o[i * O::MR * Q + pl.ro[r] + pl.co[j][r]] = acc[i][j][r];
      }
    }
  });
}

// One contraction of the pair stage's tile (make_tc_pair in kron_algo.c), warp unit by unit:
// the slab's element (i, j) (i < rows: the first axis, j < L: the second) at i·ld + j in shared
// memory, i·L + j from the tile's base in global memory.
//   WITHIN = 0, the rows: out(a, j) = sum_b A'(a, b) in(b, j), C(a, j): B k-major
//   WITHIN = 1, within:   out(i, a) = sum_b A'(a, b) in(i, b), C(a, i): B n-major
// Stored to dst in shared memory and/or g in global memory (nullptr: not).
template <typename T, int WM, int WN, int WITHIN>
__device__ __forceinline__ void pair_contract(const T *As, int a_sm, int a_sk, const T *src, int ld,
                                              int L, int rows, T *dst, T *g) {
  using O = tc_ops<T>;
  const int M = WITHIN ? L : rows, N = WITHIN ? rows : L, nw = blockDim.x >> 5;
  const int units = kron_tc_units(O::ES, M, N, WM, WN);
  for (int u = threadIdx.x >> 5; u < units; u += nw) {
    int m0, n0;
    kron_tc_unit(u, O::ES, N, WM, WN, &m0, &n0);
    T acc[WM][WN][O::CR];
    tc_zero<T, WM, WN>(acc);
    tc_gemm<T, WM, WN, WITHIN>(acc, As, a_sm, a_sk, src, ld, m0, n0, 0, M);
    if (WITHIN) { // C(a, i): 8 lanes of a register write 8 consecutive j
      tc_each<T, WM, WN>(acc, [&](int row, int col, T v) {
        int i = n0 + col, j = m0 + row;
        if (dst) dst[i * ld + j] = v;
        if (g) g[i * L + j] = v;
      });
    } else { // C(i, j): a lane's neighbouring columns as one store (ld and L even)
      tc_each_regs<T, WM, WN, 2>(acc, [&](int row, int col, const T *v) {
        int i = m0 + row, j = n0 + col;
        if (dst) pair<T>::st(dst + i * ld + j, v[0], v[1]);
        if (g) pair<T>::st(g + i * L + j, v[0], v[1]);
      });
    }
  }
}

// The pair stage: per slab, forward the rows (A_k0) then within them (A_k0+1), backward the
// other way round with A^T; the first result to the work buffer and the side output, the
// second to `out`.
template <typename T, int WM, int WN>
__device__ __forceinline__ void stage_tc_pair(const stage_args &a, const T *__restrict__ in,
                                              T *out) {
  const T *sm = reinterpret_cast<const T *>(kron_smem);
  T *work = reinterpret_cast<T *>(kron_smem) + a.buf[2], *side = (T *)a.side[0];
  const kron_tiling &tl = a.st.t;
  const int ld = (int)tl.ld, rows = (int)kron_tr_rows(&tl), L = (int)kron_tr_rowlen(&tl);
  const int sm0 = a.trans ? 1 : a.lda[0], sk0 = a.trans ? a.lda[0] : 1;
  const int sm1 = a.trans ? 1 : a.lda[1], sk1 = a.trans ? a.lda[1] : 1;
  stage_tiles<T, 1>(a, in, [&](long long t, T *cur, const kron_radix &, const kron_walk &) {
    const long long base = kron_tile_base(&tl, t);
    T *side_t = side ? side + base : nullptr;
    if (!a.trans) {
      pair_contract<T, WM, WN, 0>(sm + a.a_sm[0], sm0, sk0, cur, ld, L, rows, work, side_t);
      __syncthreads();
      pair_contract<T, WM, WN, 1>(sm + a.a_sm[1], sm1, sk1, work, ld, L, rows, nullptr, out + base);
    } else {
      pair_contract<T, WM, WN, 1>(sm + a.a_sm[1], sm1, sk1, cur, ld, L, rows, work, side_t);
      __syncthreads();
      pair_contract<T, WM, WN, 0>(sm + a.a_sm[0], sm0, sk0, work, ld, L, rows, nullptr, out + base);
    }
  });
}

template <typename T, int WM, int WN>
__global__ void __launch_bounds__(KRON_THREADS, KRON_TC_STAGE_BLOCKS(sizeof(T), WM, WN))
    k_stage_tc(const stage_args a, const T *__restrict__ in, T *out) {
  if (a.g == 2)
    stage_tc_pair<T, WM, WN>(a, in, out);
  else if (a.st.t.tr)
    stage_tc<T, WM, WN, 1>(a, in, out);
  else
    stage_tc<T, WM, WN, 0>(a, in, out);
}
// Element (i, j) of the micro-tile of unit (ag, lg) in gA_k's output block at (i0, j0): its
// offset in gA_k, or -1 outside the block or the factor (both ways of adding the sums use it).
template <int VW>
__device__ __forceinline__ long long grad_out(int i, int j, int ma, int ag, int nl, int lg, int ob,
                                              int f, int i0, int j0) {
  int rel = kron_chunk0(i / VW, ma, ag, VW) + i % VW,
      cel = kron_chunk0(j / VW, nl, lg, VW) + j % VW;
  return rel < ob && i0 + rel < f && cel < ob && j0 + cel < f ? (long long)(i0 + rel) * f + j0 + cel
                                                              : -1;
}

// The tiles [t0, t1) of gA_k's split blockIdx.x in two slots of a G and a T tile (TR = tl.tr:
// transposed, rows v; else rows s as the stages hold them), the next pair prefetched while
// body(G tile, T tile) sums the current one.
template <typename T, int TR, typename F>
__device__ __forceinline__ void grad_tiles(const grad_args &a, int k, long long t0, long long t1,
                                           F body) {
  constexpr int VW = 16 / sizeof(T);
  const kron_tiling &tl = a.ga[k].t;
  const int slot = a.slot[k];
  T *sm = reinterpret_cast<T *>(kron_smem);
  const T *G = (const T *)a.G[k], *Tn = (const T *)a.Tin[k];
  const kron_radix rx = TR ? kron_tr_radix(&tl, VW) : kron_stage_radix(&tl, VW);
  const kron_walk w0 = kron_walk_start(&rx, threadIdx.x, blockDim.x);
  if (t0 < t1) {
    tile_copy<T, TR>(tl, rx, w0, t0, G, sm, nullptr);
    tile_copy<T, TR>(tl, rx, w0, t0, Tn, sm + slot, nullptr);
  }
  fused::cp_async_commit();
  for (long long t = t0; t < t1; t++) {
    T *cur = sm + 2 * slot * ((t - t0) & 1), *next = sm + 2 * slot * (((t - t0) & 1) ^ 1);
    if (t + 1 < t1) {
      tile_copy<T, TR>(tl, rx, w0, t + 1, G, next, nullptr);
      tile_copy<T, TR>(tl, rx, w0, t + 1, Tn, next + slot, nullptr);
    }
    fused::cp_async_commit();
    fused::cp_async_wait<1>();
    __syncthreads();
    body((const T *)cur, (const T *)(cur + slot));
    __syncthreads(); // cur is read before the prefetch two tiles on overwrites it
  }
  fused::cp_async_wait<0>();
}

// gA_k's output block blockIdx.z over tiles [t0, t1) of split blockIdx.x (grad_tiles).
// Thread = (unit, kp): a TM x TN micro-tile of the block, rows [v0, v1) of every tile.
template <typename T, int TM, int TN>
__device__ __forceinline__ void grad_run(const grad_args &a, int k, T *gA) {
  constexpr int VW = 16 / sizeof(T);
  const kron_gstep &gs = a.ga[k];
  const kron_tiling &tl = gs.t;
  const int f = a.f[k], ob = gs.ob, ld = (int)tl.ld, slot = a.slot[k];
  const int i0 = (int)blockIdx.z / gs.nob * ob, j0 = (int)blockIdx.z % gs.nob * ob;
  const int ma = kron_groups(ob, TM), nl = kron_groups(ob, TN), units = ma * nl;
  const int tid = threadIdx.x, kp = tid / units;
  const bool active = tid < units * gs.kp;
  int hi, ag, lg;
  kron_unit(tid % units, ma, nl, &hi, &ag, &lg);
  long long t0, t1, v0, v1;
  kron_split_range(tl.tiles, (int)blockIdx.x, gs.ksplit, &t0, &t1);
  kron_kp_range(tl.V, kp, gs.kp, &v0, &v1);
  int prow[TM / VW], qoff[TN / VW];
#pragma unroll
  for (int r = 0; r < TM / VW; r++) {
    int rel = kron_chunk0(r, ma, ag, VW);
    prow[r] = rel < ob && i0 + rel < f ? i0 + rel : -1;
  }
#pragma unroll
  for (int q = 0; q < TN / VW; q++) {
    int rel = kron_chunk0(q, nl, lg, VW);
    qoff[q] = rel < ob && j0 + rel < f ? j0 + rel : -1;
  }
  T acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0;
  T *sm = reinterpret_cast<T *>(kron_smem);
  grad_tiles<T, 1>(a, k, t0, t1, [&](const T *Gt, const T *Tt) {
    if (active) mk_loop<T, TM, TN, VW, VW>(Gt, ld, prow, Tt, ld, qoff, (int)v0, (int)v1, acc);
  });
  T *dst = gA + a.aoff[k];
  // The kp threads of one unit hold partial sums of the same outputs. Where a unit's threads
  // share warps (units divides 32), sum them with shuffles, then across warps in shared
  // memory when the partials fit, so each block adds every output once (one atomic per thread
  // would make, on 16-wide factors, kp = 64 threads per output add into 256 addresses).
  const int lane = tid % 32, nw = blockDim.x / 32;
  const bool shuffled = gs.kp > 1 && units < 32 && 32 % units == 0;
  if (shuffled)
    for (int off = units; off < 32; off <<= 1)
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] += __shfl_xor_sync(0xffffffffu, acc[i][j], off);
  if (shuffled && nw * units * TM * TN <= 4 * slot) {
    T *red = sm;     // [warp][unit][TM*TN]
    __syncthreads(); // the tiles are no longer read
    if (lane < units)
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
          red[((tid / 32) * units + lane) * TM * TN + i * TN + j] = acc[i][j];
    __syncthreads();
    for (int e = tid; e < units * TM * TN; e += blockDim.x) {
      T sum = 0;
      for (int w = 0; w < nw; w++) sum += red[w * units * TM * TN + e];
      int uhi, uag, ulg;
      kron_unit(e / (TM * TN), ma, nl, &uhi, &uag, &ulg);
      long long o = grad_out<VW>(e % (TM * TN) / TN, e % TN, ma, uag, nl, ulg, ob, f, i0, j0);
      if (o >= 0) atomicAdd(dst + o, sum);
    }
    return;
  }
  if (!active || (shuffled && lane >= units)) return;
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) {
      long long o = grad_out<VW>(i, j, ma, ag, nl, lg, ob, f, i0, j0);
      if (o >= 0) atomicAdd(dst + o, acc[i][j]);
    }
}

// gA_k's output block on the tensor cores: warp = (unit, kp part); unit a WM x WN block of mma
// tiles of the ob x ob output block, kp part rows [v0, v1) of every tile (G^T T over them).
// The kp partial sums meet in shared memory (the tiles' slots, free after the loop); each
// block then adds each output once.
template <typename T, int WM, int WN>
__device__ void grad_run_tc(const grad_args &a, int k, T *gA) {
  const kron_gstep &gs = a.ga[k];
  const int f = a.f[k], ob = gs.ob, ld = (int)gs.t.ld, nw = blockDim.x >> 5;
  const int i0 = (int)blockIdx.z / gs.nob * ob, j0 = (int)blockIdx.z % gs.nob * ob;
  const int units = nw / gs.kp, warp = threadIdx.x >> 5, kp = warp / units;
  int m0, n0;
  kron_tc_unit(warp % units, tc_ops<T>::ES, ob, WM, WN, &m0, &n0);
  long long t0, t1, v0, v1;
  kron_split_range(gs.t.tiles, (int)blockIdx.x, gs.ksplit, &t0, &t1);
  kron_kp_range(gs.t.V, kp, gs.kp, &v0, &v1);
  T acc[WM][WN][tc_ops<T>::CR];
  tc_zero<T, WM, WN>(acc);
  if (gs.t.tr) // G(v, i) at v·ld + i: A k-major, B k-major
    grad_tiles<T, 1>(a, k, t0, t1, [&](const T *Gt, const T *Tt) {
      tc_gemm<T, WM, WN, 0>(acc, Gt, 1, ld, Tt, ld, i0 + m0, j0 + n0, (int)v0, (int)v1);
    });
  else // G(v, i) at i·ld + v: A m-major, B n-major
    grad_tiles<T, 0>(a, k, t0, t1, [&](const T *Gt, const T *Tt) {
      tc_gemm<T, WM, WN, 1>(acc, Gt, ld, 1, Tt, ld, i0 + m0, j0 + n0, (int)v0, (int)v1);
    });
  T *dst = gA + a.aoff[k] + (long long)i0 * f + j0;
  if (gs.kp == 1) {
    tc_each<T, WM, WN>(acc, [&](int r, int c, T v) { atomicAdd(dst + (m0 + r) * f + n0 + c, v); });
    return;
  }
  T *red = reinterpret_cast<T *>(kron_smem); // [kp][ob][ob]
  __syncthreads();                           // the tiles are no longer read
  T *mine = red + (long long)kp * ob * ob + m0 * ob + n0;
  tc_each<T, WM, WN>(acc, [&](int r, int c, T v) { mine[r * ob + c] = v; });
  __syncthreads();
  for (int e = threadIdx.x; e < ob * ob; e += blockDim.x) {
    T sum = 0;
    for (int p = 0; p < gs.kp; p++) sum += red[p * ob * ob + e];
    atomicAdd(dst + e / ob * f + e % ob, sum);
  }
}

// one block per SM: 8x8 micro-tiles without spills (at 128 registers fp32 spills)
template <typename T>
__global__ void __launch_bounds__(KRON_THREADS, 1) k_grad(const grad_args a, T *gA) {
  int k = blockIdx.y;
  pdl_launch_next();
  if (k >= a.m || (int)blockIdx.x >= a.ga[k].ksplit || (int)blockIdx.z >= a.ga[k].nob * a.ga[k].nob)
    return;                       // the whole block: grid dimensions are the maxima over the axes
  pdl_wait_previous();            // G and T come from the stages
  if (a.ga[k].mt == KRON_MT_TC) { // (a tile outside the list fails kron_gstep_check)
#define KRON_TC_CASE(WM, WN) \
  case WM * 8 + WN: grad_run_tc<T, WM, WN>(a, k, gA); break;
    switch (a.ga[k].wm * 8 + a.ga[k].wn) {
      KRON_TC_GRAD_TILES(KRON_TC_CASE)
    default: __trap();
    }
#undef KRON_TC_CASE
  } else if (a.ga[k].mt == KRON_MT_8x8)
    grad_run<T, 8, 8>(a, k, gA);
  else
    grad_run<T, 4, 4>(a, k, gA);
}

// ---- the lookups kron_launch.cu launches through (kron_kernels.cuh) -------------------------
template <typename T> kron_stage_kernel<T> kron_stage_fn(int tc, int wm, int wn) {
  if (!tc) return k_stage<T>;
  switch (wm * 8 + wn) {
#define KRON_TC_CASE(WM, WN) \
  case WM * 8 + WN: return k_stage_tc<T, WM, WN>;
    KRON_TC_STAGE_TILES(KRON_TC_CASE)
#undef KRON_TC_CASE
  default: return nullptr;
  }
}
template kron_stage_kernel<float> kron_stage_fn<float>(int tc, int wm, int wn);
template kron_stage_kernel<double> kron_stage_fn<double>(int tc, int wm, int wn);

template <typename T> kron_grad_kernel<T> kron_grad_fn() { return k_grad<T>; }
template kron_grad_kernel<float> kron_grad_fn<float>();
template kron_grad_kernel<double> kron_grad_fn<double>();

#define KRON_TC_KERNELS(WM, WN)                                                   \
  {"k_stage_tc<float," #WM "x" #WN ">", (const void *)k_stage_tc<float, WM, WN>}, \
      {"k_stage_tc<double," #WM "x" #WN ">", (const void *)k_stage_tc<double, WM, WN>},
const kron_kernel_entry kron_kernels[] = {{"k_stage<float>", (const void *)k_stage<float>},
                                          {"k_stage<double>", (const void *)k_stage<double>},
                                          {"k_grad<float>", (const void *)k_grad<float>},
                                          {"k_grad<double>", (const void *)k_grad<double>},
                                          KRON_TC_STAGE_TILES(KRON_TC_KERNELS)};
#undef KRON_TC_KERNELS
const int kron_nkernels = (int)(sizeof kron_kernels / sizeof *kron_kernels);
