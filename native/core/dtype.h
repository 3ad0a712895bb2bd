// Element types of spec fields, and what each one maps to in NumPy.
// The core moves bytes; this is the one place that knows their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pp {

enum class Dtype : uint8_t { kBool, kInt8, kUInt8, kInt16, kInt32, kInt64, kFloat32, kFloat64 };

inline std::size_t DtypeSize(Dtype d) {
  switch (d) {
    case Dtype::kBool:
    case Dtype::kInt8:
    case Dtype::kUInt8: return 1;
    case Dtype::kInt16: return 2;
    case Dtype::kInt32:
    case Dtype::kFloat32: return 4;
    case Dtype::kInt64:
    case Dtype::kFloat64: return 8;
  }
  throw std::logic_error("unknown dtype");
}

// NumPy's dtype name (np.dtype(name) accepts it).
inline std::string DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kBool: return "bool";
    case Dtype::kInt8: return "int8";
    case Dtype::kUInt8: return "uint8";
    case Dtype::kInt16: return "int16";
    case Dtype::kInt32: return "int32";
    case Dtype::kInt64: return "int64";
    case Dtype::kFloat32: return "float32";
    case Dtype::kFloat64: return "float64";
  }
  throw std::logic_error("unknown dtype");
}

inline bool DtypeIsFloat(Dtype d) { return d == Dtype::kFloat32 || d == Dtype::kFloat64; }

}  // namespace pp
