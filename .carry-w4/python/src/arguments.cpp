#include "arguments.h"

#include <nanobind/ndarray.h>

#include <cstring>
#include <map>

#include "errors.h"

namespace nb = nanobind;

namespace tessel::python {
namespace {

using ir::ScalarKind;

// The torch fast path: set up once, the first time a call sees torch imported (sys.modules),
// so that importing tessel never imports torch. Borrowed references kept alive by torch's module,
// which is never unloaded.
struct Torch {
  bool looked = false;  // torch was found in sys.modules and read
  PyTypeObject* tensor_type = nullptr;
  std::vector<std::pair<PyObject*, ScalarKind>> dtypes;  // torch.float16 -> f16, ...
  PyObject* current_raw_stream = nullptr;                 // torch._C._cuda_getCurrentRawStream
  // Interned attribute names (made once: no string is built per call).
  PyObject *data_ptr = nullptr, *dtype = nullptr, *shape = nullptr, *is_contiguous = nullptr,
           *get_device = nullptr;
};
Torch torch_state;

// Reads torch's tables when torch has been imported; cheap (one dict lookup) when it has not.
const Torch* torch() {
  if (torch_state.looked) return &torch_state;
  PyObject* module = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");  // borrowed
  if (!module) return nullptr;
  nb::handle torch_module(module);
  if (!nb::hasattr(torch_module, "Tensor")) return nullptr;  // torch is still importing
  Torch& t = torch_state;
  nb::object tensor = torch_module.attr("Tensor");
  t.tensor_type = reinterpret_cast<PyTypeObject*>(tensor.release().ptr());
  static const std::pair<const char*, ScalarKind> names[] = {
      {"float16", ScalarKind::f16},        {"bfloat16", ScalarKind::bf16},
      {"float32", ScalarKind::f32},        {"float64", ScalarKind::f64},
      {"int8", ScalarKind::i8},            {"uint8", ScalarKind::u8},
      {"int16", ScalarKind::i16},          {"int32", ScalarKind::i32},
      {"int64", ScalarKind::i64},          {"bool", ScalarKind::i1},
      {"float8_e4m3fn", ScalarKind::f8e4m3}, {"float8_e5m2", ScalarKind::f8e5m2},
  };
  for (const auto& [name, kind] : names) {
    if (nb::hasattr(torch_module, name))
      t.dtypes.emplace_back(nb::object(torch_module.attr(name)).release().ptr(), kind);
  }
  nb::object c = torch_module.attr("_C");
  if (nb::hasattr(c, "_cuda_getCurrentRawStream"))
    t.current_raw_stream = nb::object(c.attr("_cuda_getCurrentRawStream")).release().ptr();
  t.data_ptr = PyUnicode_InternFromString("data_ptr");
  t.dtype = PyUnicode_InternFromString("dtype");
  t.shape = PyUnicode_InternFromString("shape");
  t.is_contiguous = PyUnicode_InternFromString("is_contiguous");
  t.get_device = PyUnicode_InternFromString("get_device");
  t.looked = true;
  return &t;
}

// A new reference from a call; a Python error becomes nb::python_error (propagated as is).
nb::object checked(PyObject* result) {
  if (!result) throw nb::python_error();
  return nb::steal(result);
}

int64_t as_int64(PyObject* object) {
  long long v = PyLong_AsLongLong(object);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

// Row-major extents from a tuple (torch.Size is a tuple), assigned in place.
void read_shape(PyObject* tuple, std::vector<int64_t>& shape) {
  Py_ssize_t rank = PyTuple_GET_SIZE(tuple);
  shape.resize(static_cast<size_t>(rank));
  for (Py_ssize_t d = 0; d < rank; ++d) shape[d] = as_int64(PyTuple_GET_ITEM(tuple, d));
}

[[noreturn]] void not_contiguous(size_t index, const std::string& param) {
  launch_error(argument_name(index, param),
               " is not contiguous: tessel kernels take row-major contiguous tensors (call "
               ".contiguous() on it)");
}

bool read_torch(const Torch& t, PyObject* object, ArrayRef& out, size_t index,
                const std::string& param) {
  nb::object dtype = checked(PyObject_GetAttr(object, t.dtype));
  bool known = false;
  for (const auto& [d, kind] : t.dtypes) {
    if (d == dtype.ptr()) {
      out.element = kind;
      known = true;
      break;
    }
  }
  if (!known) {
    launch_error(argument_name(index, param), " has dtype ", nb::str(dtype).c_str(),
                 ", which is not a tessel element type");
  }
  nb::object contiguous = checked(PyObject_CallMethodNoArgs(object, t.is_contiguous));
  if (contiguous.ptr() != Py_True) not_contiguous(index, param);
  nb::object shape = checked(PyObject_GetAttr(object, t.shape));
  read_shape(shape.ptr(), out.shape);
  nb::object device = checked(PyObject_CallMethodNoArgs(object, t.get_device));
  int64_t ordinal = as_int64(device.ptr());  // -1 on the CPU
  out.place = ordinal < 0 ? Place::host : Place::device;
  out.device = ordinal < 0 ? 0 : static_cast<int>(ordinal);
  nb::object pointer = checked(PyObject_CallMethodNoArgs(object, t.data_ptr));
  out.data = static_cast<uintptr_t>(PyLong_AsUnsignedLongLong(pointer.ptr()));
  if (PyErr_Occurred()) throw nb::python_error();
  out.writable = true;
  out.is_torch = true;
  return true;
}

// numpy's array-interface type strings ("<f2", "|u1", ...); bf16 and fp8 have none.
bool element_from_typestr(const std::string& s, ScalarKind& out) {
  if (s.size() < 3 || s[0] == '>') return false;  // big-endian data is not what devices hold
  std::string code = s.substr(1);
  static const std::map<std::string, ScalarKind> table = {
      {"f2", ScalarKind::f16}, {"f4", ScalarKind::f32}, {"f8", ScalarKind::f64},
      {"i1", ScalarKind::i8},  {"u1", ScalarKind::u8},  {"i2", ScalarKind::i16},
      {"i4", ScalarKind::i32}, {"i8", ScalarKind::i64}, {"b1", ScalarKind::i1}};
  auto it = table.find(code);
  if (it == table.end()) return false;
  out = it->second;
  return true;
}

bool read_cuda_array_interface(PyObject* object, ArrayRef& out, size_t index,
                               const std::string& param) {
  nb::object interface = nb::borrow(object).attr("__cuda_array_interface__");
  nb::dict d = nb::cast<nb::dict>(interface);
  std::string typestr = nb::cast<std::string>(d["typestr"]);
  if (!element_from_typestr(typestr, out.element)) {
    launch_error(argument_name(index, param), " has __cuda_array_interface__ typestr '", typestr,
                 "', which is not a tessel element type");
  }
  read_shape(nb::tuple(d["shape"]).ptr(), out.shape);
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  out.data = static_cast<uintptr_t>(nb::cast<uint64_t>(data[0]));
  out.writable = !nb::cast<bool>(data[1]);
  if (d.contains("strides") && !d["strides"].is_none()) {
    nb::tuple strides = nb::cast<nb::tuple>(d["strides"]);
    int64_t expected = ir::bit_width(out.element) / 8;
    for (size_t k = out.shape.size(); k-- > 0;) {
      if (out.shape[k] != 1 && nb::cast<int64_t>(strides[k]) != expected)
        not_contiguous(index, param);
      expected *= out.shape[k];
    }
  }
  out.place = Place::device;
  out.device = 0;  // the interface names no device: the pointer's context is assumed current
  out.is_torch = false;
  return true;
}

// DLPack data type codes (dlpack.h): kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6.
bool element_from_dlpack(uint8_t code, uint8_t bits, ScalarKind& out) {
  struct Row {
    uint8_t code, bits;
    ScalarKind kind;
  };
  static const Row rows[] = {{0, 8, ScalarKind::i8},   {0, 16, ScalarKind::i16},
                             {0, 32, ScalarKind::i32}, {0, 64, ScalarKind::i64},
                             {1, 8, ScalarKind::u8},   {2, 16, ScalarKind::f16},
                             {2, 32, ScalarKind::f32}, {2, 64, ScalarKind::f64},
                             {4, 16, ScalarKind::bf16}, {6, 8, ScalarKind::i1}};
  for (const Row& r : rows) {
    if (r.code == code && r.bits == bits) {
      out = r.kind;
      return true;
    }
  }
  return false;
}

template <typename Array>
bool read_ndarray(const Array& a, ArrayRef& out, size_t index, const std::string& param,
                  bool writable) {
  nb::dlpack::dtype dt = a.dtype();
  if (dt.lanes != 1 || !element_from_dlpack(dt.code, dt.bits, out.element)) {
    launch_error(argument_name(index, param), " has a DLPack data type (code ", int(dt.code),
                 ", ", int(dt.bits), " bits, ", int(dt.lanes),
                 " lanes) that is not a tessel element type");
  }
  out.shape.resize(a.ndim());
  int64_t expected = 1;
  for (size_t k = a.ndim(); k-- > 0;) {
    out.shape[k] = static_cast<int64_t>(a.shape(k));
    if (out.shape[k] != 1 && a.stride(k) != expected) not_contiguous(index, param);
    expected *= out.shape[k];
  }
  out.data = reinterpret_cast<uintptr_t>(a.data());
  // kDLCPU 1 and kDLCUDAHost 3 (pinned host memory) are host memory; kDLCUDA 2, kDLCUDAManaged 13.
  int type = a.device_type();
  if (type == 2 || type == 13) {
    out.place = Place::device;
  } else if (type == 1 || type == 3) {
    out.place = Place::host;
  } else {
    launch_error(argument_name(index, param), " lives on DLPack device type ", type,
                 " (tessel runs on CUDA devices and, in the interpreter, on host memory)");
  }
  out.device = a.device_id();
  out.writable = writable;
  out.is_torch = false;
  return true;
}

}  // namespace

std::string argument_name(size_t index, const std::string& param_name) {
  return "argument " + std::to_string(index) + " (%" + param_name + ")";
}

bool read_array(PyObject* object, ArrayRef& out, size_t index, const std::string& param) {
  if (const Torch* t = torch(); t && PyObject_TypeCheck(object, t->tensor_type)) {
    return read_torch(*t, object, out, index, param);
  }
  nb::handle h(object);
  if (nb::hasattr(h, "__cuda_array_interface__")) {
    return read_cuda_array_interface(object, out, index, param);
  }
  if (!nb::hasattr(h, "__dlpack__") && !PyObject_CheckBuffer(object)) return false;
  // Writable first; a read-only array (an input the kernel must not write) as read-only.
  nb::ndarray<> writable;
  if (nb::try_cast(h, writable, /*convert=*/false)) {
    return read_ndarray(writable, out, index, param, true);
  }
  nb::ndarray<nb::ro> readonly;
  if (nb::try_cast(h, readonly, /*convert=*/false)) {
    return read_ndarray(readonly, out, index, param, false);
  }
  launch_error(argument_name(index, param), " (a ", Py_TYPE(object)->tp_name,
               ") offers DLPack or the buffer protocol, but not as an array tessel can read");
}

void* torch_current_stream(int device) {
  const Torch* t = torch();
  if (!t || !t->current_raw_stream) return nullptr;
  nb::object device_index = nb::int_(device);
  nb::object stream = checked(PyObject_CallOneArg(t->current_raw_stream, device_index.ptr()));
  return PyLong_AsVoidPtr(stream.ptr());
}

bool element_from_name(const std::string& name, ir::ScalarKind& out) {
  if (auto kind = ir::parse_scalar_kind(name)) {
    out = *kind;
    return true;
  }
  return false;
}

}  // namespace tessel::python
