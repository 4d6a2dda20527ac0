#!/usr/bin/env python3
"""arp-inject.py MODE DEV SENDER_IP MAC [TARGET_IP]: an ARP frame a neighbour on the
container's link sends to take an IPv4 address (egress.bats arp-spoof).  Run as root in the
namespace that holds DEV; the frame leaves DEV with MAC as its Ethernet source.

  reply DEV SENDER_IP MAC TARGET_IP   an unsolicited ARP reply to the broadcast address:
                                      SENDER_IP is at MAC (to TARGET_IP); MAC,MAC2: one
                                      reply for each, back to back (first-answer-race)
  garp DEV SENDER_IP MAC              a gratuitous ARP request (sender and target SENDER_IP)
  flood DEV SENDER_IP TARGET_IP N     N unsolicited replies, SENDER_IP at a new link address
                                      each (02:00:5e:NN:NN:NN); prints "sent N"
  count DEV MAC SECONDS               the frames DEV receives for Ethernet destination MAC
                                      within SECONDS (what the container sent to MAC);
                                      prints "listening" once bound, then "frames N\""""
import socket
import struct
import sys
import time


def frame(op, src_mac, sender_ip, target_ip):
    bcast = b"\xff" * 6
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, src_mac,
                      socket.inet_aton(sender_ip),
                      b"\0" * 6 if op == 1 else bcast, socket.inet_aton(target_ip))
    return bcast + src_mac + struct.pack("!H", 0x0806) + arp


if len(sys.argv) < 5 or sys.argv[1] not in ("reply", "garp", "flood", "count"):
    sys.exit(__doc__)
mode, dev, sender, mac = sys.argv[1:5]
if mode == "flood":
    target, n = sys.argv[4], int(sys.argv[5])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    for i in range(n):
        s.send(frame(2, b"\x02\x00\x5e" + i.to_bytes(3, "big"), sender, target))
    print("sent", n)
    sys.exit(0)
if mode == "count":
    want = bytes.fromhex(sys.argv[3].replace(":", ""))
    end = time.monotonic() + float(sys.argv[4])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    s.bind((dev, 0))
    print("listening", flush=True)
    n = 0
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            f = s.recv(2048)
        except socket.timeout:
            break
        n += f[:6] == want
    print("frames", n, flush=True)
    sys.exit(0)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
for m in mac.split(","):
    mac_b = bytes.fromhex(m.replace(":", ""))
    s.send(frame(2, mac_b, sender, sys.argv[5]) if mode == "reply" else frame(1, mac_b, sender, sender))
