#!/usr/bin/python3
"""Prepares the digits demo data: scikit-learn's 8x8 handwritten digits as .npy files.

Usage: demos/digits/prepare.py [DATA_DIR]   (default: demos/digits/data, where digits.pbtxt
                                             looks)

load_digits ships inside python3-sklearn (no download): 1797 images of 8x8 pixels, values
0..16, labels 0..9. Pixels are scaled to [0, 1]. The split is deterministic without any random
generator: every fifth image (index % 5 == 4) is held out for testing.
Writes train_x.npy (float32 [N, 64]), train_y.npy (int32 [N]), test_x.npy, test_y.npy.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        sys.exit(__doc__)
    data_dir = argv[0] if argv else os.path.join(HERE, "data")
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("prepare.py: needs python3-sklearn (scripts/install-deps --with-digits)")
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    test = np.arange(len(y)) % 5 == 4
    os.makedirs(data_dir, exist_ok=True)
    for name, value in (("train_x", x[~test]), ("train_y", y[~test]),
                        ("test_x", x[test]), ("test_y", y[test])):
        np.save(os.path.join(data_dir, name + ".npy"), value)
    print(f"wrote {data_dir}: {int((~test).sum())} training and {int(test.sum())} test images "
          "(8x8 pixels in [0, 1], labels 0-9)")


if __name__ == "__main__":
    main(sys.argv[1:])
