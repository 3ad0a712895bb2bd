// What an env library (one env family) exports so that the one loader (family_loader.h) can
// register its tasks: the entry point parallel_pool_register, and the data directories it reads.
#pragma once

#include "registry.h"

// The entry points of an env library are plain C symbols, visible even when the library is built
// with hidden visibility. A library is built with the same compiler and core headers as the engine
// that loads it (they share C++ types: Registry, TaskEntry, Env).
#define PP_FAMILY_EXPORT extern "C" __attribute__((visibility("default")))

// The version of what an env library shares with the engine that loads it: the layout of Env (its
// virtual functions), Registry, TaskEntry, EnvSpec and the types they hold. Bump it with any change
// to them: the loader refuses a library built against another version with an error that says to
// rebuild it, where calling into it would use the wrong vtable slots or field offsets.
//   1: the first engine (unversioned libraries); 2: Env::Reseeded (the Python-env backend);
//   3: EnvSpec::render_fps; 4: Env's core side behind EnvDriver, split-phase envs a SplitPhaseEnv.
#define PP_CORE_ABI_VERSION 4

// Defines the entry points every env library exports:
//   extern "C" int parallel_pool_abi_version();   // PP_CORE_ABI_VERSION of the headers it was built with
//   extern "C" void parallel_pool_register(pp::Registry* registry);
// The loader checks the version, then calls the register function once, after setting the
// library's resources (registry->Resource(name)).
//
//   PP_REGISTER_FAMILY(registry) { pp::RegisterMyTasks(*registry); }
#define PP_REGISTER_FAMILY(registry)                                               \
  PP_FAMILY_EXPORT int parallel_pool_abi_version() { return PP_CORE_ABI_VERSION; } \
  PP_FAMILY_EXPORT void parallel_pool_register(pp::Registry* registry)

// Declares the data directories the library reads at run time, each found inside an installed
// Python package (data the library must not carry: model files, ROMs). `list` holds one line per
// resource, "<name> <python package> <directory inside the package>":
//
//   PP_FAMILY_RESOURCES("assets_dir gymnasium envs/mujoco/assets\n")
//
// The loader resolves each before it registers the library, and passes the absolute directory as
// registry->Resource("<name>"). A family whose package is not installed is not loaded when the
// package loads every family (its tasks are simply absent); loading it explicitly is an error.
#define PP_FAMILY_RESOURCES(list) \
  PP_FAMILY_EXPORT const char* parallel_pool_resources() { return list; }
