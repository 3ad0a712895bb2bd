# Patches to the ALE source from the ale-py sdist (pp_replace_once: cmake/patch_source.cmake).
include(${PROJECT_SOURCE_DIR}/cmake/patch_source.cmake)

# PhosphorBlend: make its averaging tables lazily, in process() (only called with color_averaging).
function(pp_patch_ale src)
  set(dir "${src}/src/ale/environment")
  set(marker "parallel_pool: lazy tables")
  pp_replace_once(ALE "${dir}/phosphor_blend.hpp" "${marker}"
    "  uint8_t m_phosphor_blend_ratio;"
    "  uint8_t m_phosphor_blend_ratio;\n  bool m_tables_ready = false;  // ${marker}")
  pp_replace_once(ALE "${dir}/phosphor_blend.cpp" "${marker}"
    "  m_phosphor_blend_ratio = 77;\n\n  makeAveragePalette();\n}"
    "  m_phosphor_blend_ratio = 77;\n  // ${marker}: makeAveragePalette() runs in process()\n}")
  pp_replace_once(ALE "${dir}/phosphor_blend.cpp" "m_tables_ready = true"
    "void PhosphorBlend::process(ALEScreen& screen) {\n"
    "void PhosphorBlend::process(ALEScreen& screen) {\n  if (!m_tables_ready) {\n    makeAveragePalette();\n    m_tables_ready = true;\n  }\n")
endfunction()
