# Patches to the ViZDoom library source from the vizdoom sdist, applied once after extraction
# (idempotent: a marker comment says a file is patched). Each replacement must match, or the build
# stops: a new ViZDoom version needs its patches checked.

function(_pp_vizdoom_replace_once path marker old new)
  file(READ "${path}" content)
  string(FIND "${content}" "${marker}" already)
  if(NOT already EQUAL -1)
    return()
  endif()
  string(FIND "${content}" "${old}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "ViZDoom patch: '${old}' not found in ${path}")
  endif()
  string(REPLACE "${old}" "${new}" content "${content}")
  file(WRITE "${path}" "${content}")
endfunction()

# The engine process is started by a thread of the library (DoomController::launchDoom) that
# waits for it to exit. If our process dies without closing the game (SIGKILL, a crash), the
# engine would run on, orphaned, waiting for a controller that never comes: the engine asks the
# kernel for SIGKILL when its launching thread ends (PR_SET_PDEATHSIG, set in the child between
# fork and exec), so no engine outlives the process that drives it.
function(pp_patch_vizdoom src)
  set(file "${src}/src/lib/ViZDoomController.cpp")
  set(marker "parallel_pool: engine dies with its controller")
  _pp_vizdoom_replace_once("${file}" "${marker}"
    "bpr::child doomProcess = bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env());"
    "// ${marker}\n            bpr::child doomProcess = bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env(),\n                bpri::on_exec_setup([](boost::process::posix::executor&) { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }));")
  _pp_vizdoom_replace_once("${file}" "<sys/prctl.h>"
    "#include <random>\n"
    "#include <random>\n#include <csignal>\n#include <sys/prctl.h>\n")
endfunction()
