/* run_nogpu.c: llama_e2e's GPU path in a build without CUDA: the log says so. */
#include "e2e_run.h"
#include "harness.h"

void e2e_run_gpu(const e2e_options *o) {
  hx_device_info info;
  hx_device_info_cpu(&info);
  hx_print_header(&info);
  e2e_print_config(o, "none");
  hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported",
         "built without CUDA: only --device cpu runs (rebuild with nvcc for the GPU path)");
}
