// The toy-text env library (families/toy_text.so): Gymnasium's toy-text tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/toy_text/register.h"

// render() draws Gymnasium's own sprites and font, read from the installed gymnasium (never copied here):
// its img/ and font/ folders under envs/toy_text, drawn as that Gymnasium draws them (1.1 to 1.3, or 1.4,
// which redrew the art and dropped font/). Only envs/toy_text itself is declared, which every Gymnasium
// has: a missing sprite must fail only render() (with a message saying so), never the loading of the
// family and its tasks.
PP_FAMILY_RESOURCES("toy_text_dir gymnasium envs/toy_text\n")

PP_REGISTER_FAMILY(registry) {
  const std::string dir = registry->Resource("toy_text_dir");
  pp::RegisterToyText(*registry, dir + "/img", dir + "/font");
}
