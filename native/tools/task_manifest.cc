// The build-time task manifest: loads every env library the build made, with the one loader the
// package uses, and writes each library's task ids and the metadata Gymnasium's registration needs.
//
// The installed manifest (parallel_pool/gymnasium_tasks.json) lets the Gymnasium plug-in
// (src/_parallel_pool_gymnasium.py) register every task without loading a native library at run
// time. Usage:
//
//   task_manifest OUTPUT.json (--library PATH [--resource NAME=DIR]...)...
//
// A resource a library declares but is not given here is passed as "": only a registration that
// reads its resource (which ids exist depends on it: Atari's ROMs, CarRacing's font) needs the real
// directory, found in the build tree (pp_add_family's REGISTRATION_RESOURCES). The libraries are
// loaded into one registry in the order given, as the package loads them (in name order), so that
// each id is attributed to the library that registers it at run time.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "core/family_loader.h"
#include "core/registry.h"

namespace {

struct LibraryArg {
  std::string path;
  std::map<std::string, std::string> resources;  // NAME -> DIR, from --resource
};

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The shortest text that reads back as the same double, always with a '.' or an exponent, so that
// Python's json reads a float (475.0, as the package registers it) and not an int.
std::string JsonNumber(double value) {
  if (!std::isfinite(value)) throw std::invalid_argument("a reward threshold is not finite");
  char buf[64];
  const auto [end, error] = std::to_chars(buf, buf + sizeof(buf), value);
  if (error != std::errc()) throw std::runtime_error("cannot format a reward threshold");
  std::string text(buf, end);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::vector<LibraryArg> ParseArgs(int argc, char** argv) {
  std::vector<LibraryArg> libraries;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("option " + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--library") {
      libraries.push_back({value, {}});
    } else if (arg == "--resource") {
      const auto eq = value.find('=');
      if (libraries.empty() || eq == std::string::npos || eq == 0) {
        throw std::invalid_argument("--resource NAME=DIR must follow a --library, got '" + value + "'");
      }
      libraries.back().resources[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      throw std::invalid_argument("unknown option " + arg);
    }
  }
  return libraries;
}

std::string Manifest(const std::vector<LibraryArg>& libraries) {
  pp::Registry registry;
  std::ostringstream out;
  out << "{\n  \"format\": 1,\n  \"families\": [";
  for (size_t l = 0; l < libraries.size(); ++l) {
    const LibraryArg& library = libraries[l];
    const std::vector<pp::ResourceRequest> requests = pp::LibraryResources(library.path);
    std::map<std::string, std::string> resources;
    for (const pp::ResourceRequest& r : requests) {
      auto it = library.resources.find(r.name);
      resources[r.name] = it == library.resources.end() ? std::string() : it->second;
    }
    for (const auto& [name, dir] : library.resources) {
      if (!resources.count(name)) {
        throw std::invalid_argument(library.path + " declares no resource '" + name + "' (--resource " + name + ")");
      }
    }
    const std::vector<std::string> ids = pp::LoadEnvLibrary(registry, library.path, resources);
    out << (l ? "," : "")
        << "\n    {\n      \"library\": " << JsonString(std::filesystem::path(library.path).filename().string())
        << ",\n      \"resources\": [";
    for (size_t r = 0; r < requests.size(); ++r) {
      out << (r ? ", " : "") << "{\"name\": " << JsonString(requests[r].name)
          << ", \"package\": " << JsonString(requests[r].package) << ", \"path\": " << JsonString(requests[r].path)
          << "}";
    }
    out << "],\n      \"tasks\": [";
    for (size_t t = 0; t < ids.size(); ++t) {
      const auto task = registry.Find(ids[t]);
      out << (t ? "," : "") << "\n        {\"task_id\": " << JsonString(ids[t])
          << ", \"family\": " << JsonString(task->family)
          << ", \"reward_threshold\": " << (task->reward_threshold ? JsonNumber(*task->reward_threshold) : "null")
          << "}";
    }
    out << (ids.empty() ? "" : "\n      ") << "]\n    }";
  }
  out << (libraries.empty() ? "" : "\n  ") << "]\n}\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.json (--library PATH [--resource NAME=DIR]...)...\n", argv[0]);
    return 2;
  }
  try {
    const std::string text = Manifest(ParseArgs(argc, argv));
    // Written whole to a temporary file and renamed: an interrupted build leaves no half manifest.
    const std::string output = argv[1];
    const std::string partial = output + ".partial";
    {
      std::ofstream file(partial, std::ios::binary | std::ios::trunc);
      file << text;
      if (!file.flush()) throw std::runtime_error("cannot write " + partial);
    }
    std::filesystem::rename(partial, output);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "task_manifest: %s\n", e.what());
    return 1;
  }
  return 0;
}
