// The tutorial env library (families/tutorial.so): GuessingGame-v0, the worked example of
// native/envs/README.md, and Faulty-v0, the fault-injection env. Loaded through the one loader.
#include "core/family.h"

#include "envs/tutorial/register.h"

PP_REGISTER_FAMILY(registry) { pp::RegisterTutorial(*registry); }
