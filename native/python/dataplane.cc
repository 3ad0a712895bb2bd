// The Ray layer's data plane in C++ (integrations/ray/wire.py keeps the format and the control):
// a frame's arrays found, sent with sendmsg and received into their destinations without the GIL.
//
// Why native: per frame, the Python version walked the message, built one memoryview per piece,
// looped over sendmsg/recvmsg_into results and made one view per destination row block: ~0.1 ms
// of CPU on each side of every batch, taken from the envs on cores the nodes share with the driver.
// Here a frame is one flatten (a walk over a few dozen objects), a sendmsg of every piece, and a
// recv of the prefix and one scatter read of the rest. The wire format is wire.py's: a 24-byte
// prefix <IIIQxxxx (kind, skeleton length, extra length, data length), the skeleton, the extra,
// then each array's bytes padded to 8.
#include <poll.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace pp {
namespace {

constexpr std::size_t kPrefixSize = 24;
constexpr std::size_t kAlign = 8;
// sendmsg/recvmsg take at most IOV_MAX (1024 on Linux) pieces per call; longer frames go in parts.
constexpr std::size_t kMaxPieces = 512;
const char kPad[kAlign] = {};
// NumPy's builtin type numbers are below NPY_NTYPES_LEGACY (24); user-registered dtypes get 256 and up.
constexpr int kBuiltinTypes = 24;
thread_local char pad_sink[kAlign];  // where a received frame's padding goes (never read)

std::size_t Padded(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The error a socket operation raises in Python, as the socket module would raise it: OSError
// subclasses by errno, TimeoutError when the socket's timeout passed, ConnectionResetError when
// the peer closed the stream mid-frame.
enum class Failure { kNone, kErrno, kTimeout, kClosed };

[[noreturn]] void Raise(Failure failure, int err) {
  if (failure == Failure::kTimeout) {
    PyErr_SetString(PyExc_TimeoutError, "timed out");
  } else if (failure == Failure::kClosed) {
    PyErr_SetString(PyExc_ConnectionResetError, "the peer closed the connection");
  } else {
    errno = err;
    PyErr_SetFromErrno(PyExc_OSError);
  }
  throw py::error_already_set();
}

// Waits until fd is ready for `events`; the timeout counts from the last progress, as a Python
// socket's timeout counts per call. timeout_s < 0: no timeout. EINTR is retried: a signal is
// handled by Python after the frame (the driver holds SIGINT while a frame moves).
Failure WaitReady(int fd, short events, double timeout_s, int& err) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s < 0 ? 0 : timeout_s);
  while (true) {
    int wait_ms = -1;
    if (timeout_s >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<int64_t>(0, left.count() + 1));
    }
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, wait_ms);
    if (r > 0) return Failure::kNone;  // ready, or an error the next call reports
    if (r == 0) return Failure::kTimeout;
    if (errno != EINTR) {
      err = errno;
      return Failure::kErrno;
    }
  }
}

// Moves every byte of `pieces` (sending, or receiving into them), advancing over partial
// transfers. Runs without the GIL.
Failure Transfer(int fd, std::vector<iovec>& pieces, bool sending, double timeout_s, int& err) {
  std::size_t first = 0;
  while (first < pieces.size() && pieces[first].iov_len == 0) ++first;
  while (first < pieces.size()) {
    msghdr msg{};
    msg.msg_iov = pieces.data() + first;
    msg.msg_iovlen = std::min(kMaxPieces, pieces.size() - first);
    // Without a timeout the call blocks (on a blocking socket: the node waiting for its next
    // request, one system call where a try, EAGAIN and poll would be three); with one, it never
    // blocks and poll bounds the wait.
    const int wait = timeout_s < 0 ? 0 : MSG_DONTWAIT;
    const ssize_t n = sending ? sendmsg(fd, &msg, MSG_NOSIGNAL | wait) : recvmsg(fd, &msg, wait);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        const Failure f = WaitReady(fd, sending ? POLLOUT : POLLIN, timeout_s, err);
        if (f != Failure::kNone) return f;
        continue;
      }
      err = errno;
      return Failure::kErrno;
    }
    if (n == 0 && !sending) return Failure::kClosed;
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      iovec& piece = pieces[first];
      if (left >= piece.iov_len) {
        left -= piece.iov_len;
        piece.iov_len = 0;
        ++first;
      } else {
        piece.iov_base = static_cast<char*>(piece.iov_base) + left;
        piece.iov_len -= left;
        left = 0;
      }
    }
    while (first < pieces.size() && pieces[first].iov_len == 0) ++first;
  }
  return Failure::kNone;
}

void TransferOrRaise(int fd, std::vector<iovec>& pieces, bool sending, double timeout_s) {
  int err = 0;
  Failure failure;
  {
    py::gil_scoped_release release;
    failure = Transfer(fd, pieces, sending, timeout_s, err);
  }
  if (failure != Failure::kNone) Raise(failure, err);
}

// A buffer held for the length of one call (the GIL is released while its bytes move).
class HeldBuffer {
 public:
  HeldBuffer(PyObject* object, bool writable) {
    if (PyObject_GetBuffer(object, &view_, writable ? (PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) : PyBUF_C_CONTIGUOUS) !=
        0) {
      throw py::error_already_set();
    }
  }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  HeldBuffer(HeldBuffer&& other) noexcept : view_(other.view_) { other.view_.obj = nullptr; }
  ~HeldBuffer() {
    if (view_.obj != nullptr) PyBuffer_Release(&view_);
  }
  char* data() const { return static_cast<char*>(view_.buf); }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

// The message's arrays (depth first, tuples, lists and dicts in order: wire.encode's slot order)
// and a key naming its structure (containers, dict keys, each array's dtype and shape), or None
// when the message holds anything else (a scalar, an object array, a strided array, a non-str
// key): wire.encode then walks it in Python and pickles what it holds.
bool Flatten(py::handle value, std::string& key, py::list& arrays) {
  if (value.is_none()) {
    key += 'N';
    return true;
  }
  if (PyTuple_CheckExact(value.ptr()) || PyList_CheckExact(value.ptr())) {
    const bool tuple = PyTuple_CheckExact(value.ptr());
    const Py_ssize_t size = tuple ? PyTuple_GET_SIZE(value.ptr()) : PyList_GET_SIZE(value.ptr());
    key += tuple ? 't' : 'l';
    key += std::to_string(size);
    key += '(';
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyObject* item = tuple ? PyTuple_GET_ITEM(value.ptr(), i) : PyList_GET_ITEM(value.ptr(), i);
      if (!Flatten(item, key, arrays)) return false;
    }
    key += ')';
    return true;
  }
  if (PyDict_CheckExact(value.ptr())) {
    key += 'd';
    key += std::to_string(PyDict_GET_SIZE(value.ptr()));
    key += '(';
    PyObject* k;
    PyObject* v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(value.ptr(), &pos, &k, &v)) {
      if (!PyUnicode_CheckExact(k)) return false;
      Py_ssize_t length = 0;
      const char* text = PyUnicode_AsUTF8AndSize(k, &length);
      if (text == nullptr) throw py::error_already_set();
      key += std::to_string(length);
      key += ':';
      key.append(text, static_cast<std::size_t>(length));
      if (!Flatten(v, key, arrays)) return false;
    }
    key += ')';
    return true;
  }
  if (py::isinstance<py::array>(value)) {
    const auto array = py::reinterpret_borrow<py::array>(value);
    const py::dtype dtype = array.dtype();
    if (dtype.kind() == 'O' || !(array.flags() & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_)) return false;
    key += 'a';
    const auto* descr = py::detail::array_descriptor_proxy(dtype.ptr());
    if (descr->type_num < kBuiltinTypes && descr->kind != 0 && std::strchr("biufc", descr->kind) != nullptr) {
      // A builtin number: its type and byte-order characters name it (dtype.str would be formatted
      // by printf for every array of every frame). Other dtypes (strings, datetimes, structured,
      // user-registered ones) by their str.
      key += descr->type;
      key += descr->byteorder;
    } else {
      key += py::str(dtype.attr("str")).cast<std::string>();
    }
    key += '[';
    for (py::ssize_t i = 0; i < array.ndim(); ++i) {
      key += std::to_string(array.shape(i));
      key += ',';
    }
    key += ']';
    arrays.append(value);
    return true;
  }
  return false;
}

void PackPrefix(char* out, uint32_t kind, uint32_t skeleton_len, uint32_t extra_len, uint64_t data_len) {
  std::memset(out, 0, kPrefixSize);
  std::memcpy(out, &kind, 4);  // little-endian: this is x86-64 and aarch64 Linux only
  std::memcpy(out + 4, &skeleton_len, 4);
  std::memcpy(out + 8, &extra_len, 4);
  std::memcpy(out + 12, &data_len, 8);
}

// One frame: the prefix, the skeleton, the extra and every array (from its own memory), padded.
void SendFrame(int fd, uint32_t kind, const py::bytes& skeleton, const py::bytes& extra, const py::list& arrays,
               double timeout_s) {
  std::vector<HeldBuffer> held;
  held.reserve(arrays.size());
  uint64_t data_len = 0;
  for (py::handle array : arrays) {
    held.emplace_back(array.ptr(), false);
    data_len += Padded(held.back().size());
  }
  char prefix[kPrefixSize];
  const std::string_view skeleton_view = skeleton;
  const std::string_view extra_view = extra;
  PackPrefix(prefix, kind, static_cast<uint32_t>(skeleton_view.size()), static_cast<uint32_t>(extra_view.size()),
             data_len);
  std::vector<iovec> pieces;
  pieces.reserve(3 + 2 * held.size());
  pieces.push_back({prefix, kPrefixSize});
  pieces.push_back({const_cast<char*>(skeleton_view.data()), skeleton_view.size()});
  pieces.push_back({const_cast<char*>(extra_view.data()), extra_view.size()});
  for (const HeldBuffer& buffer : held) {
    pieces.push_back({buffer.data(), buffer.size()});
    const std::size_t pad = Padded(buffer.size()) - buffer.size();
    if (pad) pieces.push_back({const_cast<char*>(kPad), pad});
  }
  TransferOrRaise(fd, pieces, true, timeout_s);
}

struct Prefix {
  uint32_t kind, skeleton_len, extra_len;
  uint64_t data_len;
};

Prefix ReadPrefix(int fd, double timeout_s) {
  char raw[kPrefixSize];
  std::vector<iovec> pieces{{raw, kPrefixSize}};
  TransferOrRaise(fd, pieces, false, timeout_s);
  Prefix p;
  std::memcpy(&p.kind, raw, 4);
  std::memcpy(&p.skeleton_len, raw + 4, 4);
  std::memcpy(&p.extra_len, raw + 8, 4);
  std::memcpy(&p.data_len, raw + 12, 8);
  return p;
}

// A whole frame into new memory: (kind, skeleton, extra, data as a uint8 array), the head and the
// data in one scatter read after the prefix.
py::tuple RecvFrame(int fd, double timeout_s) {
  const Prefix p = ReadPrefix(fd, timeout_s);
  py::bytes skeleton(nullptr, 0);
  py::bytes extra(nullptr, 0);
  PyObject* raw_skeleton = PyBytes_FromStringAndSize(nullptr, p.skeleton_len);
  if (raw_skeleton == nullptr) throw py::error_already_set();
  skeleton = py::reinterpret_steal<py::bytes>(raw_skeleton);
  PyObject* raw_extra = PyBytes_FromStringAndSize(nullptr, p.extra_len);
  if (raw_extra == nullptr) throw py::error_already_set();
  extra = py::reinterpret_steal<py::bytes>(raw_extra);
  py::array_t<uint8_t> data(static_cast<py::ssize_t>(p.data_len));
  std::vector<iovec> pieces{{PyBytes_AS_STRING(raw_skeleton), p.skeleton_len},
                            {PyBytes_AS_STRING(raw_extra), p.extra_len},
                            {data.mutable_data(), p.data_len}};
  TransferOrRaise(fd, pieces, false, timeout_s);
  return py::make_tuple(p.kind, skeleton, extra, data);
}

// The prefix and head of a frame (kind, skeleton, extra, data length); the data is then read by
// RecvInto, into destinations chosen from the skeleton.
py::tuple RecvHead(int fd, double timeout_s) {
  const Prefix p = ReadPrefix(fd, timeout_s);
  std::string head(p.skeleton_len + p.extra_len, '\0');
  std::vector<iovec> pieces{{head.data(), head.size()}};
  TransferOrRaise(fd, pieces, false, timeout_s);
  return py::make_tuple(p.kind, py::bytes(head.data(), p.skeleton_len),
                        py::bytes(head.data() + p.skeleton_len, p.extra_len), p.data_len);
}

// A frame's data into destinations: array i's bytes (sizes[i]) into targets[i] at byte offsets[i]
// (a node's rows of the merged arrays), each followed by its padding. Checked against each
// target's size, and against the frame's data length.
void RecvInto(int fd, const py::list& targets, const std::vector<std::size_t>& offsets,
              const std::vector<std::size_t>& sizes, uint64_t data_len, double timeout_s) {
  if (targets.size() != offsets.size() || targets.size() != sizes.size()) {
    throw py::value_error("targets, offsets and sizes differ in length");
  }
  std::vector<HeldBuffer> held;
  held.reserve(targets.size());
  std::vector<iovec> pieces;
  pieces.reserve(2 * targets.size());
  uint64_t total = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    held.emplace_back(targets[i].ptr(), true);
    if (offsets[i] > held.back().size() || sizes[i] > held.back().size() - offsets[i]) {
      throw py::value_error("a destination is smaller than its array");
    }
    pieces.push_back({held.back().data() + offsets[i], sizes[i]});
    const std::size_t pad = Padded(sizes[i]) - sizes[i];
    if (pad) pieces.push_back({pad_sink, pad});
    total += Padded(sizes[i]);
  }
  if (total != data_len) throw py::value_error("the destinations do not match the frame's data length");
  TransferOrRaise(fd, pieces, false, timeout_s);
}

// wire.decode: the skeleton's tree (exact tuples, lists and dicts, as wire.encode builds it) with
// each Slot (an instance of slot_type) replaced by arrays[slot.index]; anything else kept as is.
py::object Decode(py::handle tree, const py::list& arrays, py::handle slot_type) {
  PyObject* value = tree.ptr();
  if (Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(slot_type.ptr())) {
    const auto index = tree.attr("index").cast<py::ssize_t>();
    if (index < 0 || static_cast<std::size_t>(index) >= arrays.size()) throw py::index_error("slot index out of range");
    return arrays[static_cast<std::size_t>(index)];
  }
  if (PyTuple_CheckExact(value)) {
    const Py_ssize_t size = PyTuple_GET_SIZE(value);
    py::tuple out(size);
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyTuple_SET_ITEM(out.ptr(), i, Decode(PyTuple_GET_ITEM(value, i), arrays, slot_type).release().ptr());
    }
    return out;
  }
  if (PyList_CheckExact(value)) {
    const Py_ssize_t size = PyList_GET_SIZE(value);
    py::list out(size);
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyList_SET_ITEM(out.ptr(), i, Decode(PyList_GET_ITEM(value, i), arrays, slot_type).release().ptr());
    }
    return out;
  }
  if (PyDict_CheckExact(value)) {
    py::dict out;
    PyObject* k;
    PyObject* v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(value, &pos, &k, &v)) {
      if (PyDict_SetItem(out.ptr(), k, Decode(v, arrays, slot_type).ptr()) != 0) throw py::error_already_set();
    }
    return out;
  }
  return py::reinterpret_borrow<py::object>(tree);
}

// A received frame's arrays: array i views `buffer` (the frame's data) at its padded offset, with
// dtypes[i] and shapes[i]; no copy. Each view keeps the buffer alive and is writable as it is.
py::list Views(const py::array& buffer, const py::list& dtypes, const py::list& shapes) {
  if (dtypes.size() != shapes.size()) throw py::value_error("dtypes and shapes differ in length");
  auto* base = static_cast<char*>(const_cast<void*>(buffer.data()));
  const auto total = static_cast<std::size_t>(buffer.nbytes());
  py::list out(dtypes.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    const auto dtype = py::reinterpret_borrow<py::dtype>(dtypes[i]);
    const auto shape = shapes[i].cast<std::vector<py::ssize_t>>();
    std::size_t nbytes = static_cast<std::size_t>(dtype.itemsize());
    for (const py::ssize_t dim : shape) nbytes *= static_cast<std::size_t>(dim);
    if (offset > total || nbytes > total - offset) throw py::value_error("the frame is shorter than its arrays");
    out[i] = py::array(dtype, shape, {}, base + offset, buffer);
    offset += Padded(nbytes);
  }
  return out;
}

// The bytes of a frame's extra: empty for None, else the pickle (wire.send_frame's).
py::bytes PickledExtra(py::handle extra) {
  if (extra.is_none()) return py::bytes(nullptr, 0);
  const py::module_ pickle = py::module_::import("pickle");
  return pickle.attr("dumps")(extra, pickle.attr("HIGHEST_PROTOCOL"));
}

// wire.send_frame in one call: the message walked (Flatten), its skeleton taken from `cache` under
// the walk's key (or made by `encode`, wire.encode, and kept there: at most cache_size entries),
// the extra pickled, the frame sent; then, when `counter` is not None (a driver's link), its
// `owed` counts the reply. One native call, so Ctrl-C, whose Python handler runs between
// bytecodes and never inside a native call, can neither cut the frame nor lose the count (encode
// runs Python on a structure's first frame, before anything is sent).
void SendMessage(int fd, double timeout_s, uint32_t kind, py::handle message, py::handle extra, const py::dict& cache,
                 py::ssize_t cache_size, py::handle encode, py::handle counter) {
  std::string key;
  py::list arrays;
  py::object skeleton;
  if (Flatten(message, key, arrays)) {
    const py::bytes key_bytes(key);
    PyObject* hit = PyDict_GetItemWithError(cache.ptr(), key_bytes.ptr());  // borrowed
    if (hit != nullptr) {
      skeleton = py::reinterpret_borrow<py::object>(hit);
    } else {
      if (PyErr_Occurred()) throw py::error_already_set();
      const py::tuple encoded = encode(message);
      skeleton = encoded[0];
      arrays = encoded[1];
      if (PyDict_Size(cache.ptr()) >= cache_size) PyDict_Clear(cache.ptr());
      cache[key_bytes] = skeleton;
    }
  } else {
    const py::tuple encoded = encode(message);
    skeleton = encoded[0];
    arrays = encoded[1];
  }
  SendFrame(fd, kind, skeleton, PickledExtra(extra), arrays, timeout_s);
  if (!counter.is_none()) counter.attr("owed") = counter.attr("owed").cast<int64_t>() + 1;
}

// A received frame (RecvFrame's tuple: kind, skeleton, extra bytes, data) as (kind, message,
// extra): its layout (wire._Layout: tree, slots, dtypes, shapes) looked up in `layouts` by the
// skeleton's bytes or made by `layout_of` (wire._layout, which caches it), its arrays viewing the
// data, put in the tree; the extra unpickled.
py::tuple DecodeRaw(const py::tuple& raw, const py::dict& layouts, py::handle layout_of, py::handle slot_type) {
  const py::object skeleton = raw[1];
  PyObject* hit = PyDict_GetItemWithError(layouts.ptr(), skeleton.ptr());  // borrowed
  if (hit == nullptr && PyErr_Occurred()) throw py::error_already_set();
  const py::object layout = hit != nullptr ? py::reinterpret_borrow<py::object>(hit) : layout_of(skeleton);
  const py::list slots = layout.attr("slots");
  const py::list arrays = slots.empty() ? py::list() : Views(raw[3], layout.attr("dtypes"), layout.attr("shapes"));
  py::object message = Decode(layout.attr("tree"), arrays, slot_type);
  const py::bytes extra_bytes = raw[2];
  py::object extra = py::none();
  if (PyBytes_GET_SIZE(extra_bytes.ptr()) > 0) extra = py::module_::import("pickle").attr("loads")(extra_bytes);
  return py::make_tuple(raw[0], std::move(message), std::move(extra));
}

// The front of a driver link's stash as (index, kind, message, extra), popped once decoded: a raw
// frame (RecvFrame's tuple, stashed by WaitRead) or a wire.Frame (stashed by the link's read). A
// KeyboardInterrupt while decoding (wire._layout runs Python on a skeleton's first frame) leaves
// the frame stashed for the next call; any other error drops it (it would fail the same way again).
py::tuple TakeStashed(std::size_t index, py::handle link, const py::dict& layouts, py::handle layout_of,
                      py::handle slot_type) {
  const py::object stash = link.attr("stash");
  const py::object front = stash[py::int_(0)];
  py::tuple out;
  if (PyTuple_CheckExact(front.ptr())) {
    py::tuple decoded;
    try {
      decoded = DecodeRaw(front, layouts, layout_of, slot_type);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_KeyboardInterrupt)) stash.attr("popleft")();
      throw;
    } catch (...) {  // a C++ exception (py::value_error from Views: a frame shorter than its arrays)
      stash.attr("popleft")();
      throw;
    }
    out = py::make_tuple(index, decoded[0], decoded[1], decoded[2]);
  } else {
    out = py::make_tuple(index, front.attr("kind"), front.attr("message"), front.attr("extra"));
  }
  stash.attr("popleft")();
  return out;
}

// The driver's wait for its next reply (distributed.py's async recv): `links` are driver links
// (fd, timeout, owed, stash) in the order to serve them (the longest waiting first). A link with
// a stashed reply is served at once; else poll() waits up to wait_s for any to be readable, and
// the first readable one's whole frame is read and stashed (its `owed` counted down) before it is
// decoded and popped. Returns (index, kind, message, extra); (index, None, None, error) when that
// link's stream broke (an OSError: the caller restarts or fails the node); None at wait_s. Ctrl-C
// interrupts the wait, never a frame: a frame read is in the stash until it has been decoded.
py::object WaitRead(const py::list& links, double wait_s, const py::dict& layouts, py::handle layout_of,
                    py::handle slot_type) {
  const std::size_t count = links.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (py::len(links[i].attr("stash")) > 0) return TakeStashed(i, links[i], layouts, layout_of, slot_type);
  }
  std::vector<pollfd> fds(count);
  for (std::size_t i = 0; i < count; ++i) fds[i] = {links[i].attr("fd").cast<int>(), POLLIN, 0};
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             std::chrono::duration<double>(std::max(0.0, wait_s)));
  std::size_t ready = count;
  while (ready == count) {
    int r = 0;
    int err = 0;
    {
      py::gil_scoped_release release;
      const auto left =
          std::max(std::chrono::steady_clock::duration::zero(), deadline - std::chrono::steady_clock::now());
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      r = ppoll(fds.data(), fds.size(), &ts, nullptr);
      err = errno;
    }
    if (r == 0) return py::none();
    if (r < 0) {
      if (err != EINTR) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
        throw py::error_already_set();
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C: KeyboardInterrupt
      continue;
    }
    for (std::size_t i = 0; i < count && ready == count; ++i) {
      if (fds[i].revents != 0) ready = i;
    }
  }
  const py::handle link = links[ready];
  // The link's fd read again after the wait, as a socket's would be: a link closed meanwhile (by
  // another thread; close() sets fd to -1 first) is never read through its old number, which a new
  // socket may have taken.
  const int fd = link.attr("fd").cast<int>();
  py::tuple raw;
  try {
    if (fd != fds[ready].fd) Raise(Failure::kErrno, EBADF);
    raw = RecvFrame(fd, link.attr("timeout").cast<double>());
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_OSError)) throw;
    return py::make_tuple(ready, py::none(), py::none(), e.value());
  }
  link.attr("stash").attr("append")(raw);
  link.attr("owed") = link.attr("owed").cast<int64_t>() - 1;
  return TakeStashed(ready, link, layouts, layout_of, slot_type);
}

// Whether a bytes object holds exactly `text`.
bool BytesEqual(py::handle bytes, const std::string& text) {
  return PyBytes_GET_SIZE(bytes.ptr()) == static_cast<Py_ssize_t>(text.size()) &&
         std::memcmp(PyBytes_AS_STRING(bytes.ptr()), text.data(), text.size()) == 0;
}

// A node's async batches, served natively (integrations/ray/actor.py, PoolActor._serve_connection):
// the driver's frame per async batch (SEND with its RECV riding along) read, its actions sent to
// the node's native pool (`pool`, the front-end's _native) with the env ids made local, the next
// batch received, and the reply sent, with no Python bytecode per batch. `plan` is what the actor
// worked out from the first such batch it served in Python (PoolActor._native_plan): (the SEND
// frames' skeleton and extra bytes, the node's global id offset, the reply's skeleton, its leaves
// as (field index, whether the offset is added), each leaf's byte count, the SEND and OK kinds).
// The reply is the frame wire.send_frame would send for the front-end's (obs, reward, terminated,
// truncated, info) with global ids, byte for byte (tests/integrations/test_integration_ray.py): each leaf is a
// whole field of the batch, which the front-end's flat unpacking (the only one planned) returns.
//
// Returns at the first frame or batch it does not serve, for the actor's Python path:
//   ("frame", raw)             a frame of another kind or structure, or whose send raised (raw as
//                              RecvFrame returns it; the pool queued nothing, so the Python path
//                              sends it again and defers the same error);
//   ("batch", arrays, errors)  a batch received whose reply it does not make (errors: an env
//                              raised; None: a field's size changed);
//   ("raised", error)          the pool's recv() raised (a closed pool).
// A socket error (the driver went away) raises OSError, as wire.read_frame would.
py::tuple ServeBatches(int fd, double timeout_s, py::handle pool, const py::tuple& plan, const py::dict& layouts,
                       py::handle layout_of, py::handle slot_type) {
  const auto send_skeleton = plan[0].cast<std::string>();
  const auto send_extra = plan[1].cast<std::string>();
  const auto offset = plan[2].cast<int64_t>();
  const py::bytes reply_skeleton = plan[3];
  const auto leaves = plan[4].cast<std::vector<std::pair<std::size_t, bool>>>();
  const auto leaf_bytes = plan[5].cast<std::vector<std::size_t>>();
  const auto send_kind = plan[6].cast<uint32_t>();
  const auto ok_kind = plan[7].cast<uint32_t>();
  if (leaves.size() != leaf_bytes.size()) throw py::value_error("a plan's leaves and byte counts differ in length");
  const std::string_view skeleton_view = reply_skeleton;
  const py::object send = pool.attr("send");
  const py::object recv = pool.attr("recv");
  uint64_t data_len = 0;
  std::size_t num_global = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    data_len += Padded(leaf_bytes[i]);
    if (leaves[i].second) {
      if (leaf_bytes[i] % sizeof(int32_t) != 0) throw py::value_error("a global id leaf is not int32");
      ++num_global;
    }
  }
  std::vector<std::vector<int32_t>> global_ids(num_global);
  std::vector<iovec> pieces;
  pieces.reserve(2 + 2 * leaves.size());
  char prefix[kPrefixSize];
  PackPrefix(prefix, ok_kind, static_cast<uint32_t>(skeleton_view.size()), 0, data_len);
  while (true) {
    const py::tuple raw = RecvFrame(fd, timeout_s);
    if (raw[0].cast<uint32_t>() != send_kind || !BytesEqual(raw[1], send_skeleton) || !BytesEqual(raw[2], send_extra)) {
      return py::make_tuple("frame", raw);
    }
    const py::tuple decoded = DecodeRaw(raw, layouts, layout_of, slot_type);
    const py::object message = decoded[1];
    if (!PyTuple_CheckExact(message.ptr()) || PyTuple_GET_SIZE(message.ptr()) != 2) {
      return py::make_tuple("frame", raw);
    }
    // The ids made local (as PoolActor.send: env_id - offset), as int64; ids that are not a 1-d
    // integer array go the Python way (which refuses them as it always did).
    const py::handle id_object = PyTuple_GET_ITEM(message.ptr(), 1);
    if (!py::isinstance<py::array>(id_object)) return py::make_tuple("frame", raw);
    const auto id_array = py::reinterpret_borrow<py::array>(id_object);
    const char id_kind = id_array.dtype().kind();
    if ((id_kind != 'i' && id_kind != 'u') || id_array.ndim() != 1) return py::make_tuple("frame", raw);
    py::array_t<int64_t> local;
    try {
      const auto ids = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(id_array);
      if (!ids) return py::make_tuple("frame", raw);
      local = py::array_t<int64_t>(ids.size());
      const int64_t* in = ids.data();
      int64_t* out = local.mutable_data();
      for (py::ssize_t i = 0; i < ids.size(); ++i) out[i] = in[i] - offset;
      send(py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(message.ptr(), 0)), local);
    } catch (py::error_already_set&) {
      // A bad action or id: nothing was queued. The Python path sends it again and defers the error.
      PyErr_Clear();
      return py::make_tuple("frame", raw);
    }
    py::tuple result;
    try {
      result = recv(py::none());
    } catch (py::error_already_set& e) {
      return py::make_tuple("raised", e.value());
    }
    const py::tuple arrays = result[0];
    const py::object errors = result[1];
    if (!errors.is_none()) return py::make_tuple("batch", arrays, errors);
    pieces.clear();
    pieces.push_back({prefix, kPrefixSize});
    pieces.push_back({const_cast<char*>(skeleton_view.data()), skeleton_view.size()});
    std::size_t g = 0;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].first >= arrays.size()) return py::make_tuple("batch", arrays, errors);
      const auto field = py::reinterpret_borrow<py::array>(arrays[leaves[i].first]);
      // A field whose size changed (a per-player field's rows): the reply is not the planned one.
      if (static_cast<std::size_t>(field.nbytes()) != leaf_bytes[i]) return py::make_tuple("batch", arrays, errors);
      char* data = static_cast<char*>(const_cast<void*>(field.data()));
      if (leaves[i].second) {  // info["env_id"] + offset (int32, as NumPy keeps it)
        std::vector<int32_t>& ids = global_ids[g++];
        ids.resize(leaf_bytes[i] / sizeof(int32_t));
        const auto* in = reinterpret_cast<const int32_t*>(data);
        for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int32_t>(in[k] + offset);
        data = reinterpret_cast<char*>(ids.data());
      }
      pieces.push_back({data, leaf_bytes[i]});
      const std::size_t pad = Padded(leaf_bytes[i]) - leaf_bytes[i];
      if (pad) pieces.push_back({const_cast<char*>(kPad), pad});
    }
    TransferOrRaise(fd, pieces, true, timeout_s);
  }
}

}  // namespace

void RegisterDataPlane(py::module_& parent) {
  py::module_ m = parent.def_submodule("dataplane", "The Ray layer's frame I/O (integrations/ray/wire.py)");
  m.def("views", &Views, py::arg("buffer"), py::arg("dtypes"), py::arg("shapes"));
  m.def("decode", &Decode, py::arg("tree"), py::arg("arrays"), py::arg("slot_type"));
  m.def("recv_frame", &RecvFrame, py::arg("fd"), py::arg("timeout"));
  m.def("recv_head", &RecvHead, py::arg("fd"), py::arg("timeout"));
  m.def("recv_into", &RecvInto, py::arg("fd"), py::arg("targets"), py::arg("offsets"), py::arg("sizes"),
        py::arg("data_len"), py::arg("timeout"));
  m.def("send_message", &SendMessage, py::arg("fd"), py::arg("timeout"), py::arg("kind"), py::arg("message"),
        py::arg("extra"), py::arg("cache"), py::arg("cache_size"), py::arg("encode"), py::arg("counter"));
  m.def("decode_raw", &DecodeRaw, py::arg("raw"), py::arg("layouts"), py::arg("layout_of"), py::arg("slot_type"));
  m.def("serve_batches", &ServeBatches, py::arg("fd"), py::arg("timeout"), py::arg("pool"), py::arg("plan"),
        py::arg("layouts"), py::arg("layout_of"), py::arg("slot_type"));
  m.def("wait_read", &WaitRead, py::arg("links"), py::arg("wait_s"), py::arg("layouts"), py::arg("layout_of"),
        py::arg("slot_type"));
}

}  // namespace pp
