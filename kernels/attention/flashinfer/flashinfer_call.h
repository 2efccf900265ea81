/* flashinfer_call.h: the one call between the flashinfer system (flashinfer.cu, built with the
 * kit's flags) and FlashInfer's single prefill (flashinfer_launch.cu and flashinfer_inst.cu,
 * built with FlashInfer's own flags and headers, only when CMake is given its source:
 * -DREPRO_FLASHINFER_DIR). Plain C types, so neither side sees the other's headers. */
#ifndef FLASHINFER_CALL_H
#define FLASHINFER_CALL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One forward: q, out [B, Lq, H, D], k, v [B, Lkv, Hkv, D] (16-bit, contiguous), one
 * single-request prefill per sequence; causal bottom-right aligned; softcap > 0 caps the
 * logits to softcap * tanh(scale * q.k / softcap) before the mask, 0 leaves scale * q.k. */
typedef struct {
  const void *q, *k, *v;
  void *out;
  int batch, heads, kv_heads, q_len, kv_len, dim;
  int causal, bf16;
  double scale, softcap; /* the Python floats the JIT binding takes as double */
} flashinfer_call;

/* Enqueue the forward on stream (a cudaStream_t) for a cell the flashinfer system's supports()
 * accepted. 0, or -1 with the reason in err. */
int flashinfer_forward(const flashinfer_call *call, void *stream, char *err, size_t err_len);
/* The FlashInfer source it was built from (its commit, or what CMake was told). */
const char *flashinfer_source(void);

#ifdef __cplusplus
}
#endif
#endif
