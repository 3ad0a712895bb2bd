// The XLA FFI custom-call targets behind parallel_pool's xla(): send, recv and step of a pool, called
// from jitted JAX programs with the pool's handle. Built only with PP_WITH_XLA (cmake/xla_ffi.cmake).
//
// A handler gets everything from its call frame (XLA's API table, the buffers), so the module links
// nothing of jaxlib. It runs on an XLA thread without the GIL and touches no Python object: the
// handle's number finds the pool (pool_handles.h). Every failure is an ffi::Error, which JAX raises
// in Python; nothing here may throw across the C ABI.
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/pool.h"
#include "python/pool_handles.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
namespace py = pybind11;

namespace pp {
namespace {

constexpr std::size_t kHandleBytes = sizeof(uint64_t);

// The XLA element type of each of the core's dtypes.
ffi::DataType XlaType(Dtype d) {
  switch (d) {
    case Dtype::kBool: return ffi::DataType::PRED;
    case Dtype::kInt8: return ffi::DataType::S8;
    case Dtype::kUInt8: return ffi::DataType::U8;
    case Dtype::kInt16: return ffi::DataType::S16;
    case Dtype::kInt32: return ffi::DataType::S32;
    case Dtype::kInt64: return ffi::DataType::S64;
    case Dtype::kFloat32: return ffi::DataType::F32;
    case Dtype::kFloat64: return ffi::DataType::F64;
  }
  throw std::logic_error("unknown dtype");
}

// Whether a JAX array of element type `t` carries a field of dtype `d`: the same type, or, with
// JAX's 64-bit types disabled (its default), the 32-bit type JAX uses in their place.
bool Carries(ffi::DataType t, Dtype d) {
  return t == XlaType(d) || (d == Dtype::kInt64 && t == ffi::DataType::S32) ||
         (d == Dtype::kFloat64 && t == ffi::DataType::F32);
}

template <typename From, typename To>
void CastValues(const void* src, void* dst, std::size_t count) {
  const From* in = static_cast<const From*>(src);
  To* out = static_cast<To*>(dst);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<To>(in[i]);
}

// Copies `count` values of type `from` to type `to`, a pair Carries() accepted: a memcpy, or a cast
// of each value (NumPy's astype: float64 -> float32 rounds to nearest, int64 -> int32 wraps).
void CopyValues(const void* src, ffi::DataType from, void* dst, ffi::DataType to, std::size_t count) {
  using T = ffi::DataType;
  if (from == to) {
    std::memcpy(dst, src, count * ffi::ByteWidth(from));
  } else if (from == T::S64 && to == T::S32) {
    CastValues<int64_t, int32_t>(src, dst, count);
  } else if (from == T::S32 && to == T::S64) {
    CastValues<int32_t, int64_t>(src, dst, count);
  } else if (from == T::F64 && to == T::F32) {
    CastValues<double, float>(src, dst, count);
  } else if (from == T::F32 && to == T::F64) {
    CastValues<float, double>(src, dst, count);
  } else {
    throw std::logic_error("no conversion between these element types");
  }
}

std::size_t RowElements(const std::vector<int>& shape) {
  std::size_t n = 1;
  for (int d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::string Dims(const ffi::AnyBuffer& b) {
  std::string out = "(";
  for (int64_t d : b.dimensions()) out += (out.size() > 1 ? ", " : "") + std::to_string(d);
  return out + (b.dimensions().size() == 1 ? ",)" : ")");
}

// The open pool a handle names. The reference keeps the pool alive for the whole call.
std::shared_ptr<Pool> PoolOf(const ffi::AnyBuffer& handle) {
  if (handle.element_type() != ffi::DataType::U8 || handle.element_count() != kHandleBytes) {
    throw std::invalid_argument("the handle must be the uint8 array of " + std::to_string(kHandleBytes) +
                                " bytes that xla() returned, got shape " + Dims(handle));
  }
  uint64_t id = 0;
  std::memcpy(&id, handle.untyped_data(), sizeof id);
  std::shared_ptr<Pool> pool = PoolHandles::Global().Find(id);
  if (!pool) throw ClosedError("the pool of this handle is closed and gone (or the handle is not one of xla()'s)");
  pool->CheckOpen();
  return pool;
}

// The handle threads through every call (its data dependency orders them): returned unchanged.
void PassHandle(const ffi::AnyBuffer& in, ffi::Result<ffi::AnyBuffer>& out) {
  if (out->element_type() != ffi::DataType::U8 || out->element_count() != kHandleBytes) {
    throw std::invalid_argument("the returned handle must be a uint8 array of " + std::to_string(kHandleBytes) +
                                " bytes");
  }
  std::memcpy(out->untyped_data(), in.untyped_data(), kHandleBytes);
}

// The env ids and action rows of a send, as Pool::Send takes them: the JAX arrays themselves when
// their element types are the fields', else converted copies (owned here until the pool has
// copied the rows, which it does inside Send).
class SendArgs {
 public:
  SendArgs(const Pool& pool, const ffi::AnyBuffer& env_ids, const ffi::RemainingArgs& actions) {
    if (env_ids.element_type() != ffi::DataType::S32 || env_ids.dimensions().size() != 1) {
      throw std::invalid_argument("env_id must be a 1-d int32 array, got shape " + Dims(env_ids));
    }
    ids_ = env_ids.typed_data<int32_t>();
    n_ = static_cast<int>(env_ids.element_count());
    const std::vector<FieldSpec>& fields = pool.spec().action;
    if (actions.size() != fields.size()) {
      throw std::invalid_argument("expected " + std::to_string(fields.size()) + " action arrays, got " +
                                  std::to_string(actions.size()));
    }
    storage_.resize(fields.size());
    for (std::size_t k = 0; k < fields.size(); ++k) {
      const FieldSpec& field = fields[k];
      ffi::ErrorOr<ffi::AnyBuffer> arg = actions.get<ffi::AnyBuffer>(k);
      if (!arg) throw std::invalid_argument("action '" + field.name + "': " + arg.error().message());
      const ffi::AnyBuffer& b = *arg;
      std::size_t count = static_cast<std::size_t>(n_) * RowElements(field.shape);
      if (field.per_player) count *= static_cast<std::size_t>(pool.spec().max_num_players);
      if (!Carries(b.element_type(), field.dtype) || b.element_count() != count) {
        throw std::invalid_argument("action '" + field.name + "' must be " + std::to_string(count) + " values of " +
                                    DtypeName(field.dtype) + " (or its 32-bit kind), got shape " + Dims(b));
      }
      const ffi::DataType want = XlaType(field.dtype);
      if (b.element_type() == want) {
        pointers_.push_back(static_cast<const std::byte*>(b.untyped_data()));
      } else {
        storage_[k].resize(count * DtypeSize(field.dtype));
        CopyValues(b.untyped_data(), b.element_type(), storage_[k].data(), want, count);
        pointers_.push_back(storage_[k].data());
      }
    }
  }
  const int32_t* ids() const { return ids_; }
  int n() const { return n_; }
  const std::vector<const std::byte*>& pointers() const { return pointers_; }

 private:
  const int32_t* ids_ = nullptr;
  int n_ = 0;
  std::vector<const std::byte*> pointers_;
  // A vector's bytes come from operator new, aligned for every dtype.
  std::vector<std::vector<std::byte>> storage_;
};

// Checks the results a recv writes, one per block field after the handle, before receiving
// anything: a call that cannot take the batch leaves it in flight.
void CheckResults(const Pool& pool, const ffi::RemainingRets& results) {
  const std::vector<BlockField>& fields = pool.layout().fields();
  if (results.size() != fields.size()) {
    throw std::invalid_argument("expected " + std::to_string(fields.size()) + " results after the handle, got " +
                                std::to_string(results.size()));
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const BlockField& f = fields[i];
    if (f.per_player) throw std::invalid_argument("field '" + f.name + "' has a row per player: not for XLA");
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> r = results.get<ffi::AnyBuffer>(i);
    if (!r) throw std::invalid_argument("result '" + f.name + "': " + r.error().message());
    ffi::Result<ffi::AnyBuffer> b = *r;
    const std::size_t count = static_cast<std::size_t>(pool.batch_size()) * RowElements(f.shape);
    if (!Carries(b->element_type(), f.dtype) || b->element_count() != count) {
      throw std::invalid_argument("result '" + f.name + "' must be " + std::to_string(count) + " values of " +
                                  DtypeName(f.dtype) + " (or its 32-bit kind), got shape " + Dims(*b));
    }
  }
}

// Copies a received batch into the results and gives the block back; an env's exception (the
// plain API's EnvError) becomes the call's error.
void WriteResults(const Pool& pool, OutputBlock* received, const ffi::RemainingRets& results) {
  const std::unique_ptr<OutputBlock, void (*)(OutputBlock*)> block(received, &BlockFreeList::Release);
  if (!block->errors().empty()) {
    std::string message = std::to_string(block->errors().size()) + " env(s) raised:";
    for (const auto& [env_id, what] : block->errors()) {
      message.append(" env ").append(std::to_string(env_id)).append(": ").append(what).append(";");
    }
    message.pop_back();
    throw std::runtime_error(message);
  }
  const std::vector<BlockField>& fields = pool.layout().fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const BlockField& f = fields[i];
    ffi::Result<ffi::AnyBuffer> out = *results.get<ffi::AnyBuffer>(i);
    CopyValues(block->field(static_cast<int>(i)), XlaType(f.dtype), out->untyped_data(), out->element_type(),
               static_cast<std::size_t>(pool.batch_size()) * RowElements(f.shape));
  }
}

// Runs a handler's body; every exception becomes the error JAX raises, prefixed with our name.
template <typename Body>
ffi::Error Guard(Body&& body) {
  try {
    body();
    return ffi::Error::Success();
  } catch (const ClosedError& e) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition, std::string("parallel_pool: ") + e.what());
  } catch (const std::invalid_argument& e) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, std::string("parallel_pool: ") + e.what());
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kInternal, std::string("parallel_pool: ") + e.what());
  }
}

ffi::Error SendImpl(ffi::AnyBuffer handle, ffi::AnyBuffer env_ids, ffi::RemainingArgs actions,
                    ffi::Result<ffi::AnyBuffer> handle_out) {
  return Guard([&] {
    const std::shared_ptr<Pool> pool = PoolOf(handle);
    const SendArgs args(*pool, env_ids, actions);
    pool->Send(args.ids(), args.n(), args.pointers());
    PassHandle(handle, handle_out);
  });
}

ffi::Error RecvImpl(ffi::AnyBuffer handle, ffi::Result<ffi::AnyBuffer> handle_out, ffi::RemainingRets results) {
  return Guard([&] {
    const std::shared_ptr<Pool> pool = PoolOf(handle);
    CheckResults(*pool, results);
    PassHandle(handle, handle_out);
    WriteResults(*pool, pool->Recv(-1.0), results);
  });
}

// Send and recv in one call (Pool::Step): the XLA thread steps envs while it waits.
ffi::Error StepImpl(ffi::AnyBuffer handle, ffi::AnyBuffer env_ids, ffi::RemainingArgs actions,
                    ffi::Result<ffi::AnyBuffer> handle_out, ffi::RemainingRets results) {
  return Guard([&] {
    const std::shared_ptr<Pool> pool = PoolOf(handle);
    const SendArgs args(*pool, env_ids, actions);
    CheckResults(*pool, results);
    PassHandle(handle, handle_out);
    WriteResults(*pool, pool->Step(args.ids(), args.n(), args.pointers()), results);
  });
}

}  // namespace
}  // namespace pp

XLA_FFI_DEFINE_HANDLER_SYMBOL(ParallelPoolXlaSend, pp::SendImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // handle
                                  .Arg<ffi::AnyBuffer>()  // env ids
                                  .RemainingArgs()        // one array per action field
                                  .Ret<ffi::AnyBuffer>()  // handle
);
XLA_FFI_DEFINE_HANDLER_SYMBOL(ParallelPoolXlaRecv, pp::RecvImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // handle
                                  .Ret<ffi::AnyBuffer>()  // handle
                                  .RemainingRets()        // one array per block field
);
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    ParallelPoolXlaStep, pp::StepImpl,
    ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Arg<ffi::AnyBuffer>().RemainingArgs().Ret<ffi::AnyBuffer>().RemainingRets());

namespace pp {

// _native._xla_targets(): {target name: capsule of its handler}, for jax.ffi.register_ffi_target.
void RegisterXlaTargets(py::module_& m) {
  m.def("_xla_targets", [] {
    py::dict targets;
    targets["parallel_pool_send"] = py::capsule(reinterpret_cast<void*>(&ParallelPoolXlaSend));
    targets["parallel_pool_recv"] = py::capsule(reinterpret_cast<void*>(&ParallelPoolXlaRecv));
    targets["parallel_pool_step"] = py::capsule(reinterpret_cast<void*>(&ParallelPoolXlaStep));
    return targets;
  });
}

}  // namespace pp
