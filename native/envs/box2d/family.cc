// The Box2D env library (families/box2d.so): Gymnasium's Box2D tasks on the Box2D 2.3 of box2d-py.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/box2d/register.h"

// pygame's freesansbold.ttf, for CarRacing's score, is installed with the package (its fonts/ is
// always there; the font is, unless the build left it out).
PP_FAMILY_RESOURCES("fonts_dir parallel_pool fonts\n")

PP_REGISTER_FAMILY(registry) { pp::RegisterBox2d(*registry, registry->Resource("fonts_dir")); }
