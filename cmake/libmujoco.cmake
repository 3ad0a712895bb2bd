# The mujoco-core wheel's libmujoco, as the target pp_libmujoco (include directory and library by
# full path), for the families that link it (mujoco, dm_control). The file name carries the version and has no
# unversioned symlink, so it is found by glob; PP_LIBMUJOCO_DIR is its folder, for an rpath.
include_guard(GLOBAL)
if(NOT Python_EXECUTABLE)
  message(FATAL_ERROR "libmujoco: no Python interpreter found (it locates mujoco-core)")
endif()
# find_spec locates the package without running its __init__ (which would import numpy).
set(_pp_find_libmujoco [=[
import glob, importlib.util, os
spec = importlib.util.find_spec("mujoco")
for d in (spec.submodule_search_locations or []) if spec else []:
    libs = sorted(glob.glob(os.path.join(d, "libmujoco.so.*")))
    if libs and os.path.exists(os.path.join(d, "include", "mujoco", "mujoco.h")):
        print(libs[-1] + ";" + os.path.join(d, "include"), end="")
        break
]=])
execute_process(COMMAND "${Python_EXECUTABLE}" -c "${_pp_find_libmujoco}"
                OUTPUT_VARIABLE _pp_libmujoco RESULT_VARIABLE _pp_libmujoco_rc)
if(NOT _pp_libmujoco_rc EQUAL 0 OR NOT _pp_libmujoco)
  message(FATAL_ERROR "no libmujoco.so.* with headers in ${Python_EXECUTABLE}'s mujoco package; "
                      "pip install mujoco-core==4.0.1, or switch the families that need it off")
endif()
list(GET _pp_libmujoco 0 _pp_libmujoco_library)
list(GET _pp_libmujoco 1 _pp_libmujoco_include)
get_filename_component(PP_LIBMUJOCO_DIR "${_pp_libmujoco_library}" DIRECTORY)
add_library(pp_libmujoco INTERFACE)
target_include_directories(pp_libmujoco SYSTEM INTERFACE "${_pp_libmujoco_include}")
target_link_libraries(pp_libmujoco INTERFACE "${_pp_libmujoco_library}")
