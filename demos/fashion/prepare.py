#!/usr/bin/python3
"""Prepares the fashion demo data: Fashion-MNIST's idx files as normalised .npy arrays.

Usage: demos/fashion/prepare.py [--source /usr/share/datasets/fashion-mnist]
                                [--output demos/fashion/data]

Reads the four idx files Debian's dataset-fashion-mnist package installs
(train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz,
t10k-labels-idx1-ubyte.gz; uncompressed copies without the .gz are read too): 60,000 training
and 10,000 test images of 28x28 grey pixels, labels 0-9 (T-shirt/top, Trouser, Pullover, Dress,
Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot). Pixels are scaled to [0, 1], then standardised
with the training images' mean and standard deviation (one of each for all pixels), so the
network's first convolution sees inputs of mean 0 and variance 1.
Writes train_x.npy (float32 [60000, 1, 28, 28], NCHW with one channel), train_y.npy (int32
[60000]), test_x.npy, test_y.npy (the 10,000 test images) and normalisation.json (the mean and
standard deviation used). Needs only numpy (`scripts/install-deps --with-fashion` installs the
data package).
"""

import argparse
import gzip
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = "/usr/share/datasets/fashion-mnist"
# idx magic numbers: two zero bytes, the element type (0x08: unsigned byte), the rank.
IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801
FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
         "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot")


def read_idx(path):
    """The uint8 array an idx file holds (gzip-compressed when the name ends in .gz).

    The format: a big-endian int32 magic 0x000008RR (unsigned bytes, rank RR), RR big-endian
    int32 extents, then the elements in row-major order. Raises ValueError on another element
    type, a rank above 4, or a length that does not match the header.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as stream:
        data = stream.read()
    if len(data) < 4:
        raise ValueError(f"{path}: {len(data)} bytes, too short for an idx header")
    magic = int.from_bytes(data[:4], "big")
    if magic >> 8 != 0x08:
        raise ValueError(f"{path}: magic {magic:#010x} is not an idx file of unsigned bytes "
                         "(0x000008RR)")
    rank = magic & 0xFF
    if not 1 <= rank <= 4:
        raise ValueError(f"{path}: rank {rank} (1 to 4 expected)")
    header = 4 + 4 * rank
    if len(data) < header:
        raise ValueError(f"{path}: {len(data)} bytes, too short for a rank-{rank} header")
    shape = tuple(int(v) for v in np.frombuffer(data, dtype=">i4", count=rank, offset=4))
    expected = header + int(np.prod(shape, dtype=np.int64))
    if len(data) != expected:
        raise ValueError(f"{path}: {len(data)} bytes, the header {shape} says {expected}")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def find(source, name):
    """source/name.gz or source/name, whichever exists."""
    for candidate in (name + ".gz", name):
        path = os.path.join(source, candidate)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{os.path.join(source, name)}(.gz) not found: install Debian's "
                            "dataset-fashion-mnist (scripts/install-deps --with-fashion)")


def read_split(source, split):
    """(images uint8 [N, 28, 28], labels uint8 [N]) of "train" or "test"."""
    images_name, labels_name = FILES[split]
    images_path, labels_path = find(source, images_name), find(source, labels_name)
    images, labels = read_idx(images_path), read_idx(labels_path)
    if images.ndim != 3:
        raise ValueError(f"{images_path}: rank {images.ndim}, images have rank 3 [N, H, W]")
    if labels.ndim != 1 or len(labels) != len(images):
        raise ValueError(f"{labels_path}: shape {labels.shape} for {len(images)} images")
    if labels.size and labels.max() >= len(CLASSES):
        raise ValueError(f"{labels_path}: label {labels.max()} (0-9 expected)")
    return images, labels


def prepare(source, output):
    """Writes the .npy files into `output`; returns (train count, test count, mean, std)."""
    train_images, train_labels = read_split(source, "train")
    test_images, test_labels = read_split(source, "test")
    scaled = train_images.astype(np.float64) / 255.0
    mean, std = float(scaled.mean()), float(scaled.std())

    def standardise(images):
        x = (images.astype(np.float64) / 255.0 - mean) / std
        return x.astype(np.float32)[:, None, :, :]

    os.makedirs(output, exist_ok=True)
    arrays = (("train_x", standardise(train_images)),
              ("train_y", train_labels.astype(np.int32)),
              ("test_x", standardise(test_images)),
              ("test_y", test_labels.astype(np.int32)))
    for name, value in arrays:
        np.save(os.path.join(output, name + ".npy"), value)
    with open(os.path.join(output, "normalisation.json"), "w") as stream:
        json.dump({"mean": mean, "std": std, "source": source}, stream)
        stream.write("\n")
    return len(train_labels), len(test_labels), mean, std


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default=DEFAULT_SOURCE,
                        help="folder of the idx files (default: %(default)s)")
    parser.add_argument("--output", default=os.path.join(HERE, "data"))
    arguments = parser.parse_args(argv)
    try:
        train, test, mean, std = prepare(arguments.source, arguments.output)
    except (FileNotFoundError, ValueError) as error:
        sys.exit(f"prepare.py: {error}")
    print(f"wrote {arguments.output}: {train} training and {test} test images (28x28, "
          f"standardised with mean {mean:.4f}, std {std:.4f}; labels 0-9)")


if __name__ == "__main__":
    main(sys.argv[1:])
