"""NumPy port of base/random.h: softwire's counter-based random numbers.

Value i of stream `seed` depends only on (seed, i), exactly as in C++, so Python tools can
reproduce a job's initial variables (data/initializer.h) and its micro-batches
(data/text_dataset.h, data/synthetic_dataset.h, data/npy_dataset.h) bit for bit (normal samples to the last bit of
float32; libm and NumPy may differ in the last bit of the float64 before rounding).

    hash_counter(seed, counters)        uint64
    uniform_at(seed, indices)           float64 in [0, 1)
    normal_at(seed, indices)            float64, standard normal (Box-Muller)
    uniform_int_at(seed, indices, n)    int64 in [0, n)
    epoch_permutation(seed, epoch, n)   NpyDataset's shuffled order of [0, n) in an epoch
    npy_samples(seed, shuffle, n, positions)  the samples NpyDataset reads at those positions

Run this file to check the port against values printed by the C++ implementation.
"""

import functools

import numpy as np

_MASK = (1 << 64) - 1


def _splitmix64(value):
    """SplitMix64 finaliser on a uint64 array (wrapping arithmetic, like C++)."""
    with np.errstate(over="ignore"):
        value = value + np.uint64(0x9E3779B97F4A7C15)
        value = (value ^ (value >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        value = (value ^ (value >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return value ^ (value >> np.uint64(31))


def hash_counter(seed, counters):
    """HashCounter(seed, counter) for every counter (any integer array-like)."""
    seed_array = np.asarray([int(seed) & _MASK], dtype=np.uint64)
    counter_array = np.asarray(counters).astype(np.uint64)
    with np.errstate(over="ignore"):
        mixed = _splitmix64(counter_array + np.uint64(0x632BE59BD9B4E019))
    return _splitmix64(_splitmix64(seed_array) ^ mixed)


def uniform_at(seed, indices):
    """UniformAt: 53 random bits scaled into [0, 1)."""
    return (hash_counter(seed, indices) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def normal_at(seed, indices):
    """NormalAt: Box-Muller on the uniforms at 2i and 2i+1."""
    indices = np.asarray(indices).astype(np.uint64)
    with np.errstate(over="ignore"):
        u1 = 1.0 - uniform_at(seed, indices * np.uint64(2))
        u2 = uniform_at(seed, indices * np.uint64(2) + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def uniform_int_at(seed, indices, bound):
    """UniformIntAt: HashCounter modulo bound, in [0, bound)."""
    if bound <= 0:
        raise ValueError("bound must be positive")
    return (hash_counter(seed, indices) % np.uint64(bound)).astype(np.int64)


def epoch_permutation(seed, epoch, count):
    """EpochPermutation (data/npy_dataset.h): a Fisher-Yates shuffle of [0, count) whose swap
    at step i (count-1 down to 1) is with UniformIntAt(HashCounter(seed, epoch), i, i + 1)."""
    return _cached_permutation(int(seed), int(epoch), int(count)).copy()


@functools.lru_cache(maxsize=4)
def _cached_permutation(seed, epoch, count):
    epoch_seed = int(hash_counter(seed, [epoch])[0])
    steps = np.arange(count - 1, 0, -1, dtype=np.uint64)
    partners = (hash_counter(epoch_seed, steps) % (steps + np.uint64(1))).astype(np.int64)
    permutation = list(range(count))
    for i, j in zip(range(count - 1, 0, -1), partners.tolist()):
        permutation[i], permutation[j] = permutation[j], permutation[i]
    return np.array(permutation, dtype=np.int64)


def npy_samples(seed, shuffle, count, positions):
    """The sample indices an NpyDataset of `count` samples reads at the given positions of its
    endless sequence (position = piece * micro_batch_size + index in the micro-batch)."""
    positions = np.asarray(positions, dtype=np.int64)
    samples = positions % count
    if not shuffle:
        return samples
    epochs = positions // count
    for epoch in np.unique(epochs).tolist():
        chosen = epochs == epoch
        samples[chosen] = _cached_permutation(int(seed), epoch, int(count))[samples[chosen]]
    return samples


def initial_value(initializer, shape):
    """The whole initial value of a variable (data/initializer.h) as float32.

    `initializer` is a dict like {"normal": {"mean": 0, "stddev": 0.02, "seed": 3}},
    {"uniform": {"low": -1, "high": 1, "seed": 3}} or {"constant": {"value": 1}}.
    """
    count = int(np.prod(shape, dtype=np.int64))
    indices = np.arange(count, dtype=np.uint64)
    (kind, fields), = initializer.items()
    if kind == "constant":
        values = np.full(count, fields.get("value", 0.0))
    elif kind == "normal":
        values = fields.get("mean", 0.0) + fields.get("stddev", 0.0) * normal_at(
            fields.get("seed", 0), indices)
    elif kind == "uniform":
        low, high = fields.get("low", 0.0), fields.get("high", 0.0)
        values = low + (high - low) * uniform_at(fields.get("seed", 0), indices)
    else:
        raise ValueError("unknown initializer kind " + kind)
    return values.astype(np.float32).reshape(shape)


# Printed by base/random.cc (see the module docstring).
_GOLDEN = {
    "hash_counter": [((0, 0), 17448420733077208847), ((7, 12345), 1051678948631406511),
                     ((_MASK, 3), 16063663271329136195)],
    "uniform_at": [((11, 5), 0.69445696231797027), ((3, 1000000), 0.29769121709063318)],
    "normal_at": [((7, 12345), -0.99019138413499652), ((11, 0), 0.67070767920644725),
                  ((42, 99), -0.33754919035320308)],
    "uniform_int_at": [((17, 8, 192), 77), ((5, 123456789, 1000003), 359809)],
}


def self_test():
    """Raises AssertionError unless the port reproduces the C++ values."""
    functions = {"hash_counter": hash_counter, "uniform_at": uniform_at,
                 "normal_at": normal_at, "uniform_int_at": uniform_int_at}
    for name, cases in _GOLDEN.items():
        for arguments, expected in cases:
            seed, index, *rest = arguments
            got = functions[name](seed, [index], *rest)[0]
            if isinstance(expected, float):
                assert abs(float(got) - expected) <= 1e-15 * max(1.0, abs(expected)), (
                    name, arguments, got, expected)
            else:
                assert int(got) == expected, (name, arguments, int(got), expected)


if __name__ == "__main__":
    self_test()
    print("softwire_random: the NumPy port matches base/random.h")
