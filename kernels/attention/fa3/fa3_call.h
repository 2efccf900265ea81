/* fa3_call.h: the one call between the fa3 system (fa3.cu, built with the kit's flags) and
 * FlashAttention-3's forward (fa3_launch.cu, built with FlashAttention-3's own flags and
 * headers, only when CMake is given its source: -DREPRO_FA3_DIR). Plain C types, so neither
 * side sees the other's headers. */
#ifndef FA3_CALL_H
#define FA3_CALL_H

#include <stddef.h>

#include "../peers/peer_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One forward (peer_call.h: kv_heads dividing heads, softcap > 0 for gemma2), the row LSE [B, H, Lq] it
 * writes (fp32, natural log, FlashAttention-3's layout), its scheduler's ints and the GPU. */
typedef struct {
  peer_problem p;
  float *lse;
  int *scheduler; /* fa3_scheduler_ints(batch) ints, zeroed by the caller before each call */
  int cc_major, cc_minor, sm_count;
} fa3_call;

/* Ints of the scheduler's buffer (its tile counter and per-batch vectors) for `batch`. */
int fa3_scheduler_ints(int batch);
/* Enqueue the forward on stream (a cudaStream_t) for a cell the fa3 system's supports()
 * accepted (fa3.cu: head dim 8..256 in steps of 8 but 136..192, ...). 0, or -1 with the reason
 * in err. */
int fa3_forward(const fa3_call *call, void *stream, char *err, size_t err_len);
/* The FlashAttention-3 source it was built from (its commit, or what CMake was told). */
const char *fa3_source(void);

#ifdef __cplusplus
}
#endif
#endif
