#!/usr/bin/env python3
"""What an attacker on the network sends to a nasd pair's cluster ports, without the cluster key.

   cluster_link_attacks.py interconnect HOST:PORT CLUSTER PEER   forged hellos, a forged call
   cluster_link_attacks.py heartbeats HOST:PORT CLUSTER PEER VOLUME SECONDS
                                                                forged heartbeats "from" PEER
   cluster_link_attacks.py mirror HOST:PORT [huge,uuid,oob]      huge hello, new uuid, record
                                                                 copied past the log's end
   cluster_link_attacks.py flood SOURCE SECONDS COUNT HOST:PORT...
                                                                from the address SOURCE, keeps
                                                                COUNT silent connections open to
                                                                each port (reopened as they
                                                                close): the handshake slots

Each attack speaks the protocol exactly as the nodes did before the links were authenticated.
An attack "got in" when the port answers anything but a silent close; every attack that got in
is printed as "GOT IN: ..." and makes the exit status 1. Exit 0: every attack was shut out.
"""
import signal
import socket
import struct
import sys
import time

# CRC-32C (Castagnoli, reflected), as nvram/crc32c and the interconnect frames use it.
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# --- interconnect (cluster/interconnect/frame.h, hello.h, membership/heartbeat.h) ---
HELLO, VOLUME_CALL, HEARTBEAT = 1, 16, 17


def _reflect32(x):
    return int("{:032b}".format(x)[::-1], 2)


def ic_frame(mtype, rid, payload, version=2):
    # The frame CRC chains the header's CRC-32C into the payload's through boost::crc_optimal,
    # which takes its initial remainder bit-reflected: reproduced here as the nodes compute it.
    head = struct.pack("<IHHQI", 0x4349534E, version, mtype, rid, len(payload))
    reg = _reflect32(crc32c(head) ^ 0xFFFFFFFF)
    for b in payload:
        reg = _TABLE[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return head + struct.pack("<I", reg ^ 0xFFFFFFFF) + payload


def wire_string(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def hello_payload(cluster, node, channel="main", incarnation=7, generation=1):
    # Protocol version 2: the hello names the connection's session (cluster/interconnect/hello.h).
    return (struct.pack("<H", 2) + wire_string(cluster) + wire_string(node) + wire_string(channel) +
            struct.pack("<QQ", incarnation, generation))


def heartbeat_payload(node, volumes):
    return (struct.pack("<B", 1) + wire_string(node) + struct.pack("<QQI", 1, 1, len(volumes)) +
            b"".join(struct.pack("<I", v) for v in volumes) + b"\x00")


def connect(address):
    host, port = address.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def answer_of(s, wait=3.0):
    """Bytes the peer sends before it closes or `wait` seconds pass; None when it never closed."""
    s.settimeout(wait)
    got = b""
    deadline = time.time() + wait
    try:
        while time.time() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk
    except socket.timeout:
        return None if not got else got
    except (ConnectionResetError, BrokenPipeError):
        return got
    return None if not got else got


failures = []


def got_in(what):
    print("GOT IN: " + what, flush=True)
    failures.append(what)


def shut_out(what):
    print("shut out: " + what, flush=True)


def judge(what, answer, secret_words=()):
    if answer is None:
        got_in(what + ": the connection was held open without a word (it is not refused)")
    elif answer:
        leaked = [w for w in secret_words if w.encode() in answer]
        got_in(what + ": answered %d bytes%s" % (len(answer),
               " naming " + ", ".join(leaked) if leaked else ""))
    else:
        shut_out(what)


def interconnect(address, cluster, peer):
    # A hello naming the right cluster and peer, as the real peer's was.
    s = connect(address)
    s.sendall(ic_frame(HELLO, 0, hello_payload(cluster, peer)))
    judge("interconnect hello as '%s' without the key" % peer, answer_of(s), [cluster])
    s.close()
    # A hello of a wrong cluster: the refusal once told the cluster's name.
    s = connect(address)
    s.sendall(ic_frame(HELLO, 0, hello_payload("guess", "intruder")))
    judge("interconnect hello of another cluster", answer_of(s), [cluster])
    s.close()
    # The hello, then at once a forged heartbeat and a forged volume call with no key.
    s = connect(address)
    s.sendall(ic_frame(HELLO, 0, hello_payload(cluster, peer)) +
              ic_frame(HEARTBEAT, 1, heartbeat_payload(peer, [])) +
              ic_frame(VOLUME_CALL, 2, b"\x00" * 16))
    judge("forged heartbeat and volume call after a forged hello", answer_of(s), [cluster])
    s.close()


def heartbeats(address, cluster, peer, volume, seconds):
    """Keeps a killed `peer` 'alive': a heartbeat every 100 ms that says it holds `volume`."""
    answered = 0
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            s = connect(address)
            s.sendall(ic_frame(HELLO, 0, hello_payload(cluster, peer)))
            rid = 1
            s.settimeout(0.5)
            while time.time() < deadline:
                s.sendall(ic_frame(HEARTBEAT, rid, heartbeat_payload(peer, [volume])))
                rid += 1
                try:
                    data = s.recv(65536)
                except socket.timeout:
                    data = b"?"
                if not data:
                    break
                if data != b"?":
                    answered += 1
                time.sleep(0.1)
            s.close()
        except OSError:
            pass
        time.sleep(0.1)
    if answered:
        got_in("forged heartbeats as '%s': %d answered" % (peer, answered))
    else:
        shut_out("forged heartbeats as '%s'" % peer)


# --- NVRAM mirror (nvram/mirror_protocol.h, record.h) ---
M_HELLO, M_RECORDS = 1, 3


def m_frame(mtype, body):
    return struct.pack("<IHHII", 0x464D564E, 1, mtype, len(body), 0) + body


def m_hello(uuid, log_size, head, tail, epoch=1):
    return m_frame(M_HELLO, struct.pack("<5Q", uuid, log_size, head, tail, epoch))


def record(pos, payload, seq=1, volume=1, rtype=2, epoch=1, version=3):
    # nvram/record.h: a Call record (type 2) of record version 3.
    head = struct.pack("<IIQQIIHHI", 0x4E565243, 0, pos, seq, len(payload), volume, rtype,
                       version, epoch)
    crc = crc32c(head + payload)
    return struct.pack("<IIQQIIHHI", 0x4E565243, crc, pos, seq, len(payload), volume, rtype,
                       version, epoch) + payload


def mirror(address, which=("huge", "uuid", "oob")):
    attacks = (("huge", mirror_huge, "mirror hello with a 2^62 byte log"),
               ("uuid", mirror_uuid, "mirror hello with a new uuid"),
               ("oob", mirror_oob, "mirror record at the tail copied past the log's end"))
    for name, attack, what in attacks:
        if name not in which:
            continue
        try:
            attack(address)
        except ConnectionRefusedError:
            # After the partner's death the survivor stops its copy of the partner's NVRAM to
            # take it over: a closed port shuts the attacker out too. Whether the node itself
            # survived is checked by the takeover and the files that follow.
            shut_out(what + " (port closed during the takeover)")


def mirror_huge(address):
    # A log far larger than any file system allows: ftruncate once threw on a bare thread.
    s = connect(address)
    s.sendall(m_hello(0x5EED, 1 << 62, 0, 0))
    judge("mirror hello with a 2^62 byte log", answer_of(s))
    s.close()
    time.sleep(0.5)


def mirror_uuid(address):
    # A new identity: the partner's copy was wiped and recreated for it.
    s = connect(address)
    s.sendall(m_hello(0xBAD, 1 << 20, 0, 0))
    judge("mirror hello with a new uuid", answer_of(s))
    s.close()


def mirror_oob(address):
    # A 4 KiB log whose tail is 8 bytes before its end, and a 64 KiB record at the tail.
    log = 4096
    s = connect(address)
    s.sendall(m_hello(0xBAD2, log, log - 8, log - 8) +
              m_frame(M_RECORDS, record(log - 8, b"\xAB" * 65536)))
    judge("mirror record at the tail copied past the log's end", answer_of(s))
    s.close()


def flood(source, seconds, count, addresses):
    """Holds the ports' pre-authentication slots: silent connections, reopened when closed.
    Prints how many connections were accepted and how many were closed at once (refused)."""
    open_ = {a: [] for a in addresses}
    opened = closed_at_once = 0
    end = time.time() + seconds
    # Stopped by the test (SIGTERM) once it has seen what it waited for: report all the same.
    signal.signal(signal.SIGTERM, lambda *_: globals().__setitem__("_stop", True))
    while time.time() < end and not globals().get("_stop"):
        for a in addresses:
            # Drop the connections the node closed.
            alive = []
            for s, since in open_[a]:
                s.setblocking(False)
                try:
                    gone = s.recv(1) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if gone:
                    closed_at_once += time.time() - since < 0.2
                    s.close()
                else:
                    alive.append((s, since))
            open_[a] = alive
            while len(open_[a]) < count and time.time() < end:
                host, port = a.rsplit(":", 1)
                try:
                    s = socket.create_connection((host, int(port)), timeout=2, source_address=(source, 0))
                except OSError:
                    break
                opened += 1
                open_[a].append((s, time.time()))
        time.sleep(0.02)
    for a in addresses:
        for s, _ in open_[a]:
            s.close()
    print("flood from %s: %d connections opened, %d closed at once" % (source, opened, closed_at_once))


def main(argv):
    if len(argv) >= 5 and argv[1] == "interconnect":
        interconnect(argv[2], argv[3], argv[4])
    elif len(argv) >= 7 and argv[1] == "heartbeats":
        heartbeats(argv[2], argv[3], argv[4], int(argv[5]), float(argv[6]))
    elif len(argv) >= 6 and argv[1] == "flood":
        flood(argv[2], float(argv[3]), int(argv[4]), argv[5:])
    elif len(argv) >= 3 and argv[1] == "mirror":
        mirror(argv[2], argv[3].split(",") if len(argv) > 3 else ("huge", "uuid", "oob"))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
