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
  int dim_lo, dim_hi, dim_step; // the head dims it is built for: lo, lo + step, ..., hi
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
