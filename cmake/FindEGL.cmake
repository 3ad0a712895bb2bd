# FindEGL: EGL's headers (Debian: libegl-dev), for MuJoCo's renderer (native/envs/common/mujoco_render.h),
# which opens libEGL.so.1 at run time and links nothing. Sets EGL_FOUND and EGL_INCLUDE_DIR. A module
# of its own so that -DCMAKE_DISABLE_FIND_PACKAGE_EGL=ON hides it as it hides any other package.
find_path(EGL_INCLUDE_DIR EGL/egl.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(EGL REQUIRED_VARS EGL_INCLUDE_DIR)
mark_as_advanced(EGL_INCLUDE_DIR)
