/* safetensors.h: read the header of a .safetensors file (8-byte little-endian header size,
 * a JSON object {"name": {"dtype": "F16", "shape": [..], "data_offsets": [begin, end]}, ...,
 * "__metadata__": {...}}, then the raw data), and map Llama checkpoint names onto the model's
 * weight slots. The JSON parser is our own, small and strict: it accepts exactly the JSON
 * grammar (objects, arrays, strings, numbers, true/false/null) and reports the byte's line and
 * column on error. */
#ifndef E2E_SAFETENSORS_H
#define E2E_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "e2e.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ST_MAX_DIMS 8

typedef enum { ST_F16, ST_BF16, ST_F32, ST_OTHER } st_dtype;

typedef struct {
  char *name;
  st_dtype dtype;
  char dtype_name[16];
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  uint64_t begin, end; /* byte range relative to the data section */
} st_tensor;

typedef struct {
  st_tensor *tensors;
  int count;
  uint64_t data_start; /* file offset of the data section: 8 + header size */
} st_file;

/* Parse path's header; every tensor's range is checked against the file's size and its
 * dtype·shape. Returns 0, or -1 with "path: line L, column C: expected ..." (or another
 * reason naming the file) in err. */
int st_read_header(const char *path, st_file *out, char *err, size_t err_len);
/* Same on a header held in memory (tests): json is the header text, data_size the size of
 * the data section after it. src names it in messages. */
int st_parse_header(const char *src, const char *json, size_t len, uint64_t data_size, st_file *out,
                    char *err, size_t err_len);
void st_free(st_file *f);

/* Where a checkpoint tensor goes: layer (-1 for model-wide), tensor (DRAW_* id), the first
 * row it fills in the stacked weight and the shape it must have. Returns 0 when name is a
 * weight of the model, 1 when it is a known name the prefill does not use (lm_head.weight,
 * rotary inv_freq), -1 when unknown. */
typedef struct {
  int layer, tensor;
  int64_t row0, rows, cols; /* cols 0: a vector of `rows` elements */
} st_slot;
int st_slot_of(const e2e_config *cfg, const char *name, st_slot *slot);

/* Load every model weight from the comma-separated list of files into host fp16 buffers:
 * put(user, slot, fp16 data, elements) is called once per tensor. Returns 0, or -1 with a
 * message naming the file and tensor (wrong shape, dtype, missing tensor, read error). */
typedef int (*st_put_fn)(void *user, const st_slot *slot, const uint16_t *data, size_t n);
int st_load_weights(const e2e_config *cfg, const char *paths, st_put_fn put, void *user, char *err,
                    size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
