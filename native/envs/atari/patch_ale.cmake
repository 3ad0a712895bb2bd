# Patches to the ALE source from the ale-py sdist, applied once after extraction (idempotent: a
# marker comment says a file is patched). Each replacement must match, or the build stops: a new
# ALE version needs its patches checked.

function(_pp_replace_once path marker old new)
  file(READ "${path}" content)
  string(FIND "${content}" "${marker}" already)
  if(NOT already EQUAL -1)
    return()
  endif()
  string(FIND "${content}" "${old}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "ALE patch: '${old}' not found in ${path}")
  endif()
  string(REPLACE "${old}" "${new}" content "${content}")
  file(WRITE "${path}" "${content}")
endfunction()

# PhosphorBlend: make its averaging tables lazily, in process() (only called with color_averaging).
function(pp_patch_ale src)
  set(dir "${src}/src/ale/environment")
  set(marker "parallel_pool: lazy tables")
  _pp_replace_once("${dir}/phosphor_blend.hpp" "${marker}"
    "  uint8_t m_phosphor_blend_ratio;"
    "  uint8_t m_phosphor_blend_ratio;\n  bool m_tables_ready = false;  // ${marker}")
  _pp_replace_once("${dir}/phosphor_blend.cpp" "${marker}"
    "  m_phosphor_blend_ratio = 77;\n\n  makeAveragePalette();\n}"
    "  m_phosphor_blend_ratio = 77;\n  // ${marker}: makeAveragePalette() runs in process()\n}")
  _pp_replace_once("${dir}/phosphor_blend.cpp" "m_tables_ready = true"
    "void PhosphorBlend::process(ALEScreen& screen) {\n"
    "void PhosphorBlend::process(ALEScreen& screen) {\n  if (!m_tables_ready) {\n    makeAveragePalette();\n    m_tables_ready = true;\n  }\n")
endfunction()
