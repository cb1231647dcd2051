/* swr._hotpath_ext: the eager hot path of swr.torch in C, the twin of swr/_hotpath.py (read that
   first: the same classes, methods, checks and order of calls; the tests run both). Built by
   `pip install .` where Python's headers are (cmake/SwrPythonPackage.cmake), against CPython's
   stable ABI (Py_LIMITED_API 3.10: one build serves every CPython from 3.10 on) and nothing else:
   no torch headers (tensors are Python objects here, used through their methods), no link to
   libswr_runtime.so (the launch functions are called through the addresses that ctypes found,
   swr.catalog.Launch.address). What it saves over the Python twin is the interpreter's work
   between the calls, not the calls: one call of a tensor method costs the same from here. */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* swr_launch_attention and swr_launch_gemm (include/swr/swr.h; the prepared handle first). */
typedef int (*AttentionLaunchFunction)(const void* prepared, uint64_t q, uint64_t k, uint64_t v,
                                       uint64_t o, uint64_t workspace, uint32_t flags,
                                       uintptr_t stream);
typedef int (*GemmLaunchFunction)(const void* prepared, uint64_t a, uint64_t b, uint64_t c,
                                  uintptr_t stream);

static PyObject *s_shape, *s_dtype, *s_device, *s_is_contiguous, *s_contiguous, *s_data_ptr,
    *s_new_empty, *s_handle, *s_fail, *s_address;
static PyTypeObject *HotPathType, *AttentionLaunchType, *MatmulLaunchType;

typedef struct {
  PyObject_HEAD PyObject* empty_like;
  PyObject* current_device;
  PyObject* raw_stream;
  PyObject* capturing;
  PyObject* capture_workspace;
  PyObject* on_device;
  PyObject* strided_attention;
  PyObject* first_attention;
  PyObject* first_matmul;
  PyObject* attention_runners;
  PyObject* matmul_runners;
} HotPath;

/* A runner of a prepared launch: AttentionLaunch (out_shape NULL) or MatmulLaunch. */
typedef struct {
  PyObject_HEAD HotPath* hot;
  PyObject* launch;    /* swr.catalog.Launch: .handle read at each call, .fail(status) */
  PyObject* device;    /* the device index as a Python int, for the hooks */
  PyObject* out_shape; /* MatmulLaunch: (m, n) */
  long device_index;
  uintptr_t function; /* the launch function's address */
  int dynamic;        /* AttentionLaunch: a dynamic-persistence kernel */
} Launch;

/* ---- small helpers: -1 with an exception set on failure ---- */

static int truth_of(PyObject* value /* stolen */) {
  if (value == NULL) return -1;
  const int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

static int pointer_of(PyObject* tensor, uint64_t* pointer) {
  PyObject* value = PyObject_CallMethodObjArgs(tensor, s_data_ptr, NULL);
  if (value == NULL) return -1;
  *pointer = PyLong_AsUnsignedLongLong(value);
  Py_DECREF(value);
  return PyErr_Occurred() ? -1 : 0;
}

/* The launch's prepared handle: NULL once its catalog is closed (handle None). */
static int handle_of(PyObject* launch, const void** handle) {
  PyObject* value = PyObject_GetAttr(launch, s_handle);
  if (value == NULL) return -1;
  *handle = value == Py_None ? NULL : PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return PyErr_Occurred() ? -1 : 0;
}

static int stream_of(Launch* self, uintptr_t* stream) {
  PyObject* value = PyObject_CallFunctionObjArgs(self->hot->raw_stream, self->device, NULL);
  if (value == NULL) return -1;
  *stream = (uintptr_t)PyLong_AsUnsignedLongLong(value);
  Py_DECREF(value);
  return PyErr_Occurred() ? -1 : 0;
}

/* 1 when the launch's device is current, 0 when another is. */
static int on_its_device(Launch* self) {
  PyObject* value = PyObject_CallNoArgs(self->hot->current_device);
  if (value == NULL) return -1;
  const long current = PyLong_AsLong(value);
  Py_DECREF(value);
  if (current == -1 && PyErr_Occurred()) return -1;
  return current == self->device_index;
}

/* launch.fail(status), which raises: -1. (Should it return, the call goes on, as in Python.) */
static int failed(Launch* self, int status) {
  PyObject* code = PyLong_FromLong(status);
  if (code == NULL) return -1;
  PyObject* result = PyObject_CallMethodObjArgs(self->launch, s_fail, code, NULL);
  Py_DECREF(code);
  if (result == NULL) return -1;
  Py_DECREF(result);
  return 0;
}

/* ---- the runners ---- */

static PyObject* run_attention(Launch* self, PyObject* q, PyObject* k, PyObject* v) {
  HotPath* hot = self->hot;
  const int here = on_its_device(self);
  if (here < 0) return NULL;
  if (!here) {
    return PyObject_CallFunctionObjArgs(hot->on_device, self->device, (PyObject*)self, q, k, v,
                                        NULL);
  }
  PyObject* inputs[3] = {q, k, v};
  PyObject *out = NULL, *counter = NULL, *result = NULL;
  int contiguous = 1;
  for (int i = 0; i < 3 && contiguous == 1; ++i) {
    contiguous = truth_of(PyObject_CallMethodObjArgs(inputs[i], s_is_contiguous, NULL));
  }
  if (contiguous < 0) return NULL;
  if (!contiguous) { /* strides the kernels take, or copies: the hook decides (_hotpath.py) */
    return PyObject_CallFunctionObjArgs(hot->strided_attention, (PyObject*)self, q, k, v, NULL);
  }
  out = PyObject_CallFunctionObjArgs(hot->empty_like, inputs[0], NULL);
  if (out == NULL) goto done;
  uint64_t workspace = 0; /* swr's pooled counter; a captured launch's own (_hotpath.py) */
  if (self->dynamic) {
    const int capturing = truth_of(PyObject_CallNoArgs(hot->capturing));
    if (capturing < 0) goto done;
    if (capturing) {
      counter = PyObject_CallFunctionObjArgs(hot->capture_workspace, inputs[0], NULL);
      if (counter == NULL || pointer_of(counter, &workspace) < 0) goto done;
    }
  }
  const void* handle;
  uint64_t pq, pk, pv, po;
  uintptr_t stream;
  if (handle_of(self->launch, &handle) < 0 || pointer_of(inputs[0], &pq) < 0 ||
      pointer_of(inputs[1], &pk) < 0 || pointer_of(inputs[2], &pv) < 0 ||
      pointer_of(out, &po) < 0 || stream_of(self, &stream) < 0) {
    goto done;
  }
  const AttentionLaunchFunction function = (AttentionLaunchFunction)self->function;
  /* The GIL released around the launch, as ctypes does: other threads run meanwhile. */
  PyThreadState* released = PyEval_SaveThread();
  const int status = function(handle, pq, pk, pv, po, workspace, 0, stream);
  PyEval_RestoreThread(released);
  if (status != 0 && failed(self, status) < 0) goto done;
  result = out;
  out = NULL;
done:
  Py_XDECREF(out);
  Py_XDECREF(counter);
  return result;
}

static PyObject* run_matmul(Launch* self, PyObject* a, PyObject* b) {
  HotPath* hot = self->hot;
  const int here = on_its_device(self);
  if (here < 0) return NULL;
  if (!here) {
    return PyObject_CallFunctionObjArgs(hot->on_device, self->device, (PyObject*)self, a, b, NULL);
  }
  PyObject *ca = NULL, *cb = NULL, *c = NULL, *result = NULL;
  ca = PyObject_CallMethodObjArgs(a, s_contiguous, NULL);
  if (ca == NULL) goto done;
  cb = PyObject_CallMethodObjArgs(b, s_contiguous, NULL);
  if (cb == NULL) goto done;
  c = PyObject_CallMethodObjArgs(ca, s_new_empty, self->out_shape, NULL);
  if (c == NULL) goto done;
  const void* handle;
  uint64_t pa, pb, pc;
  uintptr_t stream;
  if (handle_of(self->launch, &handle) < 0 || pointer_of(ca, &pa) < 0 || pointer_of(cb, &pb) < 0 ||
      pointer_of(c, &pc) < 0 || stream_of(self, &stream) < 0) {
    goto done;
  }
  const GemmLaunchFunction function = (GemmLaunchFunction)self->function;
  PyThreadState* released = PyEval_SaveThread();
  const int status = function(handle, pa, pb, pc, stream);
  PyEval_RestoreThread(released);
  if (status != 0 && failed(self, status) < 0) goto done;
  result = c;
  c = NULL;
done:
  Py_XDECREF(ca);
  Py_XDECREF(cb);
  Py_XDECREF(c);
  return result;
}

static PyObject* launch_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  const int attention = Py_TYPE(self) == AttentionLaunchType;
  const Py_ssize_t count = attention ? 3 : 2;
  if ((kwargs != NULL && PyDict_Size(kwargs) != 0) || PyTuple_Size(args) != count) {
    PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments (tensors)",
                 attention ? "AttentionLaunch" : "MatmulLaunch", count);
    return NULL;
  }
  PyObject* first = PyTuple_GetItem(args, 0);
  PyObject* second = PyTuple_GetItem(args, 1);
  if (attention) return run_attention((Launch*)self, first, second, PyTuple_GetItem(args, 2));
  return run_matmul((Launch*)self, first, second);
}

static PyObject* launch_get_launch(PyObject* self, void* closure) {
  (void)closure;
  return Py_NewRef(((Launch*)self)->launch);
}

static PyObject* launch_get_device_index(PyObject* self, void* closure) {
  (void)closure;
  return Py_NewRef(((Launch*)self)->device);
}

static PyObject* launch_get_dynamic(PyObject* self, void* closure) {
  (void)closure;
  return PyBool_FromLong(((Launch*)self)->dynamic);
}

static int launch_traverse(PyObject* self, visitproc visit, void* arg) {
  Launch* launch = (Launch*)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT((PyObject*)launch->hot);
  Py_VISIT(launch->launch);
  Py_VISIT(launch->device);
  Py_VISIT(launch->out_shape);
  return 0;
}

static int launch_clear(PyObject* self) {
  Launch* launch = (Launch*)self;
  Py_CLEAR(launch->hot);
  Py_CLEAR(launch->launch);
  Py_CLEAR(launch->device);
  Py_CLEAR(launch->out_shape);
  return 0;
}

static void dealloc(PyObject* self, inquiry clear) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  clear(self);
  freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_object(self);
  Py_DECREF(type);
}

static void launch_dealloc(PyObject* self) {
  dealloc(self, launch_clear);
}

static PyGetSetDef launch_getset[] = {
    {"launch", launch_get_launch, NULL, "the prepared swr.catalog.Launch", NULL},
    {"device_index", launch_get_device_index, NULL, "the device it runs on", NULL},
    {"dynamic", launch_get_dynamic, NULL, "a dynamic-persistence kernel (takes a tile counter)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot launch_slots[] = {
    {Py_tp_call, launch_call},       {Py_tp_traverse, launch_traverse}, {Py_tp_clear, launch_clear},
    {Py_tp_dealloc, launch_dealloc}, {Py_tp_getset, launch_getset},     {0, NULL}};

static PyType_Spec attention_launch_spec = {
    "swr._hotpath_ext.AttentionLaunch", sizeof(Launch), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, launch_slots};
static PyType_Spec matmul_launch_spec = {
    "swr._hotpath_ext.MatmulLaunch", sizeof(Launch), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, launch_slots};

/* ---- HotPath ---- */

/* The runner remembered under the call's key (a new reference), or NULL: then *key is the key
   to remember the first call's runner under (Py_None where the call has none: not tensors, an
   unhashable argument), or an exception is set. The key is built as _hotpath.py builds it: each
   attribute of every tensor in turn, then the other arguments. */
static PyObject* remembered(PyObject* runners, PyObject* const* tensors, Py_ssize_t count,
                            PyObject* const* others, Py_ssize_t other_count, PyObject** key) {
  PyObject* const attributes[3] = {s_shape, s_dtype, s_device};
  PyObject* built = PyTuple_New(3 * count + other_count);
  if (built == NULL) return NULL;
  for (int a = 0; a < 3; ++a) {
    for (Py_ssize_t t = 0; t < count; ++t) {
      PyObject* value = PyObject_GetAttr(tensors[t], attributes[a]);
      if (value == NULL) goto no_key;
      PyTuple_SetItem(built, a * count + t, value); /* steals */
    }
  }
  for (Py_ssize_t i = 0; i < other_count; ++i) {
    PyTuple_SetItem(built, 3 * count + i, Py_NewRef(others[i]));
  }
  PyObject* runner = PyDict_GetItemWithError(runners, built); /* borrowed */
  if (runner == NULL) {
    if (PyErr_Occurred()) goto no_key;
    *key = built;
    return NULL;
  }
  Py_DECREF(built);
  *key = NULL;
  return Py_NewRef(runner);
no_key:
  Py_DECREF(built);
  if (!PyErr_ExceptionMatches(PyExc_AttributeError) && !PyErr_ExceptionMatches(PyExc_TypeError)) {
    return NULL;
  }
  PyErr_Clear();
  *key = Py_NewRef(Py_None);
  return NULL;
}

static PyObject* hot_attention(PyObject* self, PyObject* const* args, Py_ssize_t count) {
  HotPath* hot = (HotPath*)self;
  if (count != 8) {
    PyErr_Format(PyExc_TypeError,
                 "attention(q, k, v, is_causal, scale, fallback, catalog, enable_gqa): %zd "
                 "arguments given",
                 count);
    return NULL;
  }
  PyObject* key = NULL;
  PyObject* run = remembered(hot->attention_runners, args, 3, args + 3, 5, &key);
  if (run == NULL) {
    if (key == NULL) return NULL;
    run = PyObject_CallFunctionObjArgs(hot->first_attention, self, key, args[0], args[1], args[2],
                                       args[3], args[4], args[5], args[6], args[7], NULL);
    Py_DECREF(key);
    if (run == NULL) return NULL;
  }
  PyObject* out = Py_TYPE(run) == AttentionLaunchType
                      ? run_attention((Launch*)run, args[0], args[1], args[2])
                      : PyObject_CallFunctionObjArgs(run, args[0], args[1], args[2], NULL);
  Py_DECREF(run);
  return out;
}

static PyObject* hot_matmul(PyObject* self, PyObject* const* args, Py_ssize_t count) {
  HotPath* hot = (HotPath*)self;
  if (count != 4) {
    PyErr_Format(PyExc_TypeError, "matmul(a, b, fallback, catalog): %zd arguments given", count);
    return NULL;
  }
  PyObject* key = NULL;
  PyObject* run = remembered(hot->matmul_runners, args, 2, args + 2, 2, &key);
  if (run == NULL) {
    if (key == NULL) return NULL;
    run = PyObject_CallFunctionObjArgs(hot->first_matmul, self, key, args[0], args[1], args[2],
                                       args[3], NULL);
    Py_DECREF(key);
    if (run == NULL) return NULL;
  }
  PyObject* out = Py_TYPE(run) == MatmulLaunchType
                      ? run_matmul((Launch*)run, args[0], args[1])
                      : PyObject_CallFunctionObjArgs(run, args[0], args[1], NULL);
  Py_DECREF(run);
  return out;
}

/* A runner of `type` for a prepared launch (its `address` read now) on device `index`. */
static PyObject* new_launch(PyObject* self, PyTypeObject* type, PyObject* launch, PyObject* index,
                            int dynamic, PyObject* out_shape) {
  const long device_index = PyLong_AsLong(index);
  if (device_index == -1 && PyErr_Occurred()) return NULL;
  PyObject* address = PyObject_GetAttr(launch, s_address);
  if (address == NULL) return NULL;
  void* function = PyLong_AsVoidPtr(address);
  Py_DECREF(address);
  if (PyErr_Occurred()) return NULL;
  if (function == NULL) {
    PyErr_SetString(PyExc_ValueError, "launch.address is 0: allowed a C function's address");
    return NULL;
  }
  allocfunc allocate = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  Launch* runner = (Launch*)allocate(type, 0);
  if (runner == NULL) return NULL;
  runner->hot = (HotPath*)Py_NewRef(self);
  runner->launch = Py_NewRef(launch);
  runner->device = Py_NewRef(index);
  runner->out_shape = out_shape; /* a new reference or NULL */
  runner->device_index = device_index;
  runner->function = (uintptr_t)function;
  runner->dynamic = dynamic;
  return (PyObject*)runner;
}

static PyObject* hot_attention_launch(PyObject* self, PyObject* args) {
  PyObject *launch, *index, *dynamic;
  if (!PyArg_ParseTuple(args, "OOO:attention_launch", &launch, &index, &dynamic)) return NULL;
  const int is_dynamic = PyObject_IsTrue(dynamic);
  if (is_dynamic < 0) return NULL;
  return new_launch(self, AttentionLaunchType, launch, index, is_dynamic, NULL);
}

static PyObject* hot_matmul_launch(PyObject* self, PyObject* args) {
  PyObject *launch, *index, *shape;
  if (!PyArg_ParseTuple(args, "OOO:matmul_launch", &launch, &index, &shape)) return NULL;
  PyObject* out_shape = PySequence_Tuple(shape);
  if (out_shape == NULL) return NULL;
  PyObject* runner = new_launch(self, MatmulLaunchType, launch, index, 0, out_shape);
  if (runner == NULL) Py_DECREF(out_shape);
  return runner;
}

static PyObject* hot_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* names[] = {
      "empty_like", "current_device",    "raw_stream",      "capturing",    "capture_workspace",
      "on_device",  "strided_attention", "first_attention", "first_matmul", NULL};
  PyObject* hooks[9];
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOOOOOOO:HotPath", names, &hooks[0], &hooks[1],
                                   &hooks[2], &hooks[3], &hooks[4], &hooks[5], &hooks[6], &hooks[7],
                                   &hooks[8])) {
    return NULL;
  }
  allocfunc allocate = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  HotPath* hot = (HotPath*)allocate(type, 0);
  if (hot == NULL) return NULL;
  PyObject** fields[9] = {&hot->empty_like,        &hot->current_device,    &hot->raw_stream,
                          &hot->capturing,         &hot->capture_workspace, &hot->on_device,
                          &hot->strided_attention, &hot->first_attention,   &hot->first_matmul};
  for (int i = 0; i < 9; ++i) *fields[i] = Py_NewRef(hooks[i]);
  hot->attention_runners = PyDict_New();
  hot->matmul_runners = PyDict_New();
  if (hot->attention_runners == NULL || hot->matmul_runners == NULL) {
    Py_DECREF(hot);
    return NULL;
  }
  return (PyObject*)hot;
}

static int hot_traverse(PyObject* self, visitproc visit, void* arg) {
  HotPath* hot = (HotPath*)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(hot->empty_like);
  Py_VISIT(hot->current_device);
  Py_VISIT(hot->raw_stream);
  Py_VISIT(hot->capturing);
  Py_VISIT(hot->capture_workspace);
  Py_VISIT(hot->on_device);
  Py_VISIT(hot->strided_attention);
  Py_VISIT(hot->first_attention);
  Py_VISIT(hot->first_matmul);
  Py_VISIT(hot->attention_runners);
  Py_VISIT(hot->matmul_runners);
  return 0;
}

static int hot_clear(PyObject* self) {
  HotPath* hot = (HotPath*)self;
  Py_CLEAR(hot->empty_like);
  Py_CLEAR(hot->current_device);
  Py_CLEAR(hot->raw_stream);
  Py_CLEAR(hot->capturing);
  Py_CLEAR(hot->capture_workspace);
  Py_CLEAR(hot->on_device);
  Py_CLEAR(hot->strided_attention);
  Py_CLEAR(hot->first_attention);
  Py_CLEAR(hot->first_matmul);
  Py_CLEAR(hot->attention_runners);
  Py_CLEAR(hot->matmul_runners);
  return 0;
}

static void hot_dealloc(PyObject* self) {
  dealloc(self, hot_clear);
}

#define HOT_GETTER(field)                                           \
  static PyObject* hot_get_##field(PyObject* self, void* closure) { \
    (void)closure;                                                  \
    return Py_NewRef(((HotPath*)self)->field);                      \
  }
HOT_GETTER(attention_runners)
HOT_GETTER(matmul_runners)
HOT_GETTER(empty_like)
HOT_GETTER(current_device)
HOT_GETTER(raw_stream)
HOT_GETTER(capturing)
HOT_GETTER(capture_workspace)
HOT_GETTER(on_device)
HOT_GETTER(strided_attention)

static PyObject* hot_get_kind(PyObject* self, void* closure) {
  (void)self;
  (void)closure;
  return PyUnicode_FromString("compiled");
}

static PyGetSetDef hot_getset[] = {
    {"attention_runners", hot_get_attention_runners, NULL, "key -> runner", NULL},
    {"matmul_runners", hot_get_matmul_runners, NULL, "key -> runner", NULL},
    {"empty_like", hot_get_empty_like, NULL, NULL, NULL},
    {"current_device", hot_get_current_device, NULL, NULL, NULL},
    {"raw_stream", hot_get_raw_stream, NULL, NULL, NULL},
    {"capturing", hot_get_capturing, NULL, NULL, NULL},
    {"capture_workspace", hot_get_capture_workspace, NULL, NULL, NULL},
    {"on_device", hot_get_on_device, NULL, NULL, NULL},
    {"strided_attention", hot_get_strided_attention, NULL, NULL, NULL},
    {"kind", hot_get_kind, NULL, "\"compiled\"", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef hot_methods[] = {
    {"attention", (PyCFunction)(void (*)(void))hot_attention, METH_FASTCALL,
     "attention(q, k, v, is_causal, scale, fallback, catalog, enable_gqa) -> out"},
    {"matmul", (PyCFunction)(void (*)(void))hot_matmul, METH_FASTCALL,
     "matmul(a, b, fallback, catalog) -> a @ b"},
    {"attention_launch", hot_attention_launch, METH_VARARGS,
     "attention_launch(launch, device_index, dynamic) -> runner(q, k, v)"},
    {"matmul_launch", hot_matmul_launch, METH_VARARGS,
     "matmul_launch(launch, device_index, out_shape) -> runner(a, b)"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot hot_slots[] = {{Py_tp_new, hot_new},
                                  {Py_tp_traverse, hot_traverse},
                                  {Py_tp_clear, hot_clear},
                                  {Py_tp_dealloc, hot_dealloc},
                                  {Py_tp_methods, hot_methods},
                                  {Py_tp_getset, hot_getset},
                                  {Py_tp_doc, "The hot path in C (swr/_hotpath.py says what)."},
                                  {0, NULL}};

static PyType_Spec hot_spec = {"swr._hotpath_ext.HotPath", sizeof(HotPath), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, hot_slots};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "swr._hotpath_ext",
                                    "swr.torch's eager hot path in C (swr/_hotpath.py).",
                                    -1,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

PyMODINIT_FUNC PyInit__hotpath_ext(void) {
  PyObject** names[] = {&s_shape,    &s_dtype,     &s_device, &s_is_contiguous, &s_contiguous,
                        &s_data_ptr, &s_new_empty, &s_handle, &s_fail,          &s_address};
  const char* texts[] = {"shape",    "dtype",     "device", "is_contiguous", "contiguous",
                         "data_ptr", "new_empty", "handle", "fail",          "address"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    if (*names[i] == NULL && (*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) {
      return NULL;
    }
  }
  PyObject* self = PyModule_Create(&module);
  if (self == NULL) return NULL;
  HotPathType = (PyTypeObject*)PyType_FromSpec(&hot_spec);
  AttentionLaunchType = (PyTypeObject*)PyType_FromSpec(&attention_launch_spec);
  MatmulLaunchType = (PyTypeObject*)PyType_FromSpec(&matmul_launch_spec);
  if (HotPathType == NULL || AttentionLaunchType == NULL || MatmulLaunchType == NULL ||
      PyModule_AddType(self, HotPathType) < 0 || PyModule_AddType(self, AttentionLaunchType) < 0 ||
      PyModule_AddType(self, MatmulLaunchType) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return self;
}
