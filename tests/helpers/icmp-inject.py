#!/usr/bin/env python3
"""icmp-inject.py SRC VICTIM PEER SPORT DPORT TEXT: an ICMP (IPv4: port unreachable) or ICMPv6
(port unreachable) error from SRC to VICTIM that quotes a UDP datagram VICTIM:SPORT -> PEER:DPORT
carrying TEXT.  Run as root in the fake internet's namespace (egress.bats icmp-error-inbound):
conntrack takes it as related to the victim's flow to PEER whoever sends it."""
import socket
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


src, victim, peer = sys.argv[1], sys.argv[2], sys.argv[3]
sport, dport, text = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6].encode()
udp = struct.pack("!HHHH", sport, dport, 8 + len(text), 0) + text
if ":" not in src:
    inner = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0,
                        socket.inet_aton(victim), socket.inet_aton(peer))
    inner = inner[:10] + struct.pack("!H", csum(inner)) + inner[12:]
    icmp = struct.pack("!BBHI", 3, 3, 0, 0) + inner + udp
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
else:
    inner = struct.pack("!IHBB16s16s", 0x60000000, len(udp), 17, 64,
                        socket.inet_pton(socket.AF_INET6, victim),
                        socket.inet_pton(socket.AF_INET6, peer))
    icmp = struct.pack("!BBHI", 1, 4, 0, 0) + inner + udp  # the kernel sums ICMPv6
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.bind((src, 0))
s.sendto(icmp, (victim, 0))
