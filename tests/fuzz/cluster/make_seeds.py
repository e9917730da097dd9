#!/usr/bin/env python3
"""Writes the seeds of cluster_link_frames_fuzzer (tests/fuzz/cluster/seeds) and
nvram_mirror_protocol_fuzzer (tests/fuzz/nvram/seeds): valid and hostile examples of each path.
   make_seeds.py            (run from anywhere)"""
import importlib.util
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "attacks", os.path.join(here, "..", "..", "e2e", "cluster_link_attacks.py"))
a = importlib.util.module_from_spec(spec)
spec.loader.exec_module(a)


def write(room, name, data):
    d = os.path.join(here, "..", room, "seeds")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def link_hello(name, kind=1):
    return b"NSLK" + bytes([1, kind, len(name), 0]) + name.encode() + bytes(range(32))


def chunks(*frames):
    return b"".join(struct.pack("<H", len(f)) + f for f in frames)


# cluster: 0 server handshake, 1 client handshake, 2 sealed frames, 3 unsealed frames
write("cluster", "link_server_handshake", b"\x00" + link_hello("node-a") + bytes(32))
write("cluster", "link_server_handshake_mirror_kind", b"\x00" + link_hello("node-a", 2) + bytes(32))
write("cluster", "link_client_handshake", b"\x01" + bytes(64))
hello = a.ic_frame(a.HELLO, 1, a.hello_payload("lab", "node-a"))
heartbeat = a.ic_frame(a.HEARTBEAT, 2, a.heartbeat_payload("node-a", [0, 1]))
call = a.ic_frame(a.VOLUME_CALL, 3, bytes(24))
write("cluster", "link_sealed_hello_heartbeat_call", b"\x02" + chunks(hello, heartbeat, call))
write("cluster", "link_sealed_huge_heartbeat",
      b"\x02" + chunks(a.ic_frame(a.HEARTBEAT, 2, b"\x01\x01\x00\x00\x00b" + bytes(16) + b"\xff\xff\xff\xff")))
write("cluster", "link_forged_tags", b"\x03" + hello + bytes(32) + heartbeat + bytes(32))

# nvram: first byte 0 = unsealed frames, 1 = frames must carry tags
log = 64 * 1024
rec0 = a.record(0, b"\x11" * 100)
end0 = (40 + 100 + 7) & ~7
rec1 = a.record(end0, b"\x22" * 60, seq=2)
good = (a.m_hello(1, log, 0, 0) + a.m_frame(a.M_RECORDS, rec0 + rec1) +
        a.m_frame(4, struct.pack("<Q", end0)))
write("nvram", "mirror_hello_records_trim", b"\x00" + good)
write("nvram", "mirror_huge_hello", b"\x00" + a.m_hello(2, 1 << 62, 0, 0))
write("nvram", "mirror_new_uuid_twice", b"\x00" + a.m_hello(3, log, 0, 0) + a.m_hello(4, log, 0, 0))
write("nvram", "mirror_record_at_tail_past_end",
      b"\x00" + a.m_hello(5, 4096, 4088, 4088) + a.m_frame(a.M_RECORDS, a.record(4088, b"\xab" * 4000)))
write("nvram", "mirror_records_before_hello", b"\x00" + a.m_frame(a.M_RECORDS, rec0))
write("nvram", "mirror_sealed_forged_tag", b"\x01" + a.m_hello(1, log, 0, 0) + bytes(32))
