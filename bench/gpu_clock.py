"""The SM clock and board power of the GPU while a benchmark runs, sampled by nvidia-smi every
200 ms: a power-capped GPU clocks down under full load, and an MFU against the peak at the boost
clock should say at which clock it was measured (docs/benchmarks.md §2, and its git history)."""
import shutil
import statistics
import subprocess
import tempfile

QUERY = "clocks.sm,power.draw,utilization.gpu"
BUSY_PERCENT = 90  # samples in which a kernel ran at least this share of the time


def busy_medians(lines):
    """(median SM MHz, median board W) over the busy samples of nvidia-smi's CSV lines
    (QUERY, noheader, nounits); (None, None) when no sample was busy or none could be read."""
    clocks, watts = [], []
    for line in lines:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 3:
            continue
        try:
            clock, power, busy = float(fields[0]), float(fields[1]), float(fields[2])
        except ValueError:  # "[N/A]" and the like
            continue
        if busy >= BUSY_PERCENT:
            clocks.append(clock)
            watts.append(power)
    if not clocks:
        return None, None
    return statistics.median(clocks), statistics.median(watts)


class ClockSampler:
    """`with ClockSampler(gpu) as s: ...` samples while the block runs; afterwards s.sm_clock_mhz
    and s.power_w are the busy samples' medians, None without nvidia-smi or busy samples."""

    def __init__(self, gpu=0):
        self.gpu = gpu
        self.sm_clock_mhz = self.power_w = None

    def __enter__(self):
        self._out = tempfile.TemporaryFile(mode="w+")
        self._smi = None
        if shutil.which("nvidia-smi"):
            self._smi = subprocess.Popen(
                ["nvidia-smi", "-i", str(self.gpu), f"--query-gpu={QUERY}",
                 "--format=csv,noheader,nounits", "-lms", "200"],
                stdout=self._out, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        if self._smi:
            self._smi.terminate()
            self._smi.wait()
            self._out.seek(0)
            self.sm_clock_mhz, self.power_w = busy_medians(self._out.read().splitlines())
        self._out.close()
        return False
