/* kron_api_harness.c: the harness functions kron's sources call (harness.h: hx_host_alloc,
 * hx_host_free, hx_die; cuda_check.h: hx_cuda_check), for a process that embeds the library
 * (kron_api.h) instead of linking the harness (kernels/harness/): the PyTorch extension. A
 * failure inside a kron_api call frees the host blocks that call allocated and returns -1 from
 * it (kron_api_unwind) instead of ending the process; outside a call it prints the message and
 * exits with the harness's code, as the harness does.
 *
 * Why not the harness itself: its fatal path is the one-cell binaries' (hx_die ends the log
 * with a result line and exits; hx_cuda_check dies the same way), where a Python process must
 * get the failure back as an exception and keep running; its host allocator counts a peak in
 * process-wide counters and keeps no list of live blocks, where the extension's calls may run
 * on several threads at once and a failed call must free what it allocated; and it is built
 * by CMake (the commit header it generates, common/kvline.c, cuBLAS in its device half), where
 * setup.py compiles kron's sources by their paths. So the embedded library has this one file
 * in its place (kron_embed in CMakeLists.txt builds it the same way, for its test). */
#include "kron_api.h"

#include "harness.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef KRON_API_CUDA
#include "cuda_check.h"

#include <cuda_runtime_api.h>
#endif

/* A host block: its links in this thread's list of live blocks, then the caller's bytes. */
typedef union block {
  struct {
    union block *prev, *next;
  } l;
  max_align_t align;
} block;

/* this thread's live blocks, newest first: a kron_api call allocates and frees its blocks on
 * its own thread, so on a failure every live block is the failing call's */
static _Thread_local block *live;

void *hx_host_alloc(size_t bytes, const char *what) {
  if (bytes > SIZE_MAX - sizeof(block))
    hx_die(REPRO_EXIT_OOM, "oom", "%s: %zu bytes cannot be allocated", what, bytes);
  block *b = malloc(sizeof *b + (bytes ? bytes : 1));
  if (!b) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory for %s (%zu bytes)", what, bytes);
  b->l.prev = NULL;
  b->l.next = live;
  if (live) live->l.prev = b;
  live = b;
  return b + 1;
}

void hx_host_free(void *p) {
  if (!p) return;
  block *b = (block *)p - 1;
  if (b->l.prev)
    b->l.prev->l.next = b->l.next;
  else
    live = b->l.next;
  if (b->l.next) b->l.next->l.prev = b->l.prev;
  free(b);
}

void hx_die(int exit_code, const char *status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  kron_api_frame *f = kron_api_current();
  if (f) {
    while (live) hx_host_free(live + 1);
    kron_api_unwind(f, msg);
  }
  fprintf(stderr, "kron (%s): %s\n", status, msg);
  exit(exit_code);
}

#ifdef KRON_API_CUDA
void hx_cuda_check(int err, const char *call, const char *file, int line) {
  if (err == cudaSuccess) return;
  cudaError_t e = (cudaError_t)err;
  hx_die(e == cudaErrorMemoryAllocation ? REPRO_EXIT_OOM : REPRO_EXIT_ERROR,
         e == cudaErrorMemoryAllocation ? "oom" : "error", "%s failed at %s:%d: %s (%s)", call,
         file, line, cudaGetErrorString(e), cudaGetErrorName(e));
}
#endif
