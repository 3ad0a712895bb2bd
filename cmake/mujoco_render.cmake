# MuJoCo rendering (native/envs/common/mujoco_render.h) as the INTERFACE target pp_mujoco_render,
# for every family that draws MuJoCo models (the MuJoCo family; dm_control): link it next to the
# family's libmujoco target. It carries EGL's headers (Debian: libegl-dev) and PP_MUJOCO_RENDER=1,
# or, with -DPP_WITH_MUJOCO_RENDER=OFF or without EGL's headers, only PP_MUJOCO_RENDER=0 (the families then build without
# frames, and say so when asked for one). libEGL.so.1 itself is opened at run time, never linked.
include_guard(GLOBAL)
option(PP_WITH_MUJOCO_RENDER "MuJoCo rendering and pixel observations through EGL (needs EGL's headers)" ON)
add_library(pp_mujoco_render INTERFACE)
if(PP_WITH_MUJOCO_RENDER)
  find_package(EGL)
  if(NOT EGL_FOUND)
    message(STATUS "parallel_pool: MuJoCo and dm_control tasks will NOT render: EGL's headers not found "
                   "(Debian: apt-get install libegl-dev)")
    set(PP_WITH_MUJOCO_RENDER OFF)
  endif()
endif()
if(PP_WITH_MUJOCO_RENDER)
  target_include_directories(pp_mujoco_render SYSTEM INTERFACE "${EGL_INCLUDE_DIR}")
  target_compile_definitions(pp_mujoco_render INTERFACE PP_MUJOCO_RENDER=1)
  target_link_libraries(pp_mujoco_render INTERFACE ${CMAKE_DL_LIBS})
else()
  target_compile_definitions(pp_mujoco_render INTERFACE PP_MUJOCO_RENDER=0)
endif()
