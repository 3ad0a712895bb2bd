// An env's configuration: named values with typed defaults, overridden by the user's kwargs.
// Types are fixed by the default, so a kwarg of the wrong type is rejected with the key's name.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace pp {

using ConfigValue = std::variant<bool, int64_t, double, std::string, std::vector<double>>;

inline const char* ConfigTypeName(const ConfigValue& v) {
  switch (v.index()) {
    case 0: return "bool";
    case 1: return "int";
    case 2: return "float";
    case 3: return "str";
    default: return "sequence of floats";
  }
}

class Config {
 public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, ConfigValue>> init) : values_(init) {}

  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  void Set(const std::string& key, ConfigValue value) { values_[key] = std::move(value); }
  const std::map<std::string, ConfigValue>& values() const { return values_; }

  bool GetBool(const std::string& key) const { return std::get<bool>(At(key)); }
  int64_t GetInt(const std::string& key) const { return std::get<int64_t>(At(key)); }
  double GetFloat(const std::string& key) const {
    const ConfigValue& v = At(key);
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return std::get<double>(v);
  }
  const std::string& GetString(const std::string& key) const { return std::get<std::string>(At(key)); }
  const std::vector<double>& GetFloats(const std::string& key) const { return std::get<std::vector<double>>(At(key)); }

  // Returns a copy of the defaults with `overrides` applied. Each override must name a known key
  // and have the default's type (an int is accepted where a float is expected).
  Config Override(const std::map<std::string, ConfigValue>& overrides) const {
    Config out = *this;
    for (const auto& [key, value] : overrides) {
      auto it = out.values_.find(key);
      if (it == out.values_.end()) throw std::invalid_argument("unknown config key '" + key + "'");
      if (it->second.index() == value.index()) {
        it->second = value;
      } else if (std::holds_alternative<double>(it->second) && std::holds_alternative<int64_t>(value)) {
        it->second = static_cast<double>(std::get<int64_t>(value));
      } else {
        throw std::invalid_argument("config key '" + key + "' expects " + ConfigTypeName(it->second) + ", got " +
                                    ConfigTypeName(value));
      }
    }
    return out;
  }

 private:
  const ConfigValue& At(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw std::out_of_range("config has no key '" + key + "'");
    return it->second;
  }

  std::map<std::string, ConfigValue> values_;
};

}  // namespace pp
