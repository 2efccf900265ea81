"""The TileLang GEMM of the tilebench study: C = A·B, A [M, K], B [K, N], C [M, N] row-major,
fp32 accumulation, written in TileLang's tile language after the shape of the public
tile-ai/tilelang GEMM example (one output tile per block, a pipelined K loop of shared-memory
copies feeding T.gemm). Compiled by tilelang_backend for TileLang's CUDA or CuTeDSL backend.

Tiles: 128 x 256 x 64 with 3 stages and 256 threads. fp16 and bf16 only: for float32 operands
T.gemm emits tensor-core MMAs of kind tf32 (operands rounded to a 10-bit mantissa), which is not
the fp32 GEMM the study's fp32 cells check (gemmbench's fp32 tolerance)."""

PASS_CONFIGS = ("TL_ENABLE_FAST_MATH",)  # tilelang.PassConfigKey names, set true


TILES = (128, 256, 64, 3, 256)  # block_M, block_N, block_K, stages, threads


def refuses(dtype):
    """None when the kernel computes this dtype's GEMM, else the reason."""
    if dtype == "fp32":
        return ("TileLang's T.gemm computes float32 operands as tf32 on the tensor cores (its "
                "generated CUDA: mma_sync<kTensorFloat32, ...>), not the fp32 GEMM this cell "
                "checks (fp32 tolerance)")
    return None


def kernel(M, N, K, dtype):
    """The prim_func for one problem size and dtype ("fp16" or "bf16")."""
    import tilelang.language as T
    elem = {"fp16": T.float16, "bf16": T.bfloat16}[dtype]
    accum = T.float32
    block_M, block_N, block_K, stages, threads = TILES

    @T.prim_func
    def gemm(A: T.Tensor((M, K), elem), B: T.Tensor((K, N), elem), C: T.Tensor((M, N), elem)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), elem)
            B_shared = T.alloc_shared((block_K, block_N), elem)
            C_local = T.alloc_fragment((block_M, block_N), accum)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm
