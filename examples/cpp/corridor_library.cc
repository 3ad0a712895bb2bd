// The corridor env as an env library (corridor.so), loadable from Python with
// parallel_pool.register("", library="corridor.so") or from C++ with pp::LoadEnvLibrary.
#include "core/family.h"
#include "corridor.h"

PP_REGISTER_FAMILY(registry) { corridor::RegisterCorridor(*registry); }
