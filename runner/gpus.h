/* gpus: the GPUs the local executor spreads cells over. One cell per GPU at a time, each
 * process pinned with CUDA_VISIBLE_DEVICES; the list comes from --gpus, CUDA_VISIBLE_DEVICES
 * or `nvidia-smi --query-gpu=index,uuid,name`, in that order of authority. */
#ifndef RUNNER_GPUS_H
#define RUNNER_GPUS_H

typedef struct {
  char index[16]; /* nvidia-smi's index, or what CUDA_VISIBLE_DEVICES named ("" unknown) */
  char uuid[96];  /* GPU-..., or "" when nvidia-smi is not there */
  char name[128]; /* e.g. "NVIDIA H100 80GB HBM3", or "" */
} gpu_info;

typedef struct {
  int n;
  gpu_info *gpus;
} gpu_list;

/* The GPUs this machine offers: CUDA_VISIBLE_DEVICES's entries when it is set (matched to
 * nvidia-smi's rows by index or UUID), else every row of nvidia-smi, else none. Returns 0, or
 * -1 with *err (caller frees) when CUDA_VISIBLE_DEVICES names a GPU nvidia-smi does not list. */
int gpus_visible(gpu_list *out, char **err);

/* Applies a --gpus SPEC to the visible list: "all"; N (the first N); a comma-separated LIST
 * of indices or UUIDs ("1," is GPU 1 alone). Every GPU kept must be visible and of one model.
 * Returns 0, or -1 with *err (caller frees). */
int gpus_select(gpu_list *list, const char *spec, char **err);

/* The value a cell's CUDA_VISIBLE_DEVICES gets: the UUID when known (unambiguous whatever
 * CUDA_DEVICE_ORDER says), else the index as given. */
const char *gpu_pin_value(const gpu_info *g);

void gpus_free(gpu_list *list);

/* Parses nvidia-smi's `index, uuid, name` CSV rows (no header) into out; rows that do not
 * parse are skipped. Exposed for the tests. */
void gpus_parse_smi(const char *text, gpu_list *out);

#endif
