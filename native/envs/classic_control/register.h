// Registration of Gymnasium's classic-control tasks (CartPole, MountainCar, Pendulum, Acrobot).
// Call once with the registry the pool looks tasks up in; the family then needs no other entry point.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp {

// Adds CartPole-v0, CartPole-v1, MountainCar-v0, MountainCarContinuous-v0, Pendulum-v1 and
// Acrobot-v1 (family "classic_control") with Gymnasium's registered time limits and thresholds.
// `classic_control_dir`: gymnasium/envs/classic_control of the installed gymnasium, whose
// assets/clockwise.png Pendulum's render() draws ("": Pendulum's frames with an arrow cannot be drawn).
void RegisterClassicControl(Registry& registry, const std::string& classic_control_dir);

}  // namespace pp
