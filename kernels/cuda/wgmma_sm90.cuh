// wgmma wrappers (sm_90a), generated: one per shape the sm_90 path and the GEMM use.
// Accumulator layout per warp w of the warpgroup (g = lane / 4, t = lane % 4): d[j][0..3]
// hold rows 16w + g and 16w + g + 8, columns 8j + 2t and 8j + 2t + 1 -- the mma.sync m16n8 C
// layout, per 8 columns.
#pragma once
#include "smem_addr.cuh"

#include <stdint.h>

namespace fused {

// wgmma shared-memory matrix descriptor, 128-byte swizzle (bits 62-63 = 1): start address,
// leading and stride byte offsets, each >> 4. The swizzle atom (8 rows of 128 bytes) must be
// 1024-byte aligned (the base-offset field stays 0).
__device__ __forceinline__ uint64_t sw128_desc(const void *p, uint32_t lbo_bytes,
                                               uint32_t sbo_bytes) {
  uint64_t addr = smem_u32(p);
  return ((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         ((uint64_t)((sbo_bytes & 0x3FFFF) >> 4) << 32) | ((uint64_t)1 << 62);
}

// desc moved on by `bytes` inside its tile. The start-address field (bits 0-13) holds the
// address >> 4, and shared memory ends below 2^18 bytes, so an address inside the tile never
// carries into the next field: one 32-bit add on the low word instead of rebuilding the
// descriptor from the address (mask, shift, or: about six instructions per wgmma).
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes) {
  const uint32_t lo = (uint32_t)desc + (bytes >> 4), hi = (uint32_t)(desc >> 32);
  return ((uint64_t)hi << 32) | lo;
}

// ---- A (shared, K-major) x B (shared, MN-major, i.e. row-major [K, N]: tnspB = 1) ----------
// The GEMM's operands (kernels/gemm/): A rows are K-contiguous, B rows N-contiguous, both
// 128B-swizzled by TMA. fp16 or bf16 inputs, fp32 accumulators; d[j][0..3] as above.
// The operand lists are long (d is 64 or 128 registers), so they are macros shared by the
// fp16 and bf16 forms.
#define WGMMA_D_N128(d)                                                                           \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),       \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),   \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),   \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),   \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),   \
      "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),   \
      "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
      "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]),             \
      "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),             \
      "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]),             \
      "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]),             \
      "+f"(d[15][2]), "+f"(d[15][3])
#define WGMMA_D_N256(d)                                                                            \
  WGMMA_D_N128(d), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), \
      "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]),              \
      "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]),              \
      "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]),              \
      "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]), "+f"(d[22][0]),              \
      "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]),              \
      "+f"(d[23][2]), "+f"(d[23][3]), "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]),              \
      "+f"(d[24][3]), "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]),              \
      "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]), "+f"(d[27][0]),              \
      "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]), "+f"(d[28][0]), "+f"(d[28][1]),              \
      "+f"(d[28][2]), "+f"(d[28][3]), "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]),              \
      "+f"(d[29][3]), "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]),              \
      "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])
#define WGMMA_R64                                                                                \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%" \
  "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define WGMMA_R128                                                                                 \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%"   \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%"   \
  "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%"   \
  "71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%"   \
  "94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%" \
  "114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
// the operands after the registers: desc_a, desc_b, scale_d; then imm-scale-a = imm-scale-b = 1,
// tnspA = 0, tnspB = 1
#define WGMMA_SS_TB(N, TYPE, REGS, PRED, DESCS)                                         \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N \
  "k16.f32." TYPE "." TYPE " " REGS ", " DESCS ", p, 1, 1, 0, 1;\n}\n"

// d (m64nN, fp32) (+)= A · B for N = 128 or 256; scale_d = 0 overwrites d.
template <int N, bool BF16>
__device__ __forceinline__ void wgmma_ss_tb(float (&d)[N / 8][4], uint64_t desc_a, uint64_t desc_b,
                                            int scale_d) {
  static_assert(N == 128 || N == 256, "wgmma_ss_tb: N is 128 or 256");
  if constexpr (N == 128 && !BF16)
    asm volatile(WGMMA_SS_TB(128, "f16", WGMMA_R64, "%66", "%64, %65")
                 : WGMMA_D_N128(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
  else if constexpr (N == 128)
    asm volatile(WGMMA_SS_TB(128, "bf16", WGMMA_R64, "%66", "%64, %65")
                 : WGMMA_D_N128(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
  else if constexpr (!BF16)
    asm volatile(WGMMA_SS_TB(256, "f16", WGMMA_R128, "%130", "%128, %129")
                 : WGMMA_D_N256(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
  else
    asm volatile(WGMMA_SS_TB(256, "bf16", WGMMA_R128, "%130", "%128, %129")
                 : WGMMA_D_N256(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#undef WGMMA_SS_TB
#define WGMMA_D_N64(d)                                                                          \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),     \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), \
      "+f"(d[7][2]), "+f"(d[7][3])
#define WGMMA_R32                                                                                \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
  "25,%26,%27,%28,%29,%30,%31}"
#define WGMMA_D_N96(d)                                                                            \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),       \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),   \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]),   \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),   \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),   \
      "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),   \
      "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), \
      "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]),             \
      "+f"(d[11][3])
#define WGMMA_R48                                                                                \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47}"
#define WGMMA_D_N80(d)                                                                          \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]),     \
      "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
      "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), \
      "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
      "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), \
      "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), \
      "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3])
#define WGMMA_R40                                                                                \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39}"
#define WGMMA_D_N176(d)                                                                            \
  WGMMA_D_N128(d), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), \
      "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]),              \
      "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]),              \
      "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]),              \
      "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3])
#define WGMMA_R88                                                                                \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%" \
  "25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%" \
  "48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%" \
  "71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87}"
// ---- the attention kernels' shapes (fused/gemm_sm90.cuh, mainloop_ws90.cuh, col_ws90.cuh) ----
// ss: A and B from shared memory, both K-major (tnspA = tnspB = 0). rs: A from registers (fp16 or
// bf16 fragments, the mma.sync m16n8k16 A layout), B from shared memory, tnspB an immediate.
#define WGMMA_SS(N, TYPE, REGS, PRED, DESCS)                                            \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N \
  "k16.f32." TYPE "." TYPE " " REGS ", " DESCS ", p, 1, 1, 0, 0;\n}\n"
#define WGMMA_RS(N, TYPE, REGS, PRED, OPERANDS)                                         \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\nwgmma.mma_async.sync.aligned.m64n" #N \
  "k16.f32." TYPE "." TYPE " " REGS ", " OPERANDS ";\n}\n"
// The statements: d (DOUT lists its registers) and the operands of the enclosing function, in
// the element type its BF16 parameter picks (bf16, else f16).
#define WGMMA_SS_ASM(N, TYPE, REGS, PRED, DESCS, DOUT) \
  asm volatile(WGMMA_SS(N, TYPE, REGS, PRED, DESCS)    \
               : DOUT(d)                               \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define WGMMA_RS_ASM(N, TYPE, REGS, PRED, OPERANDS, DOUT)                               \
  asm volatile(WGMMA_RS(N, TYPE, REGS, PRED, OPERANDS)                                  \
               : DOUT(d)                                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), \
                 "n"(TNSPB))
#define WGMMA_SS_CALL(N, REGS, PRED, DESCS, DOUT)     \
  if constexpr (BF16)                                 \
    WGMMA_SS_ASM(N, "bf16", REGS, PRED, DESCS, DOUT); \
  else                                                \
    WGMMA_SS_ASM(N, "f16", REGS, PRED, DESCS, DOUT)
#define WGMMA_RS_CALL(N, REGS, PRED, OPERANDS, DOUT)     \
  if constexpr (BF16)                                    \
    WGMMA_RS_ASM(N, "bf16", REGS, PRED, OPERANDS, DOUT); \
  else                                                   \
    WGMMA_RS_ASM(N, "f16", REGS, PRED, OPERANDS, DOUT)

// d (m64n64 / m64n80 / m64n128 / m64n176, fp32) (+)= A (smem desc) * B (smem desc, K-major);
// scale_d = 0 overwrites d; BF16: bfloat16 operands, else fp16. m64n80: the scores of an 80-key
// block (head dim 256).
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[8][4], uint64_t desc_a,
                                                   uint64_t desc_b, int scale_d) {
  WGMMA_SS_CALL(64, WGMMA_R32, "%34", "%32, %33", WGMMA_D_N64);
}
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n80k16_ss(float (&d)[10][4], uint64_t desc_a,
                                                   uint64_t desc_b, int scale_d) {
  WGMMA_SS_CALL(80, WGMMA_R40, "%42", "%40, %41", WGMMA_D_N80);
}
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[16][4], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  WGMMA_SS_CALL(128, WGMMA_R64, "%66", "%64, %65", WGMMA_D_N128);
}
// m64n176: the scores of a 176-key block (head dim 128 without a mask).
template <bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n176k16_ss(float (&d)[22][4], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {
  WGMMA_SS_CALL(176, WGMMA_R88, "%90", "%88, %89", WGMMA_D_N176);
}
// d (m64nN, fp32; N = 64, 96, 128, 256: the P·V products of every head dim) (+)= A (registers)
// * B (smem desc): TNSPB 0 K-major, 1 MN-major (transposed); scale_d = 0 overwrites d.
template <int TNSPB, bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[8][4], const uint32_t (&a)[4],
                                                   uint64_t desc_b, int scale_d) {
  WGMMA_RS_CALL(64, WGMMA_R32, "%37", "{%32,%33,%34,%35}, %36, p, 1, 1, %38", WGMMA_D_N64);
}
template <int TNSPB, bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n96k16_rs(float (&d)[12][4], const uint32_t (&a)[4],
                                                   uint64_t desc_b, int scale_d) {
  WGMMA_RS_CALL(96, WGMMA_R48, "%53", "{%48,%49,%50,%51}, %52, p, 1, 1, %54", WGMMA_D_N96);
}
template <int TNSPB, bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[16][4], const uint32_t (&a)[4],
                                                    uint64_t desc_b, int scale_d) {
  WGMMA_RS_CALL(128, WGMMA_R64, "%69", "{%64,%65,%66,%67}, %68, p, 1, 1, %70", WGMMA_D_N128);
}
template <int TNSPB, bool BF16 = false>
__device__ __forceinline__ void wgmma_m64n256k16_rs(float (&d)[32][4], const uint32_t (&a)[4],
                                                    uint64_t desc_b, int scale_d) {
  WGMMA_RS_CALL(256, WGMMA_R128, "%133", "{%128,%129,%130,%131}, %132, p, 1, 1, %134",
                WGMMA_D_N256);
}
#undef WGMMA_RS_CALL
#undef WGMMA_SS_CALL
#undef WGMMA_RS_ASM
#undef WGMMA_SS_ASM
#undef WGMMA_RS
#undef WGMMA_SS
#undef WGMMA_R32
#undef WGMMA_R48
#undef WGMMA_R40
#undef WGMMA_R88
#undef WGMMA_D_N176
#undef WGMMA_D_N80
#undef WGMMA_D_N96
#undef WGMMA_D_N64
#undef WGMMA_R128
#undef WGMMA_R64
#undef WGMMA_D_N256
#undef WGMMA_D_N128

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared memory written through the generic proxy (cp.async, st.shared) must be fenced before
// the tensor cores (async proxy) read it.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

} // namespace fused
