/* EXPERIMENT (issue 15, not in the repository): swr.torch's eager runner (_SwrAttention.run) in C
   over the stable ABI, to measure what a compiled hot path would save over the Python one. It
   does what run() does, through the same torch callables, and calls swr_launch_attention through
   its address; anything unusual (another device current, non-contiguous inputs, a capture with a
   dynamic-persistence kernel) returns NotImplemented and the Python runner takes over. */
#define Py_LIMITED_API 0x030B0000
#include <Python.h>
#include <stdint.h>

typedef int (*launch_fn)(const void*, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint32_t,
                         uintptr_t);

static PyObject *empty_like, *current_device, *raw_stream, *capturing;
static PyObject *s_is_contiguous, *s_data_ptr, *s_handle, *s_fail;

static PyObject* setup(PyObject* self, PyObject* args) {
  (void)self;
  if (!PyArg_ParseTuple(args, "OOOO", &empty_like, &current_device, &raw_stream, &capturing))
    return NULL;
  Py_INCREF(empty_like);
  Py_INCREF(current_device);
  Py_INCREF(raw_stream);
  Py_INCREF(capturing);
  Py_RETURN_NONE;
}

static int pointer_of(PyObject* tensor, uint64_t* pointer) {
  PyObject* value = PyObject_CallMethodObjArgs(tensor, s_data_ptr, NULL);
  if (value == NULL) return -1;
  *pointer = PyLong_AsUnsignedLongLong(value);
  Py_DECREF(value);
  return PyErr_Occurred() ? -1 : 0;
}

static int true_call(PyObject* callable, PyObject* object, PyObject* name) {
  PyObject* value = name ? PyObject_CallMethodObjArgs(object, name, NULL)
                         : PyObject_CallFunctionObjArgs(callable, NULL);
  if (value == NULL) return -1;
  int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

/* run(state, q, k, v): state = (function address, Launch, device index, dynamic) */
static PyObject* run(PyObject* self, PyObject* args) {
  (void)self;
  PyObject *state, *q, *k, *v;
  if (!PyArg_ParseTuple(args, "OOOO", &state, &q, &k, &v)) return NULL;
  PyObject* address = PyTuple_GetItem(state, 0);
  PyObject* launch = PyTuple_GetItem(state, 1);
  PyObject* index = PyTuple_GetItem(state, 2);
  PyObject* dynamic = PyTuple_GetItem(state, 3);
  if (!address || !launch || !index || !dynamic) return NULL;
  PyObject* current = PyObject_CallFunctionObjArgs(current_device, NULL);
  if (current == NULL) return NULL;
  int same = PyObject_RichCompareBool(current, index, Py_EQ);
  Py_DECREF(current);
  if (same != 1) {
    if (same < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* tensors[3] = {q, k, v};
  for (int i = 0; i < 3; ++i) {
    int contiguous = true_call(NULL, tensors[i], s_is_contiguous);
    if (contiguous < 0) return NULL;
    if (!contiguous) Py_RETURN_NOTIMPLEMENTED;
  }
  if (PyObject_IsTrue(dynamic)) {
    int captured = true_call(capturing, NULL, NULL);
    if (captured < 0) return NULL;
    if (captured) Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* out = PyObject_CallFunctionObjArgs(empty_like, q, NULL);
  if (out == NULL) return NULL;
  uint64_t qp, kp, vp, op;
  if (pointer_of(q, &qp) || pointer_of(k, &kp) || pointer_of(v, &vp) || pointer_of(out, &op)) {
    Py_DECREF(out);
    return NULL;
  }
  PyObject* handle = PyObject_GetAttr(launch, s_handle);
  PyObject* stream = PyObject_CallFunctionObjArgs(raw_stream, index, NULL);
  if (handle == NULL || stream == NULL) {
    Py_XDECREF(handle);
    Py_XDECREF(stream);
    Py_DECREF(out);
    return NULL;
  }
  const void* prepared = handle == Py_None ? NULL : PyLong_AsVoidPtr(handle);
  uintptr_t stream_value = (uintptr_t)PyLong_AsUnsignedLongLong(stream);
  launch_fn function = (launch_fn)PyLong_AsVoidPtr(address);
  Py_DECREF(handle);
  Py_DECREF(stream);
  if (PyErr_Occurred()) {
    Py_DECREF(out);
    return NULL;
  }
  int status = function(prepared, qp, kp, vp, op, 0, 0, stream_value);
  if (status) {
    PyObject* failed = PyObject_CallMethod(launch, "fail", "i", status); /* raises */
    Py_XDECREF(failed);
    Py_DECREF(out);
    return NULL;
  }
  return out;
}

static PyObject *is_compiling, *s_shape, *s_dtype, *s_device;

static PyObject* setup_entry(PyObject* self, PyObject* args) {
  (void)self;
  if (!PyArg_ParseTuple(args, "O", &is_compiling)) return NULL;
  Py_INCREF(is_compiling);
  Py_RETURN_NONE;
}

/* attention(states, q, k, v, is_causal, scale, fallback, catalog): swr.torch.attention's eager
   path whole (is_compiling, the key as swr.torch builds it, the lookup, run) for a call whose
   state `states` holds; NotImplemented otherwise. */
static PyObject* attention(PyObject* self, PyObject* args) {
  PyObject *states, *q, *k, *v, *is_causal, *scale, *fallback, *catalog;
  if (!PyArg_ParseTuple(args, "OOOOOOOO", &states, &q, &k, &v, &is_causal, &scale, &fallback,
                        &catalog))
    return NULL;
  int compiling = true_call(is_compiling, NULL, NULL);
  if (compiling != 0) {
    if (compiling < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* key = PyTuple_New(13);
  if (key == NULL) return NULL;
  PyObject* names[3] = {s_shape, s_dtype, s_device};
  PyObject* tensors[3] = {q, k, v};
  for (int n = 0; n < 3; ++n) {
    for (int t = 0; t < 3; ++t) {
      PyObject* value = PyObject_GetAttr(tensors[t], names[n]);
      if (value == NULL) {
        Py_DECREF(key);
        return NULL;
      }
      PyTuple_SetItem(key, n * 3 + t, value);
    }
  }
  PyObject* rest[4] = {is_causal, scale, fallback, catalog};
  for (int i = 0; i < 4; ++i) {
    Py_INCREF(rest[i]);
    PyTuple_SetItem(key, 9 + i, rest[i]);
  }
  PyObject* state = PyDict_GetItemWithError(states, key);
  Py_DECREF(key);
  if (state == NULL) {
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject* run_args = Py_BuildValue("(OOOO)", state, q, k, v);
  if (run_args == NULL) return NULL;
  PyObject* out = run(self, run_args);
  Py_DECREF(run_args);
  return out;
}

static PyMethodDef methods[] = {
    {"setup_entry", setup_entry, METH_VARARGS, "setup_entry(is_compiling)"},
    {"attention", attention, METH_VARARGS,
     "attention(states, q, k, v, is_causal, scale, fallback, catalog)"},
    {"setup", setup, METH_VARARGS, "setup(empty_like, current_device, raw_stream, capturing)"},
    {"run", run, METH_VARARGS, "run(state, q, k, v)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fastrun", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_fastrun(void) {
  s_is_contiguous = PyUnicode_InternFromString("is_contiguous");
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_handle = PyUnicode_InternFromString("handle");
  s_fail = PyUnicode_InternFromString("fail");
  s_shape = PyUnicode_InternFromString("shape");
  s_dtype = PyUnicode_InternFromString("dtype");
  s_device = PyUnicode_InternFromString("device");
  return PyModule_Create(&module);
}
