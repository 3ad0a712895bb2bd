# The pinned source distribution of a PyPI package, for a family that builds a C++ library from it
# (ALE from ale-py, Box2D from box2d-py, ViZDoom's library from vizdoom).
# pp_fetch_sdist(PACKAGE <pip name> VERSION <v> SHA256 <hash> DIR <dir> ARCHIVE <file name stem>
#                OPTION <PP_WITH_x> LABEL <name in messages> EXTRACTED <file the tree has>
#                SOURCE_VAR <var>)
# downloads the sdist into <dir> once (a persistent build dir keeps it), checks its SHA256 (a
# mismatch removes it and stops), extracts it once, and sets <var> to the extracted tree.
include_guard(GLOBAL)

function(pp_fetch_sdist)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "PACKAGE;VERSION;SHA256;DIR;ARCHIVE;OPTION;LABEL;EXTRACTED;SOURCE_VAR" "")
  set(sdist "${arg_DIR}/${arg_ARCHIVE}-${arg_VERSION}.tar.gz")
  set(src "${arg_DIR}/${arg_ARCHIVE}-${arg_VERSION}")
  if(NOT EXISTS "${sdist}")
    message(STATUS "${arg_LABEL}: downloading the ${arg_PACKAGE} ${arg_VERSION} sdist")
    # pip knows the user's index configuration. It reads the sdist's metadata with the sdist's own
    # build backend: first with the build's Python as it is (our isolated build has setuptools,
    # wheel and scikit-build-core), else in an isolated env that pip installs the backend into.
    execute_process(COMMAND "${Python_EXECUTABLE}" -m pip download --no-binary "${arg_PACKAGE}" --no-deps
                            --no-build-isolation -d "${arg_DIR}" "${arg_PACKAGE}==${arg_VERSION}"
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT rc EQUAL 0)
      execute_process(COMMAND "${Python_EXECUTABLE}" -m pip download --no-binary "${arg_PACKAGE}" --no-deps
                              -d "${arg_DIR}" "${arg_PACKAGE}==${arg_VERSION}"
                      RESULT_VARIABLE rc OUTPUT_QUIET)
    endif()
    if(NOT rc EQUAL 0 OR NOT EXISTS "${sdist}")
      message(FATAL_ERROR "${arg_OPTION}: cannot download the ${arg_PACKAGE} ${arg_VERSION} sdist with "
                          "'${Python_EXECUTABLE} -m pip download'; configure with -D${arg_OPTION}=OFF to skip it")
    endif()
  endif()
  file(SHA256 "${sdist}" hash)
  if(NOT hash STREQUAL arg_SHA256)
    file(REMOVE "${sdist}")
    message(FATAL_ERROR "${arg_LABEL}: ${sdist} has SHA256 ${hash}, expected ${arg_SHA256} (removed it)")
  endif()
  if(NOT EXISTS "${src}/${arg_EXTRACTED}")
    file(ARCHIVE_EXTRACT INPUT "${sdist}" DESTINATION "${arg_DIR}")
  endif()
  set(${arg_SOURCE_VAR} "${src}" PARENT_SCOPE)
endfunction()
