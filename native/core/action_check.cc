// The action checks' loops over every row of every field, and their messages.
#include "action_check.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace pp {
namespace {

template <typename T>
bool InRange(const std::byte* data, std::size_t count, double low, double high, double* bad) {
  const T* v = reinterpret_cast<const T*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    const double x = static_cast<double>(v[i]);
    if (x < low || x > high) {
      *bad = x;
      return false;
    }
  }
  return true;
}

template <typename T>
bool HasNaN(const std::byte* data, std::size_t count) {
  const T* v = reinterpret_cast<const T*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isnan(v[i])) return true;
  }
  return false;
}

}  // namespace

ActionCheck::ActionCheck(const EnvSpec& spec) {
  for (const FieldSpec& f : spec.action) {
    const bool discrete = f.space == SpaceKind::kDiscrete;
    if (discrete && (f.low.size() != 1 || f.high.size() != 1)) {
      throw std::invalid_argument("discrete action '" + f.name + "' needs one low and one high value");
    }
    const std::size_t rows = static_cast<std::size_t>(f.per_player ? spec.max_num_players : 1);
    fields_.push_back(Field{f.name, f.dtype, discrete, discrete ? f.low[0] : 0.0, discrete ? f.high[0] : 0.0,
                            f.allow_nan, f.NumElements() * rows});
    row_bytes_.push_back(f.RowBytes() * rows);
  }
}

void ActionCheck::ThrowCount(std::size_t got) const {
  throw std::invalid_argument("expected " + std::to_string(fields_.size()) + " action arrays, got " +
                              std::to_string(got));
}

void ActionCheck::CheckValues(const std::vector<const std::byte*>& actions, int n) const {
  for (std::size_t f = 0; f < fields_.size(); ++f) {
    const Field& field = fields_[f];
    const std::size_t count = field.elements * static_cast<std::size_t>(n);
    const std::byte* data = actions[f];
    if (field.discrete) {
      double bad = 0;
      bool ok = true;
      switch (field.dtype) {
        case Dtype::kInt8: ok = InRange<int8_t>(data, count, field.low, field.high, &bad); break;
        case Dtype::kUInt8: ok = InRange<uint8_t>(data, count, field.low, field.high, &bad); break;
        case Dtype::kInt16: ok = InRange<int16_t>(data, count, field.low, field.high, &bad); break;
        case Dtype::kInt32: ok = InRange<int32_t>(data, count, field.low, field.high, &bad); break;
        case Dtype::kInt64: ok = InRange<int64_t>(data, count, field.low, field.high, &bad); break;
        default: break;
      }
      if (!ok) {
        throw std::invalid_argument(
            "action '" + field.name + "' must be in [" + std::to_string(static_cast<int64_t>(field.low)) + ", " +
            std::to_string(static_cast<int64_t>(field.high)) + "], got " + std::to_string(static_cast<int64_t>(bad)));
      }
    } else if (!field.allow_nan && DtypeIsFloat(field.dtype)) {
      const bool nan = field.dtype == Dtype::kFloat32 ? HasNaN<float>(data, count) : HasNaN<double>(data, count);
      if (nan) throw std::invalid_argument("action '" + field.name + "' contains NaN, which this env does not accept");
    }
  }
}

}  // namespace pp
