# Writes repro_commit.h (#define REPRO_COMMIT "<short hash>[-dirty]") for the log's meta line,
# and, with -DOUT_TXT=<file>, the same hash as plain text beside the binaries: the PyTorch peers
# read it on machines whose copy of the tree has no .git (scripts/peers/meta.py).
# Run at every build (cmake -P); the file is rewritten only when the commit changed, so an
# unchanged tree does not recompile the harness.
#   cmake -DSRC=<source dir> -DOUT=<file> [-DOUT_TXT=<file>] -P repro_commit.cmake
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=7
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#define REPRO_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
if(DEFINED OUT_TXT)
  if(EXISTS "${OUT_TXT}")
    file(READ "${OUT_TXT}" old_txt)
  else()
    set(old_txt "")
  endif()
  if(NOT old_txt STREQUAL "${commit}\n")
    file(WRITE "${OUT_TXT}" "${commit}\n")
  endif()
endif()
