#!/usr/bin/env python3
"""Writes the seeds of cluster_ifs_state_fuzzer (tests/fuzz/cluster/seeds/ifs_state_*): a small
scale-out namespace image in the format of cluster/scaleout/ifs_state.cc, and damaged forms.
   make_ifs_seeds.py            (run from anywhere)"""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def s(text):
    b = text.encode()
    return struct.pack("<I", len(b)) + b


def inode(ino, ftype, parent, entries=(), extents=(), target="", size=0, nlink=1):
    out = struct.pack("<QIQ", ino, 1, parent) + s(target) + struct.pack("<Q", 0)
    out += struct.pack("<IIIII", ftype, 0o755 if ftype == 2 else 0o644, nlink, 0, 0)
    out += struct.pack("<QQII", size, (size + 4095) // 4096 * 4096, 0, 0)
    out += struct.pack("<qI", 1700000000, 1) * 3
    out += struct.pack("<Q", 3 + len(entries))
    out += struct.pack("<Q", len(entries))
    for i, (name, child) in enumerate(entries):
        out += struct.pack("<Q", 3 + i) + s(name) + struct.pack("<Q", child)
    out += struct.pack("<Q", len(extents))
    for (group, version, offset, length, n, m, places) in extents:
        out += struct.pack("<QQQQQ", ino, group, version, offset, length)
        out += struct.pack("<IIIB", n, m, 2, 0) + struct.pack("<Q", len(places))
        for node, drive in places:
            out += struct.pack("<II", node, drive)
    return out


def image():
    inodes = [
        inode(1, 2, 1, entries=[("big", 2), ("small", 3), ("link", 4)], nlink=2),
        inode(2, 1, 1, size=786432, extents=[(0, (1 << 63) | (1 << 40) | 1, 0, 786432, 6, 2,
                                               [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)])]),
        inode(3, 1, 1, size=3000, extents=[(0, (1 << 63) | (1 << 40) | 20, 0, 3000, 1, 2,
                                             [(2, 2), (3, 2), (4, 2)])]),
        inode(4, 5, 1, target="big", size=3),
    ]
    head = struct.pack("<QQQIQIQ", 0x3153464953414e31, 5, 42, 1, 40, 0, 3)
    return head + struct.pack("<Q", len(inodes)) + b"".join(inodes)


def write(name, data):
    with open(os.path.join(here, "seeds", name), "wb") as f:
        f.write(data)


good = image()
write("ifs_state_small_namespace", good)
write("ifs_state_truncated", good[: len(good) // 2])
write("ifs_state_huge_count", good[:52] + struct.pack("<Q", 1 << 60) + good[60:])
bad_shape = bytearray(good)
write("ifs_state_wrong_magic", b"\0" * 8 + good[8:])
