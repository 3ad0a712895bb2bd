// The toy-text env library (families/toy_text.so): Gymnasium's toy-text tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/toy_text/register.h"

// render() draws Gymnasium's own sprites and font, read from the installed gymnasium (never copied here).
PP_FAMILY_RESOURCES(
    "img_dir gymnasium envs/toy_text/img\n"
    "font_dir gymnasium envs/toy_text/font\n")

PP_REGISTER_FAMILY(registry) {
  pp::RegisterToyText(*registry, registry->Resource("img_dir"), registry->Resource("font_dir"));
}
