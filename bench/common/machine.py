"""What a benchmark prints about the machine it ran on: the CPU model and the load."""

import os
import platform


def cpu_model():
    """The CPU's model name from /proc/cpuinfo ("AMD EPYC 9R14 ...")."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    """The 1-minute load average, or -1 where the system does not say."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return -1.0
