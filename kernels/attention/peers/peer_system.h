// peer_system.h: what the peer systems (fa3/, fa2/, flashinfer/: another project's forward built
// from its source and run by attnvar) share on the kit's side: the problem they hand to their
// project's launch file, the rule of which cells a project's forward computes, and the reason a
// build without the project's source gives.
#ifndef PEER_SYSTEM_H
#define PEER_SYSTEM_H

#include <stddef.h>

#include "attn_system.h"
#include "peer_call.h"

// What a project's forward computes (dense keys, no column statistic, 16-bit inputs).
struct peer_serves {
  const char *system;  // the system's name in the logs: "fa2"
  const char *forward; // the project's forward in reasons: "FlashAttention-2's forward"
  int softcap;         // it computes the logits soft-cap (gemma2) besides the plain softmax
  int gqa;             // it serves K/V heads fewer than the query heads (H a multiple of them)
  // The head dims. kernel_dims: the project's dispatcher's (ascending, 0-terminated); built: those
  // instantiated here (likewise). dim_multiple 0: D must be a built kernel's own head dim; else
  // any multiple of it up to the largest kernel dim runs on the smallest kernel dim at or above
  // it, served when that kernel is built. dims_note: why, in the reason of a refused head dim.
  const int *kernel_dims, *built_dims;
  int dim_multiple;
  const char *dims_note;
};

// The problem of a cell: io's tensors, the shape, the workload's soft-cap.
peer_problem peer_problem_of(workload_id wl, const attn_shape *sh, const attn_io *io);

// 1 with the reason in why when the cell is outside what the forward computes, else 0.
int peer_refuses(const peer_serves *serves, workload_id wl, const attn_shape *sh, char *why,
                 size_t why_len);

// The reason every cell of a build without the project's source gives: how to build it.
void peer_unbuilt(const char *project, const char *cmake_option, const char *folder, char *why,
                  size_t why_len);

#endif
