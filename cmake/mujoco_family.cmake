# What the families of MuJoCo models (mujoco, dm_control) build alike: the family, linking the
# mujoco-core wheel's libmujoco (cmake/libmujoco.cmake) and MuJoCo rendering
# (cmake/mujoco_render.cmake), and the raw benchmark loop native/bench/mujoco_raw.cc over it.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/libmujoco.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/mujoco_render.cmake)

# pp_add_mujoco_family(<name>): families/<name>.so from family.cc and register.cc; the rpath
# $ORIGIN/../../mujoco finds libmujoco from site-packages/parallel_pool/families/ at run time.
function(pp_add_mujoco_family name)
  pp_add_family(${name} SOURCES family.cc register.cc LINK pp_libmujoco pp_mujoco_render)
  set_target_properties(pp_family_${name} PROPERTIES
    BUILD_RPATH "${PP_LIBMUJOCO_DIR}"
    INSTALL_RPATH "$ORIGIN/../../mujoco")
endfunction()

# pp_add_mujoco_raw(<target> <package> <folder> [<definition>...]): the raw single-thread loop (no
# pool) over this family's register.cc, the per-core limit of the benchmarks, built at the build
# dir's top, where they look for it. Its default --assets-dir is <folder> (a path below the package's
# directory) of the configuring Python's <package>, if it has it.
function(pp_add_mujoco_raw target package folder)
  execute_process(COMMAND "${Python_EXECUTABLE}" -c
                          "import importlib.util, os
spec = importlib.util.find_spec('${package}')
print(os.path.join(os.path.dirname(spec.origin), '${folder}') if spec else '', end='')"
                  OUTPUT_VARIABLE assets)
  add_executable(${target} ${PROJECT_SOURCE_DIR}/native/bench/mujoco_raw.cc register.cc)
  target_link_libraries(${target} PRIVATE pp_headers pp_libmujoco pp_mujoco_render Threads::Threads)
  target_compile_options(${target} PRIVATE -Wall -Wextra -ffp-contract=off)
  target_compile_definitions(${target} PRIVATE ${ARGN} PP_GYMNASIUM_ASSETS_DIR="${assets}")
  set_target_properties(${target} PROPERTIES BUILD_RPATH "${PP_LIBMUJOCO_DIR}" RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")
endfunction()
