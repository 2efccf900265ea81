# repro_peer_source(OUT DIR GIVEN): the commit of a peer's source checkout for its logs (the
# peers fa3, fa2, flashinfer: kernels/attention/<peer>/<peer>.cmake): GIVEN when it is set (a
# checkout without .git), else `git rev-parse HEAD` in DIR, else "unknown".
function(repro_peer_source out dir given)
  set(source "${given}")
  if(NOT source)
    execute_process(COMMAND git -C ${dir} rev-parse HEAD OUTPUT_VARIABLE source
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE git_rc)
    if(NOT git_rc EQUAL 0 OR NOT source)
      set(source unknown)
    endif()
  endif()
  set(${out} "${source}" PARENT_SCOPE)
endfunction()
