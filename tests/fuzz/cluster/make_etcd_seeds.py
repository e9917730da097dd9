#!/usr/bin/env python3
"""Writes the seeds of cluster_etcd_reply_fuzzer (tests/fuzz/cluster/seeds/etcd_*): the
replies etcd 3.4's JSON gateway sends for the etcd lease authority's calls, and hostile ones.
The first byte picks the decoder (see etcd_reply_fuzzer.cc).   make_etcd_seeds.py"""
import os

here = os.path.dirname(os.path.abspath(__file__))
H = '"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"%s","raft_term":"2"}'
KV = ('{"key":"L25hc2QveC92b2x1bWUtMA==","create_revision":"2","mod_revision":"2","version":"1",'
      '"value":"bm9kZUE=","lease":"7668682642380158472"}')
seeds = {
    "etcd_range_found": (0, '{%s,"kvs":[%s],"count":"1"}' % (H % 2, KV)),
    "etcd_range_empty": (0, '{%s}' % (H % 3)),
    "etcd_range_two_keys": (0, '{%s,"kvs":[%s,%s],"count":"2"}' % (H % 2, KV, KV)),
    "etcd_range_bad_base64": (0, '{%s,"kvs":[{"key":"!!!","create_revision":"2","mod_revision":"2"}]}' % (H % 2)),
    "etcd_range_huge_revision": (0, '{%s,"kvs":[{"create_revision":"99999999999999999999"}]}' % (H % 2)),
    "etcd_range_deep": (0, '{"a":' * 40 + '1' + '}' * 40),
    "etcd_txn_created": (1, '{%s,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"2"}}}]}' % (H % 2)),
    "etcd_txn_lost": (1, '{%s,"responses":[{"response_range":{"header":{"revision":"2"},"kvs":[%s],"count":"1"}}]}' % (H % 2, KV)),
    "etcd_txn_two_ranges": (1, '{%s,"responses":[{"response_range":{"kvs":[%s]}},{"response_range":{"kvs":[%s]}}]}' % (H % 2, KV, KV)),
    "etcd_grant": (2, '{%s,"ID":"7668682642380158470","TTL":"2"}' % (H % 1)),
    "etcd_grant_error": (2, '{%s,"ID":"1","TTL":"2","error":"too many leases"}' % (H % 1)),
    "etcd_keepalive": (3, '{"result":{%s,"ID":"7668682642380158472","TTL":"2"}}' % (H % 2)),
    "etcd_keepalive_expired": (3, '{"result":{%s,"ID":"7668682642380158472"}}' % (H % 3)),
    "etcd_keepalive_error": (3, '{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","code":14}}'),
    "etcd_timetolive": (4, '{%s,"ID":"7668682642380158472","TTL":"1","grantedTTL":"2"}' % (H % 2)),
    "etcd_error_not_found": (5, '{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}'),
    "etcd_error_bad_code": (5, '{"error":"x","message":"x","code":99}'),
    "etcd_base64": (6, 'bm9kZUE='),
    "etcd_base64_bad_padding": (6, 'bm9k=UE='),
    "etcd_base64_noncanonical": (6, 'b9kmZUC='),
}
d = os.path.join(here, "seeds")
os.makedirs(d, exist_ok=True)
for name, (kind, body) in seeds.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([kind]) + body.encode())
