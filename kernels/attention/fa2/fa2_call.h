/* fa2_call.h: the one call between the fa2 system (fa2.cu, built with the kit's flags) and
 * FlashAttention-2's forward (fa2_launch.cu, built with FlashAttention-2's own flags and
 * headers, only when CMake is given its source: -DREPRO_FA2_DIR). Plain C types, so neither
 * side sees the other's headers. */
#ifndef FA2_CALL_H
#define FA2_CALL_H

#include <stddef.h>

#include "../peers/peer_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One forward (peer_call.h) and the row LSE it writes, [B, H, Lq] (fp32, natural log,
 * FlashAttention-2's layout). */
typedef struct {
  peer_problem p;
  float *lse;
} fa2_call;

/* Enqueue the forward on stream (a cudaStream_t) for a cell the fa2 system's supports()
 * accepted. 0, or -1 with the reason in err. */
int fa2_forward(const fa2_call *call, void *stream, char *err, size_t err_len);
/* The FlashAttention-2 source it was built from (its commit, or what CMake was told). */
const char *fa2_source(void);

#ifdef __cplusplus
}
#endif
#endif
