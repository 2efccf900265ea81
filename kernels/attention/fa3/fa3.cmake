# The fa3 peer's kernels (kernels/attention/fa3/README.md): FlashAttention-3's forward, compiled from its
# source when CMake is given one, with its own flags (hopper/setup.py's, not the kit's
# warnings-as-errors), for sm_90a only. Included by kernels/attention/CMakeLists.txt after attn_systems.
set(REPRO_FA3_DIR "" CACHE PATH "a flash-attention checkout (hopper/): builds the fa3 peer")
set(REPRO_CUTLASS_DIR "" CACHE PATH "CUTLASS for it (empty: REPRO_FA3_DIR/csrc/cutlass)")
set(REPRO_FA3_SOURCE "" CACHE STRING "its commit for the logs (empty: git rev-parse there)")
if(NOT REPRO_FA3_DIR)
  return()
endif()
set(fa3_hopper ${REPRO_FA3_DIR}/hopper)
set(fa3_cutlass ${REPRO_CUTLASS_DIR})
if(NOT fa3_cutlass)
  set(fa3_cutlass ${REPRO_FA3_DIR}/csrc/cutlass)
endif()
if(NOT EXISTS ${fa3_hopper}/flash.h OR NOT EXISTS ${fa3_cutlass}/include/cutlass/cutlass.h)
  message(FATAL_ERROR "REPRO_FA3_DIR=${REPRO_FA3_DIR}: expected hopper/flash.h there and "
                      "CUTLASS at ${fa3_cutlass}/include/cutlass/cutlass.h (git submodule "
                      "update --init csrc/cutlass, or -DREPRO_CUTLASS_DIR)")
endif()
repro_peer_source(fa3_source ${REPRO_FA3_DIR} "${REPRO_FA3_SOURCE}")
# The forward, plain and with the logits soft-cap (gemma2): head dims 64, 96, 128 and 256
# (run_mha_fwd runs D on the smallest at or above it; 192 is not built, so D in 136..192 is
# refused), fp16 and bf16.
set(fa3_instantiations "")
foreach(d 64 96 128 256)
  foreach(t fp16 bf16)
    list(APPEND fa3_instantiations ${fa3_hopper}/instantiations/flash_fwd_hdim${d}_${t}_sm90.cu
                                   ${fa3_hopper}/instantiations/flash_fwd_hdim${d}_${t}_softcap_sm90.cu)
  endforeach()
endforeach()
add_library(fa3_kernels STATIC ${fa3_instantiations}
  ${fa3_hopper}/flash_prepare_scheduler.cu # referenced by the launch, run for varlen only
  ${CMAKE_CURRENT_SOURCE_DIR}/fa3/fa3_launch.cu)
set_property(TARGET fa3_kernels PROPERTY COMPILE_OPTIONS "") # not the kit's -Werror
set_property(TARGET fa3_kernels PROPERTY CUDA_ARCHITECTURES 90a-real)
target_include_directories(fa3_kernels PRIVATE ${fa3_hopper} ${fa3_cutlass}/include
                                               ${CMAKE_CURRENT_SOURCE_DIR}/fa3)
target_compile_definitions(fa3_kernels PRIVATE
  REPRO_FA3_SOURCE="${fa3_source}" NDEBUG
  CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED CUTLASS_ENABLE_GDC_FOR_SM90 CUTLASS_DEBUG_TRACE_LEVEL=0
  __CUDA_NO_HALF_OPERATORS__ __CUDA_NO_HALF_CONVERSIONS__ __CUDA_NO_HALF2_OPERATORS__
  __CUDA_NO_BFLOAT16_CONVERSIONS__
  FLASHATTENTION_DISABLE_BACKWARD FLASHATTENTION_DISABLE_SPLIT FLASHATTENTION_DISABLE_PAGEDKV
  FLASHATTENTION_DISABLE_APPENDKV FLASHATTENTION_DISABLE_LOCAL
  FLASHATTENTION_DISABLE_PACKGQA FLASHATTENTION_DISABLE_FP8 FLASHATTENTION_DISABLE_VARLEN
  FLASHATTENTION_DISABLE_HDIM192
  FLASHATTENTION_DISABLE_SM8x FLASHATTENTION_DISABLE_HDIMDIFF64 FLASHATTENTION_DISABLE_HDIMDIFF192)
target_compile_options(fa3_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-O3 --use_fast_math --expt-relaxed-constexpr -lineinfo
                              --ftemplate-backtrace-limit=0>)
target_compile_features(fa3_kernels PRIVATE cuda_std_17)
target_compile_definitions(attn_systems PUBLIC REPRO_HAVE_FA3) # the registry test reads it
target_link_libraries(attn_systems PUBLIC fa3_kernels)
message(STATUS "fa3 peer: FlashAttention-3 from ${REPRO_FA3_DIR} (${fa3_source}), CUTLASS ${fa3_cutlass}")
