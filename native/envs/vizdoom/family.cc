// The ViZDoom env library (families/vizdoom.so): a task per scenario of the installed vizdoom
// wheel, whose engine binary, vizdoom.pk3 and freedoom IWADs it runs; without vizdoom it is skipped.
#include "core/family.h"

#include "envs/vizdoom/register.h"

PP_FAMILY_RESOURCES("scenario_dir vizdoom scenarios\nvizdoom_dir vizdoom .\n")

PP_REGISTER_FAMILY(registry) {
  pp::vizdoom::RegisterVizdoom(*registry, registry->Resource("scenario_dir"), registry->Resource("vizdoom_dir"));
}
