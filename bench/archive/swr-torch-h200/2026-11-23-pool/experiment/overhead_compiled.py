"""EXPERIMENT (issue 15, not in the repository): host time of one swr.torch.attention call with its
eager runner in Python (the branch's code) and in C (fastrun.c, stable ABI), and with the whole
eager path of attention() in C (key, lookup, runner), interleaved, same inputs, at B=16 H=8 S=777
D=64 f16.
    PYTHONPATH=python:experiment python3 experiment/overhead_compiled.py CATALOG OUT.json"""
import ctypes
import functools
import json
import statistics
import sys
import time

import torch
import fastrun
import swr
import swr.torch as entry

catalog = swr.Catalog(sys.argv[1])
calls, repeats = 100, 30
q, k, v = (torch.randn(16, 8, 777, 64, device="cuda", dtype=torch.float16) for _ in range(3))


def call():
    return entry.attention(q, k, v, fallback="error", catalog=catalog)


reference = call()
key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device, v.device, False,
       None, "error", catalog)
python_runner = entry._attention_runners[key]
runner = python_runner.__self__
fastrun.setup(torch.empty_like, entry._current_device, entry._raw_stream, entry._capturing)
address = ctypes.cast(runner.launch.function, ctypes.c_void_p).value
state = (address, runner.launch, runner.device_index, runner.dynamic)
compiled_runner = functools.partial(fastrun.run, state)
fastrun.setup_entry(torch.compiler.is_compiling)
states = {key: state}


def compiled_entry():  # the whole eager path of attention() in C
    return fastrun.attention(states, q, k, v, False, None, "error", catalog)


assert compiled_entry() is not NotImplemented
out = compiled_runner(q, k, v)
assert out is not NotImplemented
torch.cuda.synchronize()
same = torch.equal(out, reference)


def host_seconds(run):
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        run()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def with_runner(runner_function):
    def run():
        entry._attention_runners[key] = runner_function
        return host_seconds(call)
    return run


timed = {"host_python_runner_us": with_runner(python_runner),
         "host_compiled_runner_us": with_runner(compiled_runner),
         "host_compiled_entry_us": lambda: host_seconds(compiled_entry),
         "python_runner_alone_us": lambda: host_seconds(lambda: python_runner(q, k, v)),
         "compiled_runner_alone_us": lambda: host_seconds(lambda: compiled_runner(q, k, v))}
samples = {name: [] for name in timed}
for _ in range(repeats):
    for name, measure in timed.items():
        samples[name].append(measure())
entry._attention_runners[key] = python_runner
document = {name: statistics.median(values) for name, values in samples.items()}
document["compiled_output_equals_python_output"] = same
document["python"] = sys.version.split()[0]
text = json.dumps(document, indent=2)
print(text)
with open(sys.argv[2], "w") as f:
    f.write(text + "\n")
