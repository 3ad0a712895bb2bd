# Patches to the ViZDoom library source from the vizdoom sdist (pp_replace_once:
# cmake/patch_source.cmake).
include(${PROJECT_SOURCE_DIR}/cmake/patch_source.cmake)

# The engine process is started by a thread of the library (DoomController::launchDoom) that
# waits for it to exit. If our process dies without closing the game (SIGKILL, a crash), the
# engine would run on, orphaned, waiting for a controller that never comes: the engine asks the
# kernel for SIGKILL when its launching thread ends (PR_SET_PDEATHSIG, set in the child between
# fork and exec), so no engine outlives the process that drives it.
function(pp_patch_vizdoom src)
  set(file "${src}/src/lib/ViZDoomController.cpp")
  set(marker "parallel_pool: engine dies with its controller")
  pp_replace_once(ViZDoom "${file}" "${marker}"
    "bpr::child doomProcess = bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env());"
    "// ${marker}\n            bpr::child doomProcess = bpr::execute(bpri::set_args(this->doomArgs), bpri::inherit_env(),\n                bpri::on_exec_setup([](boost::process::posix::executor&) { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }));")
  pp_replace_once(ViZDoom "${file}" "<sys/prctl.h>"
    "#include <random>\n"
    "#include <random>\n#include <csignal>\n#include <sys/prctl.h>\n")

  # An engine that exits while init() waits for its first message (a bad WAD, a missing file, a
  # fatal error) makes init() close the controller, and close() read the game state before the
  # shared memory holding it was opened: a null pointer, our process's segfault. Read it only once
  # it exists, so that init() throws the engine's error instead.
  set(marker "parallel_pool: no game state before the engine started")
  pp_replace_once(ViZDoom "${file}" "${marker}"
    "if (this->gameState->DEMO_RECORDING){"
    "// ${marker}\n                if (this->gameState && this->gameState->DEMO_RECORDING){")

  # The engine keeps its settings (_vizdoom.ini) and cache (./_vizdoom/) in its working directory,
  # which was the user's: DoomGame::setEngineDirectory starts it in another (a private directory
  # of the pool's) instead. Engine arguments that are relative paths resolve there.
  set(marker "parallel_pool: the engine's working directory")
  pp_replace_once(ViZDoom "${file}" "${marker}"
    "bpri::on_exec_setup([](boost::process::posix::executor&) { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }));"
    "bpri::on_exec_setup([](boost::process::posix::executor&) { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }),\n                bpri::start_in_dir(this->engineDirectory.empty() ? std::string(\".\") : this->engineDirectory));  // ${marker}")
  pp_replace_once(ViZDoom "${src}/src/lib/ViZDoomController.h" "${marker}"
    "        void setRunDoomAsync(bool set);\n"
    "        void setRunDoomAsync(bool set);\n        // ${marker}\n        std::string engineDirectory;\n")
  pp_replace_once(ViZDoom "${src}/include/ViZDoomGame.h" "${marker}"
    "        void setViZDoomPath(std::string filePath);\n"
    "        void setViZDoomPath(std::string filePath);\n        // ${marker}\n        void setEngineDirectory(const std::string& directory);\n")
  pp_replace_once(ViZDoom "${src}/src/lib/ViZDoomGame.cpp" "${marker}"
    "    void DoomGame::setViZDoomPath(std::string filePath) { this->doomController->setExePath(filePath); }\n"
    "    void DoomGame::setViZDoomPath(std::string filePath) { this->doomController->setExePath(filePath); }\n    // ${marker}\n    void DoomGame::setEngineDirectory(const std::string& directory) { this->doomController->engineDirectory = directory; }\n")
endfunction()

# Each engine is started by fork() from a thread of its own, and a pool starts its engines from
# several threads at once. fork() runs the libraries' atfork handlers, which some do not expect to
# run concurrently: OpenBLAS's (numpy's and scipy's wheels) joins its worker threads there, and two
# forks at once joined the same stale handles and hung for ever (tests/envs/vizdoom/test_vizdoom.py's
# test_engines_start_beside_openblas_threads). The process's engine launches take one lock.
function(pp_patch_vizdoom_fork_lock src)
  set(file "${src}/src/lib/ViZDoomController.cpp")
  set(marker "parallel_pool: one fork at a time")
  pp_replace_once(ViZDoom "${file}" "${marker}"
    "#include <sys/prctl.h>\n"
    "#include <sys/prctl.h>\n#include <mutex>\n// ${marker}\nstatic std::mutex& ppForkMutex() { static std::mutex m; return m; }\n")
  set(marker "parallel_pool: the launch holds the fork lock")
  pp_replace_once(ViZDoom "${file}" "${marker}"
    "            bpr::child doomProcess = bpr::execute("
    "            std::unique_lock<std::mutex> ppForkLock(ppForkMutex());  // ${marker}\n            bpr::child doomProcess = bpr::execute(")
  pp_replace_once(ViZDoom "${file}" "ppForkLock.unlock()"
    "this->engineDirectory));  // parallel_pool: the engine's working directory\n"
    "this->engineDirectory));  // parallel_pool: the engine's working directory\n            ppForkLock.unlock();\n")
endfunction()
