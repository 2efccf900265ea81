/* systems.c: the system registry, the one list of the systems the kernel binaries run. */
#include "attn_system.h"

#include <stdio.h>
#include <string.h>

#ifdef REPRO_HAVE_CUDA
#define GPU_SYSTEM(sym) (&(sym))
#else
#define GPU_SYSTEM(sym) NULL
#endif

const system_entry system_table[] = {
    {"ref", 1, NULL, NULL, "CPU double-precision reference (small sizes)", 0, 0},
    {"unfused", 0, GPU_SYSTEM(attn_system_unfused), "fused",
     "eager: cuBLAS GEMMs and separate kernels, materialises S x S", 0, 0},
    {"fused", 0, GPU_SYSTEM(attn_system_fused), "unfused",
     "FlashTensor-style kernels, never materialises S x S", 0, 0},
    {"fused-diag", 0, GPU_SYSTEM(attn_system_fused_diag), "fused",
     "fused with a cache of the k score tiles nearest the diagonal (--diag-k, h2o-diag study)",
     SYS_OPT_DIAG, 0},
    {"fa3", 0, GPU_SYSTEM(attn_system_fa3), "fused",
     "peer: FlashAttention-3's Hopper forward (attn, gemma2's soft-cap; built with "
     "-DREPRO_FA3_DIR)",
     0, 1},
    {"fa2", 0, GPU_SYSTEM(attn_system_fa2), "fused",
     "peer: FlashAttention-2's forward (attn, gemma2's soft-cap; built with -DREPRO_FA2_DIR)", 0,
     1},
    {"flashinfer", 0, GPU_SYSTEM(attn_system_flashinfer), "fused",
     "peer: FlashInfer's sm_90 single prefill (attn, gemma2's soft-cap; built with "
     "-DREPRO_FLASHINFER_DIR)",
     0, 1},
};
const int system_count = (int)(sizeof system_table / sizeof *system_table);

int system_find(const char *name) {
  for (int i = 0; i < system_count; i++)
    if (name && strcmp(name, system_table[i].name) == 0) return i;
  return -1;
}

const char *const *system_names(void) {
  static const char *names[sizeof system_table / sizeof *system_table];
  for (int i = 0; i < system_count; i++) names[i] = system_table[i].name;
  return names;
}

const char *system_choices(void) {
  static char buf[256];
  return buf[0] ? buf : names_join(system_names(), system_count, buf, sizeof buf);
}

void system_list(FILE *out) {
  for (int i = 0; i < system_count; i++)
    fprintf(out, "%s\t%s\t%s\n", system_table[i].name, system_table[i].on_cpu ? "cpu" : "gpu",
            system_table[i].about);
}
