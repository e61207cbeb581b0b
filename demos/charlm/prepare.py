#!/usr/bin/python3
"""Prepares the charlm corpus: the Debian license texts, concatenated in a fixed order.

Usage: demos/charlm/prepare.py [--output demos/charlm/data/licenses.txt]
                               [--licenses-dir /usr/share/common-licenses]

Every Debian 12 system ships these files (package base-files), so the corpus is the same
~237 KB everywhere and nothing is downloaded. The job trains on the first 90% of the bytes
(TextDataset.train_fraction) and evaluate.py measures the loss on the last 10%, which is the
MPL-2.0 text and the end of Apache-2.0: text the model never trained on.
"""

import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Symbolic links (GPL, LGPL, GFDL) are left out: they repeat GPL-3, LGPL-3 and GFDL-1.3.
LICENSES = [
    "GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "LGPL-3", "GFDL-1.2", "GFDL-1.3",
    "Artistic", "BSD", "CC0-1.0", "MPL-1.1", "Apache-2.0", "MPL-2.0",
]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=os.path.join(HERE, "data", "licenses.txt"))
    parser.add_argument("--licenses-dir", default="/usr/share/common-licenses")
    arguments = parser.parse_args(argv)

    missing = [name for name in LICENSES
               if not os.path.isfile(os.path.join(arguments.licenses_dir, name))]
    if missing:
        sys.exit(f"prepare.py: missing in {arguments.licenses_dir}: {', '.join(missing)} "
                 "(Debian's base-files package installs them)")
    corpus = b"".join(open(os.path.join(arguments.licenses_dir, name), "rb").read()
                      for name in LICENSES)
    os.makedirs(os.path.dirname(os.path.abspath(arguments.output)), exist_ok=True)
    temporary = arguments.output + ".tmp"
    with open(temporary, "wb") as output:
        output.write(corpus)
    os.replace(temporary, arguments.output)
    digest = hashlib.sha256(corpus).hexdigest()[:16]
    print(f"wrote {arguments.output}: {len(corpus)} bytes from {len(LICENSES)} license texts "
          f"(sha256 {digest}...)")


if __name__ == "__main__":
    main(sys.argv[1:])
