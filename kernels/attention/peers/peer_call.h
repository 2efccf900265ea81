/* peer_call.h: the attention problem a peer system (another project's forward built from its
 * source: fa3/, fa2/, flashinfer/) hands to that project's launch file. Plain C types, so the
 * peer's system (built with the kit's flags and headers) and its launch file (built with the
 * project's) share this one struct and nothing else. */
#ifndef PEER_CALL_H
#define PEER_CALL_H

/* One forward: q, out [B, Lq, H, D], k, v [B, Lkv, Hkv, D] (16-bit, contiguous); causal is
 * bottom-right aligned; softcap > 0 caps the scaled logits s to softcap * tanh(s / softcap)
 * before the mask. scale and softcap are doubles, as the projects' Python bindings take them. */
typedef struct {
  const void *q, *k, *v;
  void *out;
  int batch, heads, kv_heads, q_len, kv_len, dim;
  int causal, bf16;
  double scale, softcap;
} peer_problem;

#endif
