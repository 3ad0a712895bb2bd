# parallel_pool_add_env_library(<target> [OUTPUT_NAME <name>] SOURCES <source>...)
#
# Builds an env library: a shared module exporting parallel_pool_register (see core/family.h),
# against the engine's headers (the target parallel_pool::headers). The same function builds the
# families of this repository and env libraries built outside it (after
# find_package(parallel_pool CONFIG)). The result is `<name>.so`, loaded at run time by
# parallel_pool.register(library=...) or pp::LoadEnvLibrary.
function(parallel_pool_add_env_library target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "parallel_pool_add_env_library(${target}): SOURCES is required")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE parallel_pool::headers)
  target_compile_features(${target} PRIVATE cxx_std_20)
  # Hidden visibility: only the entry points (PP_FAMILY_EXPORT) are seen by the loader, so two
  # libraries never bind to each other's internal symbols.
  set_target_properties(${target} PROPERTIES
    PREFIX "" SUFFIX ".so" POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # Static libraries linked in (ALE, say) keep their symbols to themselves too.
  target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME "${ARG_OUTPUT_NAME}")
  endif()
endfunction()
