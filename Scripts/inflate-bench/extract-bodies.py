#!/usr/bin/env python3
"""Writes the gzip and deflate response bodies of HTTP/1.x captures, as transferred (de-chunked, still compressed),
one file per body: OUTDIR/NNN.gzip or NNN.deflate. For Scripts/inflate-bench only: in-order streams are assumed
(segments are placed by sequence number; duplicates are dropped, holes end the stream)."""
import os, sys
from scapy.all import PcapReader, TCP, IP, IPv6

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
count = 0
for path in sys.argv[2:]:
    streams = {}
    for packet in PcapReader(path):
        if TCP not in packet: continue
        ip = packet[IP] if IP in packet else packet[IPv6] if IPv6 in packet else None
        if ip is None: continue
        tcp = packet[TCP]
        key = (ip.src, tcp.sport, ip.dst, tcp.dport)
        state = streams.setdefault(key, {"isn": None, "segments": {}})
        if tcp.flags & 0x02: state["isn"] = tcp.seq + 1; continue
        payload = bytes(tcp.payload)
        if payload: state["segments"].setdefault(tcp.seq, payload)
    for key, state in streams.items():
        segments = state["segments"]
        if not segments: continue
        seq = state["isn"] if state["isn"] is not None else min(segments)
        data = bytearray()
        for start in sorted(segments):
            chunk = segments[start]
            if start + len(chunk) <= seq: continue
            if start > seq: break
            data += chunk[seq - start:]
            seq = start + len(chunk)
        data = bytes(data)
        while data.startswith(b"HTTP/1."):
            end = data.find(b"\r\n\r\n")
            if end < 0: break
            head = data[:end].decode("latin-1").split("\r\n")
            fields = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            rest = data[end + 4:]
            body = b""
            if "chunked" in fields.get("transfer-encoding", "").lower():
                while True:
                    line_end = rest.find(b"\r\n")
                    if line_end < 0: rest = b""; break
                    size = int(rest[:line_end].split(b";")[0], 16)
                    body += rest[line_end + 2:line_end + 2 + size]
                    rest = rest[line_end + 2 + size + 2:]
                    if size == 0: break
            elif "content-length" in fields:
                length = int(fields["content-length"])
                body, rest = rest[:length], rest[length:]
            else:
                body, rest = rest, b""
            coding = fields.get("content-encoding", "").lower()
            if coding in ("gzip", "x-gzip", "deflate") and body:
                count += 1
                with open(os.path.join(out, "%03d.%s" % (count, "deflate" if coding == "deflate" else "gzip")), "wb") as f:
                    f.write(body)
            data = rest
print(count, "bodies", file=sys.stderr)
