# Patching a dependency's source, built from its PyPI source distribution, once after extraction.
# pp_replace_once(<library> <path> <marker> <old> <new>): replaces <old> by <new> in <path> unless
# <marker> is already there (idempotent). A replacement that does not match stops the build, naming
# <library>: a new version of the dependency needs its patches checked.
include_guard(GLOBAL)

function(pp_replace_once library path marker old new)
  file(READ "${path}" content)
  string(FIND "${content}" "${marker}" already)
  if(NOT already EQUAL -1)
    return()
  endif()
  string(FIND "${content}" "${old}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${library} patch: '${old}' not found in ${path}")
  endif()
  string(REPLACE "${old}" "${new}" content "${content}")
  file(WRITE "${path}" "${content}")
endfunction()
