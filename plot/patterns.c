/* The one table of AE-format extraction rules (see patterns.h). */
#include "patterns.h"

const char *const ae_metric_names[AE_NMETRICS] = {
    "avg_ms", "min_ms", "max_ms", "gflops_s", "mib", "trt_act_bytes", "trt_weight_bytes",
};

/* A Python float as printed by f"{x:.4f}" or f"{x}" (repr: 1e+16, inf, nan included). */
#define NUM "[-+]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?inf|nan"

const ae_pattern ae_patterns[] = {
    /* [<system>] avg 1.2 ms, min 1.1 ms, max 1.3 ms, 105749.3 gflops/s (10 runs, 100 warmups, profiled)
     * e2e logs have no gflops part; an optional ", <x> gb/s" part is allowed as the tool
     * that wrote these logs could print one. The run/warmup tail is required, so a line cut
     * in the middle is reported as malformed instead of read as a smaller number. */
    {"time", "] avg ",
     "\\[[^\\]]*\\] avg (?<avg_ms>" NUM ") ms, min (?<min_ms>" NUM ") ms, max (?<max_ms>" NUM
     ") ms(?:, (?<gflops_s>" NUM ") gflops/s)?(?:, (?:" NUM ") gb/s)? \\([0-9]+ runs, [0-9]+ "
     "warmups(?:, profiled)?\\)",
     PICK_FIRST, 1, 0, ST_OK, 0, 1},
    /* peak memory of the PyTorch-based systems: a line `mib=<float>` (the artifact's
     * `\nmib=`), so start_peak_mem_mib=, peak_mib= and xmib= lines are not candidates */
    {"mib", "mib=", "^mib=(?<mib>" NUM ")\\s*$", PICK_MAX, 1, 0, ST_OK, 1, 0},
    /* TensorRT engine memory: activation + weights, summed by the reader; in a log that has
     * them they win over mib= (the artifact's fig13/plot.py does the same for tensorrt) */
    {"trt_act", "Total Activation Memory:",
     "Total Activation Memory:\\s*(?<trt_act_bytes>[0-9]+) bytes", PICK_FIRST, 1, 0, ST_OK, 0, 0},
    {"trt_weights", "Total Weights Memory:",
     "Total Weights Memory:\\s*(?<trt_weight_bytes>[0-9]+) bytes", PICK_FIRST, 1, 0, ST_OK, 0, 0},
    /* a cell without a time line is NS, unless its output says why it failed */
    {"oom", "out of memory", "out of memory", PICK_FIRST, 0, 1, ST_OOM, 0, 0},
    {"oom", "OutOfMemoryError", "OutOfMemoryError", PICK_FIRST, 0, 1, ST_OOM, 0, 0},
    {"timeout", "DUE TO TIME LIMIT", "DUE TO TIME LIMIT", PICK_FIRST, 0, 1, ST_TIMEOUT, 0, 0},
};

const int ae_npatterns = (int)(sizeof ae_patterns / sizeof ae_patterns[0]);
