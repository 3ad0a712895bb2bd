# What native/envs/common/pygame_text.h needs: FreeType (Debian: libfreetype-dev), and pygame 2.6.1's
# default font, freesansbold.ttf (CarRacing draws its score with it), taken at build time from pygame's
# PyPI source distribution (never stored in this repository) and installed as parallel_pool/fonts/.
#
# Defines Freetype::Freetype where FreeType is found (link it into a library that includes
# pygame_text.h; the engine does not; the families that draw text are skipped without it)
# and PP_PYGAME_FONT_FILE, the font in the build tree ("" when PP_WITH_PYGAME_FONT is OFF). The
# installed package always has a fonts/ folder (its README.txt), so an env library can declare the
# resource "fonts_dir parallel_pool fonts" and find the font there, or report that it was left out.

find_package(Freetype)

option(PP_WITH_PYGAME_FONT "Install pygame 2.6.1's freesansbold.ttf (from its PyPI sdist) for CarRacing's score" ON)
set(PP_PYGAME_VERSION 2.6.1)
# The sdist pip resolves for pygame==2.6.1 (https://pypi.org/simple/pygame/), and the font inside it
# (byte for byte the one pygame's wheels install).
set(PP_PYGAME_SDIST_URL
    "https://files.pythonhosted.org/packages/49/cc/08bba60f00541f62aaa252ce0cfbd60aebd04616c0b9574f755b583e45ae/pygame-2.6.1.tar.gz")
set(PP_PYGAME_SDIST_SHA256 56fb02ead529cee00d415c3e007f75e0780c655909aaa8e8bf616ee09c9feb1f)
set(PP_PYGAME_FONT_SHA256 bf9251269f11e4b35582a99376096deee3d0c4973a459cbd97b0bebc01f440ad)
set(PP_PYGAME_ROOT "${CMAKE_BINARY_DIR}/_deps/pygame" CACHE PATH "Download directory of the pygame sdist")

set(PP_PYGAME_FONT_FILE "")
set(_pp_fonts_dir "${CMAKE_BINARY_DIR}/fonts")
file(MAKE_DIRECTORY "${_pp_fonts_dir}")
if(PP_WITH_PYGAME_FONT)
  set(_pp_pg_font "${_pp_fonts_dir}/freesansbold.ttf")
  if(EXISTS "${_pp_pg_font}")
    file(SHA256 "${_pp_pg_font}" _pp_pg_hash)
  endif()
  if(NOT _pp_pg_hash STREQUAL PP_PYGAME_FONT_SHA256)
    set(_pp_pg_sdist "${PP_PYGAME_ROOT}/pygame-${PP_PYGAME_VERSION}.tar.gz")
    if(EXISTS "${_pp_pg_sdist}")
      file(SHA256 "${_pp_pg_sdist}" _pp_pg_sdist_hash)
    endif()
    if(NOT _pp_pg_sdist_hash STREQUAL PP_PYGAME_SDIST_SHA256)
      # `pip download` cannot fetch this sdist: it prepares the metadata with pygame's setup.py, which
      # needs SDL2's development files. The same file is fetched directly, checked by its SHA256.
      message(STATUS "pygame_text: downloading the pygame ${PP_PYGAME_VERSION} sdist for freesansbold.ttf")
      file(DOWNLOAD "${PP_PYGAME_SDIST_URL}" "${_pp_pg_sdist}" EXPECTED_HASH SHA256=${PP_PYGAME_SDIST_SHA256}
           STATUS _pp_pg_status TLS_VERIFY ON)
      list(GET _pp_pg_status 0 _pp_pg_rc)
      if(NOT _pp_pg_rc EQUAL 0)
        file(REMOVE "${_pp_pg_sdist}")
        message(FATAL_ERROR "PP_WITH_PYGAME_FONT: cannot download ${PP_PYGAME_SDIST_URL} (${_pp_pg_status}); "
                            "put the file at ${_pp_pg_sdist}, or configure with -DPP_WITH_PYGAME_FONT=OFF "
                            "(CarRacing's frames then cannot draw its score)")
      endif()
    endif()
    file(ARCHIVE_EXTRACT INPUT "${_pp_pg_sdist}" DESTINATION "${PP_PYGAME_ROOT}"
         PATTERNS "pygame-${PP_PYGAME_VERSION}/src_py/freesansbold.ttf")
    set(_pp_pg_extracted "${PP_PYGAME_ROOT}/pygame-${PP_PYGAME_VERSION}/src_py/freesansbold.ttf")
    file(SHA256 "${_pp_pg_extracted}" _pp_pg_hash)
    if(NOT _pp_pg_hash STREQUAL PP_PYGAME_FONT_SHA256)
      message(FATAL_ERROR "pygame_text: ${_pp_pg_extracted} has SHA256 ${_pp_pg_hash}, expected ${PP_PYGAME_FONT_SHA256}")
    endif()
    file(COPY_FILE "${_pp_pg_extracted}" "${_pp_pg_font}")
  endif()
  set(PP_PYGAME_FONT_FILE "${_pp_pg_font}")
  set(_pp_fonts_note "freesansbold.ttf is pygame ${PP_PYGAME_VERSION}'s default font (src_py/freesansbold.ttf of its sdist):
FreeSans Bold of GNU FreeFont, licensed under the GNU GPL v3 or later with the font embedding exception.")
else()
  set(_pp_fonts_note "This build was configured with PP_WITH_PYGAME_FONT=OFF: pygame's freesansbold.ttf is not here.")
endif()
file(WRITE "${_pp_fonts_dir}/README.txt"
     "Fonts the env libraries draw text with (native/envs/common/pygame_text.h).\n${_pp_fonts_note}\n")

if(SKBUILD OR PP_BUILD_PYTHON)
  install(FILES "${_pp_fonts_dir}/README.txt" ${PP_PYGAME_FONT_FILE} DESTINATION parallel_pool/fonts)
endif()
