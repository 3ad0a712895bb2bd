# What native/python/xla_ffi.cc (the custom calls behind xla(): pools stepped from jitted JAX code)
# needs: XLA's FFI headers (xla/ffi/api/{c_api,api,ffi}.h, Apache-2.0). They ship only in the jaxlib
# wheel on PyPI, so the pinned wheel is downloaded once with pip (which knows the user's index) into
# the persistent build dir, the three headers are extracted, checked by their SHA256 and kept, and
# the 85 MB wheel is deleted. Nothing of jaxlib is linked: a handler gets XLA's API from its call
# frame, so the module runs with any jaxlib whose FFI accepts these headers' version (XLA keeps old
# FFI versions working for at least 12 months; pyproject's `jax` extra says which jax is tested).
#
# Defines PP_XLA_FFI_INCLUDE_DIR (the folder holding xla/) when PP_WITH_XLA is ON.

option(PP_WITH_XLA "Build xla(): XLA FFI custom calls for jitted JAX code (downloads the jaxlib wheel for its headers)" ON)
set(PP_JAXLIB_VERSION 0.10.2)
# One wheel for every builder (the headers are the same in all of them): CPython 3.11, x86-64 Linux.
set(PP_JAXLIB_WHEEL "jaxlib-${PP_JAXLIB_VERSION}-cp311-cp311-manylinux_2_27_x86_64.whl")
set(PP_XLA_FFI_HEADERS
    "c_api.h=85fc385c2d3a6b539a05b9cf4c3535aa24b4b41040f9e111c1f2c11b0e2fa539"
    "api.h=7f76572a80ed2097e5924e6d02d84891c725300172280bd009c0a7c9ac7961eb"
    "ffi.h=4e4a1d8f9825e88e15a2bcbb7c08eb6233f020b952cab5bbbb8510e3017515c5")
set(PP_XLA_ROOT "${CMAKE_BINARY_DIR}/_deps/xla_ffi" CACHE PATH "Download directory of jaxlib's XLA FFI headers")

# pp_xla_ffi_headers_ok(<var>): whether every header is in place with its pinned SHA256.
function(pp_xla_ffi_headers_ok var)
  set(ok TRUE)
  foreach(entry IN LISTS PP_XLA_FFI_HEADERS)
    string(REPLACE "=" ";" entry "${entry}")
    list(GET entry 0 name)
    list(GET entry 1 expected)
    set(path "${PP_XLA_ROOT}/jaxlib/include/xla/ffi/api/${name}")
    set(hash "")
    if(EXISTS "${path}")
      file(SHA256 "${path}" hash)
    endif()
    if(NOT hash STREQUAL expected)
      set(ok FALSE)
    endif()
  endforeach()
  set(${var} ${ok} PARENT_SCOPE)
endfunction()

if(PP_WITH_XLA)
  pp_xla_ffi_headers_ok(_pp_xla_ok)
  if(NOT _pp_xla_ok)
    if(NOT Python_EXECUTABLE)
      message(FATAL_ERROR "PP_WITH_XLA: no Python interpreter found (pip downloads the jaxlib wheel for XLA's "
                          "FFI headers); configure with -DPP_WITH_XLA=OFF to leave xla() out")
    endif()
    set(_pp_xla_wheel "${PP_XLA_ROOT}/${PP_JAXLIB_WHEEL}")
    if(NOT EXISTS "${_pp_xla_wheel}")
      message(STATUS "XLA FFI: downloading the jaxlib ${PP_JAXLIB_VERSION} wheel for its headers")
      execute_process(COMMAND "${Python_EXECUTABLE}" -m pip download --no-deps --only-binary :all:
                              --platform manylinux_2_27_x86_64 --python-version 3.11 --implementation cp --abi cp311
                              -d "${PP_XLA_ROOT}" "jaxlib==${PP_JAXLIB_VERSION}"
                      RESULT_VARIABLE _pp_xla_rc OUTPUT_QUIET)
      if(NOT _pp_xla_rc EQUAL 0 OR NOT EXISTS "${_pp_xla_wheel}")
        message(FATAL_ERROR "PP_WITH_XLA: cannot download ${PP_JAXLIB_WHEEL} with '${Python_EXECUTABLE} -m pip "
                            "download'; put it at ${_pp_xla_wheel}, or configure with -DPP_WITH_XLA=OFF to leave "
                            "xla() out")
      endif()
    endif()
    file(ARCHIVE_EXTRACT INPUT "${_pp_xla_wheel}" DESTINATION "${PP_XLA_ROOT}" PATTERNS "jaxlib/include/xla/ffi/api/*")
    pp_xla_ffi_headers_ok(_pp_xla_ok)
    if(NOT _pp_xla_ok)
      file(REMOVE_RECURSE "${PP_XLA_ROOT}/jaxlib" "${_pp_xla_wheel}")
      message(FATAL_ERROR "XLA FFI: the headers in ${PP_JAXLIB_WHEEL} do not have their pinned SHA256 (removed "
                          "the wheel); configure with -DPP_WITH_XLA=OFF to leave xla() out")
    endif()
    file(REMOVE "${_pp_xla_wheel}")  # the headers are kept; the wheel is not needed again
  endif()
  set(PP_XLA_FFI_INCLUDE_DIR "${PP_XLA_ROOT}/jaxlib/include")
endif()
