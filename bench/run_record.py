"""What a result needs to be reproduced (the TiledAttention paper's checklist, Table 3): the GPU,
driver, CUDA, PyTorch, cuDNN and FlashAttention versions, swr's commit, and the exact command.
Anything that cannot be read is recorded as "unknown", never guessed.
"""
import datetime
import os
import platform
import shlex
import subprocess
import sys


def _output(command, cwd=None):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=cwd)
        return done.stdout.strip() if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _package_version(*names):
    from importlib import metadata

    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def swr_source(repository, swr_tune):
    commit = _output(["git", "rev-parse", "HEAD"], cwd=repository)
    status = _output(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repository)
    return {"commit": commit or "unknown (no git checkout)",
            "tracked_files_modified": bool(status) if status is not None else "unknown",
            "swr_tune_version": _output([swr_tune, "--version"]) or "unknown"}


def software_record(torch=None):
    """Versions of everything that runs a kernel; torch-dependent fields only when given torch."""
    record = {"python": platform.python_version(), "platform": platform.platform(),
              "host": platform.node(),
              "flash_attn_package": _package_version("flash-attn", "flash_attn") or "not installed"}
    smi = _output(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    record["nvidia_smi"] = smi or "unknown (nvidia-smi not available)"
    record["driver"] = smi.splitlines()[0].split(",")[-1].strip() if smi else "unknown"
    if torch is not None:
        properties = torch.cuda.get_device_properties(0)
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        record.update({
            "gpu": properties.name,
            "gpu_sm_count": properties.multi_processor_count,
            "gpu_l2_bytes": getattr(properties, "L2_cache_size", None),
            "gpu_compute_capability": f"{properties.major}.{properties.minor}",
            "gpu_memory_bytes": properties.total_memory,
            "torch": torch.__version__,
            "cuda_runtime_of_torch": torch.version.cuda or "unknown",
            "cudnn": str(cudnn) if cudnn else "not available",
        })
    return record


def command_record(script, arguments):
    """The command as typed: `python3 SCRIPT ARGUMENTS...`, with the directory it ran in."""
    return {"command": shlex.join([os.path.basename(sys.executable), script] + list(arguments)),
            "working_directory": os.getcwd(), "started_at": utc_now()}
