// The Hopper kernels' synchronization on sm90_async.cuh's primitives: rings of stages guarded
// by full/empty mbarriers, the consumers' issue turns on named barriers, and the hand-off of
// each claimed tile from the producer thread to the consumers.
#pragma once
#include "sm90_async.cuh" // mbarriers, TMA, named barriers, setmaxnreg
#include "tile_scheduler.cuh"

namespace fused {

// A ring of NST stages, each with a full and an empty mbarrier: block number `it` of a CTA
// lives in stage it % NST, whose barriers are in phase (it / NST) & 1 (unsigned counters: no
// sign fix-ups in the division; the column pass's producer counts in int).
template <int NST> struct Ring {
  uint64_t *full, *empty;
  // The producer's wait for block it's stage to be released: the other parity, so the first
  // round passes at once.
  template <typename I> __device__ __forceinline__ void wait_empty(I it) const {
    mbar_wait(&empty[it % NST], ((it / NST) & 1) ^ 1);
  }
};

// A consumer thread of warpgroup wg (1 ..): its consumer index c (wg - 1), its warp within the
// warpgroup, its lane, and the lane's mma fragment row group g and column pair t.
struct ConsumerThread {
  int c, warp, lane, g, t;
  __device__ __forceinline__ explicit ConsumerThread(int wg)
      : c(wg - 1), warp((threadIdx.x >> 5) & 3), lane(threadIdx.x & 31), g(lane >> 2), t(lane & 3) {
  }
};

constexpr int kWsSchedBar = 1; // named barriers 1..NC: the consumers' turns (0 is __syncthreads)

// The consumers' turns to issue their GEMMs (ping-pong): consumer c waits on named barrier
// kWsSchedBar + c, issues, and passes the turn to the next one (c + 1, or 0 after the last), so
// one's softmax runs under the others' GEMMs. Consumer 0 takes the first turn (the last one
// passes it) and, at the end, the last turn, so no barrier is left half-arrived when the CTA
// exits.
__device__ __forceinline__ void wait_turn(int c) { named_sync(kWsSchedBar + c, 256); }
__device__ __forceinline__ void pass_turn(int next) { named_arrive(kWsSchedBar + next, 256); }

// The producer thread's tiles (tile_scheduler.cuh's claims): per tile it waits until the
// consumers are done with the last tile's operands (empty), publishes the tile in *slot
// (released by the arrive on full that load's loads complete, read after the consumers' wait)
// and calls load(t); with no tile left it publishes -1 and arrives on full itself.
template <typename Load>
__device__ __forceinline__ void ws_produce_tiles(int ntiles, uint64_t *empty, uint64_t *full,
                                                 int *slot, Load &load) {
  for (int round = 0, t = blockIdx.x;; round++, t = ws_claim_tile()) {
    mbar_wait(empty, (round & 1) ^ 1);
    if (t >= ntiles) {
      *slot = -1;
      mbar_arrive(full);
      ws_release_counter();
      break;
    }
    *slot = t;
    load(t);
  }
}

// A consumer's tile of this round (-1: none left), published by ws_produce_tiles. UNIFORM:
// broadcast from lane 0, so ptxas knows it warp-uniform.
template <bool UNIFORM>
__device__ __forceinline__ int ws_next_tile(uint64_t *full, const int *slot, int round) {
  mbar_wait(full, round & 1);
  const int tix = lds_volatile(slot);
  return UNIFORM ? __shfl_sync(0xffffffffu, tix, 0) : tix;
}

} // namespace fused
