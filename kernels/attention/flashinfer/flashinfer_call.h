/* flashinfer_call.h: the one call between the flashinfer system (flashinfer.cu, built with the
 * kit's flags) and FlashInfer's single prefill (flashinfer_launch.cu and flashinfer_inst.cu,
 * built with FlashInfer's own flags and headers, only when CMake is given its source:
 * -DREPRO_FLASHINFER_DIR). Plain C types, so neither side sees the other's headers. */
#ifndef FLASHINFER_CALL_H
#define FLASHINFER_CALL_H

#include <stddef.h>

#include "../peers/peer_call.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One forward (peer_call.h), one single-request prefill per sequence of the batch. */
typedef peer_problem flashinfer_call;

/* Enqueue the forward on stream (a cudaStream_t) for a cell the flashinfer system's supports()
 * accepted. 0, or -1 with the reason in err. */
int flashinfer_forward(const flashinfer_call *call, void *stream, char *err, size_t err_len);
/* The FlashInfer source it was built from (its commit, or what CMake was told). */
const char *flashinfer_source(void);

#ifdef __cplusplus
}
#endif
#endif
