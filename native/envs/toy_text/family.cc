// The toy-text env library (families/toy_text.so): Gymnasium's toy-text tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/toy_text/register.h"

// render() draws Gymnasium's own sprites and font, read from the installed gymnasium (never copied here):
// its img/ and font/ folders under envs/toy_text. Only envs/toy_text itself is declared, which every
// Gymnasium has: Gymnasium 1.4 redrew the art and dropped font/, and a missing sprite must fail only
// render() (with a message saying so), never the loading of the family and its tasks.
PP_FAMILY_RESOURCES("toy_text_dir gymnasium envs/toy_text\n")

PP_REGISTER_FAMILY(registry) {
  const std::string dir = registry->Resource("toy_text_dir");
  pp::RegisterToyText(*registry, dir + "/img", dir + "/font");
}
