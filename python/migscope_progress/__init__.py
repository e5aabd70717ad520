# Reports a training job's steps to migscope over the pipe that MIGSCOPE_PROGRESS_FD names.
"""Tell migscope how far a training job is, one line per finished step.

Under migscope, MIGSCOPE_PROGRESS_FD names the write end of a pipe; each step() writes one
JSON line on it: {"event":"step","items":N,"step_time_s":S,"item_unit":"images"} (the first
call only starts the clock: the first step is a warm-up).
Without the variable, step() returns at once. If the variable names no pipe, or a write fails
(migscope went away), reporting stops after one warning on stderr; step() never raises for that.
"""
import json
import os
import stat
import sys
import time

__all__ = ["step", "active"]
__version__ = "0.1.0"

_fd = None  # the pipe's write end; None when not reporting
_last = None  # time.perf_counter() at the previous step() call
_unit_fields = {None: ""}  # item_unit -> its JSON field, escaped once


def _disable(reason):
    global _fd
    _fd = None
    print(f"migscope_progress: {reason}; not reporting progress", file=sys.stderr)


def _open():
    global _fd
    value = os.environ.get("MIGSCOPE_PROGRESS_FD")
    if value is None:
        return
    try:
        # A pipe only: in a child that inherited the variable but not the pipe, the same fd
        # number may be some unrelated file.
        fd = int(value)
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            _fd = fd
            return
    except (ValueError, OSError):
        pass
    _disable(f"MIGSCOPE_PROGRESS_FD={value!r} is not an open pipe")


def active():
    """True while steps are being reported to migscope."""
    return _fd is not None


def step(items, item_unit=None):
    """Report one finished training step of `items` items (images, tokens, ...).

    Each step's time is measured from the previous call. The first call only starts that clock:
    the first step (CUDA and cuDNN warming up) is a warm-up and is not reported, so that the
    throughput is that of the steps after it. `item_unit` names what is counted; migscope takes
    the first one it sees ("items" if none).
    """
    global _last
    if _fd is None:
        return
    now = time.perf_counter()
    if _last is None:
        _last = now
        return
    unit = _unit_fields.get(item_unit)
    if unit is None:
        unit = _unit_fields[item_unit] = f',"item_unit":{json.dumps(str(item_unit))}'
    count = items if type(items) is int else float(items)
    line = f'{{"event":"step","items":{count},"step_time_s":{now - _last:.9g}{unit}}}\n'
    _last = now
    try:
        os.write(_fd, line.encode())
    except OSError as e:
        _disable(f"writing to fd {_fd} failed ({e.strerror})")


_open()
