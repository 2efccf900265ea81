# The fa2 peer's kernels (kernels/attention/fa2/README.md): FlashAttention-2's forward, compiled
# from its source when CMake is given one, with its own flags (setup.py's, not the kit's
# warnings-as-errors). Included by kernels/attention/CMakeLists.txt after attn_systems.
set(REPRO_FA2_DIR "" CACHE PATH "a flash-attention checkout (csrc/flash_attn/): builds the fa2 peer")
set(REPRO_FA2_SOURCE "" CACHE STRING "its commit for the logs (empty: git rev-parse there)")
set(REPRO_FA2_ARCHS "80-real;90-real" CACHE STRING "GPU architectures of the fa2 kernels")
if(NOT REPRO_FA2_DIR)
  return()
endif()
set(fa2_src ${REPRO_FA2_DIR}/csrc/flash_attn/src)
set(fa2_cutlass ${REPRO_CUTLASS_DIR})
if(NOT fa2_cutlass)
  set(fa2_cutlass ${REPRO_FA2_DIR}/csrc/cutlass)
endif()
if(NOT EXISTS ${fa2_src}/flash_fwd_launch_template.h OR NOT EXISTS ${fa2_cutlass}/include/cute/tensor.hpp)
  message(FATAL_ERROR "REPRO_FA2_DIR=${REPRO_FA2_DIR}: expected csrc/flash_attn/src/"
                      "flash_fwd_launch_template.h there and CUTLASS at ${fa2_cutlass}/include "
                      "(git submodule update --init csrc/cutlass, or -DREPRO_CUTLASS_DIR)")
endif()
repro_peer_source(fa2_source ${REPRO_FA2_DIR} "${REPRO_FA2_SOURCE}")
# The forward at head dims 64, 96, 128 and 256, fp16 and bf16, causal and not: setup.py's
# instantiation files as they are.
set(fa2_instantiations "")
foreach(d 64 96 128 256)
  foreach(t fp16 bf16)
    list(APPEND fa2_instantiations ${fa2_src}/flash_fwd_hdim${d}_${t}_sm80.cu
                                   ${fa2_src}/flash_fwd_hdim${d}_${t}_causal_sm80.cu)
  endforeach()
endforeach()
add_library(fa2_kernels STATIC ${fa2_instantiations} ${CMAKE_CURRENT_SOURCE_DIR}/fa2/fa2_launch.cu)
set_property(TARGET fa2_kernels PROPERTY COMPILE_OPTIONS "") # not the kit's -Werror
set_property(TARGET fa2_kernels PROPERTY CUDA_ARCHITECTURES ${REPRO_FA2_ARCHS})
# torch_shim: the one PyTorch header the launch template includes (c10/cuda/CUDAException.h)
target_include_directories(fa2_kernels PRIVATE ${fa2_src} ${fa2_cutlass}/include
                                               ${CMAKE_CURRENT_SOURCE_DIR}/fa2
                                               ${CMAKE_CURRENT_SOURCE_DIR}/fa2/torch_shim)
# setup.py's flags; the FLASHATTENTION_DISABLE_* switches of what flash_attn_func's forward with
# softcap does not use (setup.py lists them, commented out, for builds like this one)
target_compile_definitions(fa2_kernels PRIVATE
  REPRO_FA2_SOURCE="${fa2_source}"
  FLASHATTENTION_DISABLE_BACKWARD FLASHATTENTION_DISABLE_DROPOUT FLASHATTENTION_DISABLE_ALIBI
  FLASHATTENTION_DISABLE_UNEVEN_K FLASHATTENTION_DISABLE_LOCAL)
target_compile_options(fa2_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-O3 -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__
                              -U__CUDA_NO_HALF2_OPERATORS__ -U__CUDA_NO_BFLOAT16_CONVERSIONS__
                              --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math>)
target_compile_features(fa2_kernels PRIVATE cuda_std_17)
target_compile_definitions(attn_systems PUBLIC REPRO_HAVE_FA2) # the registry test reads it
target_link_libraries(attn_systems PUBLIC fa2_kernels)
message(STATUS "fa2 peer: FlashAttention-2 from ${REPRO_FA2_DIR} (${fa2_source}), CUTLASS ${fa2_cutlass}")
