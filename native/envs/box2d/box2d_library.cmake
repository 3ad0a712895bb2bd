# Box2D 2.3 (the C++ engine under Gymnasium's Box2D envs), built from the pinned box2d-py source
# distribution on PyPI into the persistent build dir: the C++ sources only, no SWIG, no Python.
# Defines the static PIC target pp_box2d (include as <Box2D/Box2D.h>).

set(PP_BOX2D_VERSION 2.3.8)
set(PP_BOX2D_SHA256 bdacfbbc56079bb317548efe49d3d5a86646885cc27f4a2ee97e4b2960921ab7)
set(PP_BOX2D_ROOT "${CMAKE_BINARY_DIR}/_deps/box2d" CACHE PATH "Download directory of the box2d-py sdist")
set(_pp_b2_root "${PP_BOX2D_ROOT}")
include(${PROJECT_SOURCE_DIR}/cmake/patch_source.cmake)
include(${PROJECT_SOURCE_DIR}/cmake/pypi_sdist.cmake)
pp_fetch_sdist(PACKAGE box2d-py VERSION ${PP_BOX2D_VERSION} SHA256 ${PP_BOX2D_SHA256} DIR "${_pp_b2_root}"
               ARCHIVE box2d-py OPTION PP_WITH_BOX2D LABEL Box2D EXTRACTED Box2D/Box2D.h SOURCE_VAR _pp_b2_src)

# One patch: box2d-py's b2Settings.h makes a failed b2Assert set a Python AssertionError (it
# includes Python.h) and throw an empty b2AssertException. Without Python, the exception carries the
# message instead, so the pool reports it as the env's error. Every other line is box2d-py's.
set(_pp_b2_settings "${_pp_b2_src}/Box2D/Common/b2Settings.h")
pp_replace_once(Box2D "${_pp_b2_settings}" "parallel_pool: no Python" "#include <Python.h>\nclass b2AssertException {};\n"
  "#include <stdexcept>  // parallel_pool: no Python\nclass b2AssertException : public std::logic_error {\n public:\n  using std::logic_error::logic_error;\n};\n")
pp_replace_once(Box2D "${_pp_b2_settings}" "Box2D assertion failed"
  "{ PyErr_SetString(PyExc_AssertionError, #A); throw b2AssertException(); }"
  "{ throw b2AssertException(\"Box2D assertion failed: \" #A); }")

# A second patch: Box2D counts its GJK and time-of-impact calls (statistics nobody here reads) in
# plain globals, which the pool's threads, each stepping its own world, would write at once: a data
# race (undefined behaviour, and ThreadSanitizer reports it). Each thread counts its own instead.
# The physics never reads them, so results are unchanged.
function(_pp_b2_thread_local file)
  set(path "${_pp_b2_src}/Box2D/${file}")
  file(READ "${path}" text)
  string(FIND "${text}" "parallel_pool: per thread" patched)
  if(NOT patched EQUAL -1)
    return()
  endif()
  # Lines are given without their ';' (a CMake list separator).
  foreach(line IN LISTS ARGN)
    string(FIND "${text}" "\n${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "Box2D patch: ${file} of box2d-py ${PP_BOX2D_VERSION} has no line '${line}'")
    endif()
    string(REPLACE "\n${line}" "\n// parallel_pool: per thread\nthread_local ${line}" text "${text}")
  endforeach()
  file(WRITE "${path}" "${text}")
endfunction()
_pp_b2_thread_local(Collision/b2Distance.cpp "int32 b2_gjkCalls, b2_gjkIters, b2_gjkMaxIters")
_pp_b2_thread_local(Collision/b2TimeOfImpact.cpp "float32 b2_toiTime, b2_toiMaxTime"
                    "int32 b2_toiCalls, b2_toiIters, b2_toiMaxIters" "int32 b2_toiRootIters, b2_toiMaxRootIters")

# The sources box2d-py's setup.py compiles (Box2D.i aside: that is the SWIG wrapper).
# b2World::Step times its phases for b2World::GetProfile() with gettimeofday, about ten calls a
# step (2% of BipedalWalker's step in perf); nothing here reads the profile, so b2Timer.cpp takes
# its own clockless branch (the one Box2D compiles on other platforms). Simulation is unchanged.
pp_replace_once(Box2D "${_pp_b2_src}/Box2D/Common/b2Timer.cpp" "parallel_pool: no clock"
                "#elif defined(__linux__) || defined (__APPLE__)" "#elif 0  // parallel_pool: no clock")

file(GLOB _pp_b2_sources
  "${_pp_b2_src}/Box2D/Dynamics/*.cpp" "${_pp_b2_src}/Box2D/Dynamics/Contacts/*.cpp"
  "${_pp_b2_src}/Box2D/Dynamics/Joints/*.cpp" "${_pp_b2_src}/Box2D/Common/*.cpp"
  "${_pp_b2_src}/Box2D/Collision/*.cpp" "${_pp_b2_src}/Box2D/Collision/Shapes/*.cpp")
add_library(pp_box2d STATIC ${_pp_b2_sources})
set_target_properties(pp_box2d PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
# The flags of the PyPI build (CPython's -O3 -DNDEBUG -fwrapv, setup.py's -I.), float32 as in its
# b2Settings.h, and no FMA contraction (the x86-64 baseline box2d-py is built for has no FMA), so
# that every float matches the Box2D under Gymnasium's envs. Box2D's own warnings are not ours.
target_compile_options(pp_box2d PRIVATE -O3 -fwrapv -ffp-contract=off -w)
# Box2D 2.3's b2Joint::Destroy reads the joint's type after running its destructor, which UBSan's
# vptr check reports (the sanitizer presets make that fatal); the memory is still live and
# unchanged then, so it is harmless. Every other sanitizer check stays on for Box2D's code.
target_compile_options(pp_box2d PRIVATE -fno-sanitize=vptr)
target_compile_definitions(pp_box2d PRIVATE NDEBUG)
target_include_directories(pp_box2d SYSTEM PUBLIC "${_pp_b2_src}")
