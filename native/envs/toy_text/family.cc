// The toy-text env library (families/toy_text.so): Gymnasium's toy-text tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/toy_text/register.h"

PP_REGISTER_FAMILY(registry) { pp::RegisterToyText(*registry); }
