#!/usr/bin/env python3
"""Writes the seed inputs for rpc_record_call_fuzzer into seeds/.

Each seed is one byte choosing the recv() chunk size, then a TCP byte stream of
record-marked RPC calls: valid calls with AUTH_NONE and AUTH_SYS, split fragments,
pipelined records, and the rejections (RPC version 3, RPCSEC_GSS, oversized credential).
"""
import os
import struct

def u32(*vals):
    return b"".join(struct.pack(">I", v) for v in vals)

def opaque(b):
    return u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)

def call(xid, prog=100003, vers=3, proc=0, flavor=0, cred=b"", args=b"", rpcvers=2):
    return u32(xid, 0, rpcvers, prog, vers, proc, flavor) + opaque(cred) + u32(0, 0) + args

def record(msg, cuts=()):
    out, pos = b"", 0
    for n in cuts:
        out += u32(n) + msg[pos:pos + n]
        pos += n
    return out + u32(0x80000000 | (len(msg) - pos)) + msg[pos:]

auth_sys = u32(7) + opaque(b"fuzzhost") + u32(1000, 1000, 2, 10, 20)
seeds = {
    "null_auth_none": bytes([255]) + record(call(1)),
    "auth_sys_fragments": bytes([3]) + record(call(2, proc=1, flavor=1, cred=auth_sys,
                                                  args=opaque(b"handle")), cuts=(5, 11, 0)),
    "pipelined": bytes([17]) + b"".join(record(call(x, proc=x % 22)) for x in range(8)),
    "rpc_v3": bytes([255]) + record(call(3, rpcvers=3)),
    "rpcsec_gss": bytes([255]) + record(call(4, flavor=6, cred=u32(1, 0, 0) + opaque(b""))),
    "oversized_cred": bytes([255]) + record(call(5, flavor=1, cred=b"x" * 404)),
    "too_many_gids": bytes([64]) + record(call(6, flavor=1, cred=u32(1) + opaque(b"h") +
                                               u32(0, 0, 17) + u32(*range(17)))),
    "short_header": bytes([1]) + record(u32(9, 0, 2)),
}
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
os.makedirs(here, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
