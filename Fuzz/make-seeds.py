#!/usr/bin/env python3
"""Turns capture fixtures into starting inputs for the fuzz targets (see docs/fuzzing.md).

Usage: make-seeds.py KIND OUT_DIR MAX_LEN FIXTURE...
KIND is the second column of Fuzz/targets: packets, streams, clienthello, files, tunnels, tlsrecords, hpack, quic, h3,
nfqueue, dns, gobinary, none.
"""
import hashlib
import os
import ssl
import struct
import sys

import logging
logging.getLogger("scapy").setLevel(logging.ERROR)
from scapy.all import PcapReader, TCP, IP, IPv6, conf  # noqa: E402


def save(out, data, max_len):
    data = data[:max_len]
    if not data:
        return
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def packets_of(path):
    """(link type, frame bytes, scapy packet) for each packet, or nothing when scapy cannot read the file."""
    try:
        with PcapReader(path) as reader:
            for packet in reader:
                linktype = conf.l2types.layer2num.get(type(packet))
                if linktype is None:
                    linktype = getattr(reader, "linktype", 1)
                yield linktype, bytes(packet), packet
    except Exception:
        return


def seed_packets(out, fixtures, max_len):
    for path in fixtures:
        seen = 0
        for linktype, frame, _ in packets_of(path):
            for options in (0, 1, 2, 3):
                save(out, struct.pack(">HB", linktype & 0xFFFF, options) + frame, max_len)
            seen += 1
            if seen >= 40:
                break


def connections_of(path):
    """Per TCP connection: whether its SYN was seen, and [(from_server, payload)] in capture order."""
    conns = {}
    for _, _, packet in packets_of(path):
        if TCP not in packet:
            continue
        ip = packet[IP] if IP in packet else packet[IPv6] if IPv6 in packet else None
        if ip is None:
            continue
        tcp = packet[TCP]
        a, b = (ip.src, tcp.sport), (ip.dst, tcp.dport)
        key = tuple(sorted([a, b]))
        entry = conns.setdefault(key, {"server": None, "syn": False, "records": []})
        if entry["server"] is None:
            if tcp.flags & 0x02:
                entry["server"] = b if not tcp.flags & 0x10 else a
                entry["syn"] = True
            else:
                entry["server"] = a if tcp.sport < tcp.dport else b
        payload = bytes(tcp.payload)
        if payload:
            entry["records"].append((a == entry["server"], payload))
    return conns.values()


def seed_streams(out, fixtures, max_len):
    for path in fixtures:
        for entry in connections_of(path):
            if not entry["records"]:
                continue
            data = bytes([1 if entry["syn"] else 0])
            for from_server, payload in entry["records"]:
                payload = payload[:4095]
                data += bytes([(1 if from_server else 0) | (1 << 4)]) + struct.pack(">H", len(payload)) + payload
            data += bytes([0x0A, 0x0B])  # FIN from each side
            save(out, data, max_len)


def seed_clienthello(out, fixtures, max_len):
    for name in ("example.com", ".".join(["a" * 60] * 4), None):
        for alpn in (["h2", "http/1.1"], None):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            if alpn:
                context.set_alpn_protocols(alpn)
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            tls = context.wrap_bio(incoming, outgoing, server_hostname=name)
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            save(out, outgoing.read(), max_len)
    for path in fixtures:
        for entry in connections_of(path):
            for from_server, payload in entry["records"][:1]:
                if not from_server and payload[:1] == b"\x16":
                    save(out, payload, max_len)


def seed_tunnels(out, fixtures, max_len):
    """Every Ethernet frame of the tunnel captures (Tests/Fixtures/tunnels), behind each of 4 options bytes."""
    for path in fixtures:
        if os.sep + "tunnels" + os.sep not in path:
            continue
        for linktype, frame, _ in packets_of(path):
            if linktype == 1:
                for options in (0, 1, 2, 0x41):
                    save(out, bytes([options]) + frame, max_len)


def seed_files(out, fixtures, max_len):
    for path in fixtures:
        if os.path.getsize(path) <= max_len:
            with open(path, "rb") as f:
                save(out, f.read(), max_len)


def tls_step(control, body):
    return bytes([control]) + body


def tls_sealed(side, stage, content_type, plaintext, padding=None):
    """A tls-records step the harness seals (kind 2, or kind 7 with explicit TLS 1.3 padding)."""
    if padding is None:
        return bytes([side | 2 << 1 | stage << 4, content_type]) + struct.pack(">H", len(plaintext)) + plaintext
    return bytes([side | 7 << 1 | stage << 4, padding, content_type]) + struct.pack(">H", len(plaintext)) + plaintext


def handshake_message(kind, body):
    return bytes([kind]) + struct.pack(">I", len(body))[1:] + body


def seed_tlsrecords(out, fixtures, max_len):
    """Whole sessions for the tls-records target: the harness writes the hellos and seals what follows, so these
    decrypt. Then the TLS fixtures' real streams as raw steps (they do not decrypt with the harness's keys, but
    carry real record framing and handshakes)."""
    request = b"GET / HTTP/1.1\r\nHost: fuzz.example\r\n\r\n"
    response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    alpn = struct.pack(">H", 5) + struct.pack(">H", 3) + bytes([2]) + b"h2"
    encrypted_extensions = handshake_message(8, struct.pack(">H", len(alpn)) + alpn)
    end = bytes([5 << 1, 1 | 5 << 1])
    for session in range(3):  # TLS 1.3
        for segment in (255, 0, 3):
            for early in (False, True):
                options = session | (8 if early else 0)
                steps = b""
                if early:
                    steps += tls_sealed(0, 0, 23, request) + tls_sealed(0, 0, 22, handshake_message(5, b""))
                steps += tls_sealed(1, 1, 22, encrypted_extensions + handshake_message(20, bytes(32)))
                steps += tls_sealed(0, 1, 22, handshake_message(20, bytes(32)))
                steps += tls_sealed(0, 2, 23, request) + tls_sealed(1, 2, 23, response, padding=7)
                steps += tls_sealed(0, 2, 22, handshake_message(24, b"\x00"))
                steps += tls_sealed(0, 3, 23, request) + tls_sealed(1, 2, 21, b"\x01\x00")
                save(out, bytes([options, segment, 0]) + steps + end, max_len)
    for session in range(3, 8):  # TLS 1.2
        for etm in ((False, True) if session >= 6 else (False,)):
            options = session | (16 if etm else 0)
            steps = tls_step(1 | 6 << 1, b"") + tls_sealed(1, 0, 22, handshake_message(20, bytes(12)))
            steps += tls_step(6 << 1, b"") + tls_sealed(0, 0, 22, handshake_message(20, bytes(12)))
            steps += tls_sealed(0, 0, 23, request) + tls_sealed(1, 0, 23, response)
            save(out, bytes([options, 255, 0]) + steps + end, max_len)
    for path in fixtures:
        if os.sep + "tls" + os.sep not in path:
            continue
        for entry in connections_of(path):
            steps = b""
            for from_server, payload in entry["records"]:
                payload = payload[:4095]
                steps += bytes([1 if from_server else 0]) + struct.pack(">H", len(payload)) + payload
            if steps:
                save(out, bytes([0x20 | (0 if "tls13" in path else 3), 255, 0]) + steps, max_len)


def hpack_step(side, kind, flags, body):
    return bytes([side | kind << 1 | flags << 4]) + body


def seed_hpack(out, fixtures, max_len):
    """Header blocks from Python's hpack encoder (the h2 library's, which the h2 fixtures' server uses), as
    HEADERS/CONTINUATION/PUSH_PROMISE steps of the hpack-blocks target; then the cleartext HTTP/2 fixtures'
    streams as raw steps."""
    try:
        import hpack
    except ImportError:
        print("make-seeds.py: python hpack not installed; hpack-blocks starts without header-block seeds",
              file=sys.stderr)
        hpack = None
    if hpack is not None:
        request = [(":method", "GET"), (":scheme", "https"), (":path", "/index.html?q=1"),
                   (":authority", "fuzz.example"), ("user-agent", "curl/8.0"), ("accept", "*/*"),
                   ("x-custom", "v" * 40), ("cookie", "a=1"), ("cookie", "b=2")]
        response = [(":status", "200"), ("content-type", "text/plain"), ("content-length", "2"),
                     ("set-cookie", "id=42; Path=/"), ("cache-control", "no-cache")]
        trailers = [("grpc-status", "0"), ("grpc-message", "ok")]
        for options in (0, 1, 2, 12):
            client, server = hpack.Encoder(), hpack.Encoder()
            steps = hpack_step(1, 2, 0, struct.pack(">H", 1024))
            for stream in (1, 3, 5):
                block = client.encode(request)
                if stream == 3:  # split over CONTINUATION
                    half = len(block) // 2
                    steps += hpack_step(0, 0, 1, bytes([stream]) + struct.pack(">H", half) + block[:half])
                    steps += hpack_step(0, 1, 2, bytes([stream]) + struct.pack(">H", len(block) - half) + block[half:])
                else:
                    steps += hpack_step(0, 0, 3 | (4 if stream == 5 else 0),
                                        bytes([stream]) + struct.pack(">H", len(block)) + block)
                block = server.encode(response)
                steps += hpack_step(1, 0, 2 | (8 if stream == 5 else 0),
                                    bytes([stream]) + struct.pack(">H", len(block)) + block)
                steps += hpack_step(1, 3, 0, bytes([stream]) + struct.pack(">H", 2) + b"ok")
                block = server.encode(trailers)
                steps += hpack_step(1, 0, 3, bytes([stream]) + struct.pack(">H", len(block)) + block)
            pushed = server.encode(request)
            steps += hpack_step(1, 4, 2, bytes([1, 2]) + struct.pack(">H", len(pushed)) + pushed)
            server.header_table_size = 0
            block = server.encode(response)
            steps += hpack_step(1, 0, 3, bytes([2]) + struct.pack(">H", len(block)) + block)
            steps += hpack_step(0, 5, 0, bytes([7, 8])) + hpack_step(1, 5, 1, bytes([5, 0]))
            save(out, bytes([options]) + steps, max_len)
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    for path in fixtures:
        if os.sep + "h2" + os.sep not in path:
            continue
        for entry in connections_of(path):
            client = b"".join(p for from_server, p in entry["records"] if not from_server)
            if preface not in client:
                continue
            steps = b""
            for from_server, payload in entry["records"]:
                if not from_server and preface in payload:
                    payload = payload[payload.index(preface) + len(preface):]
                payload = payload[:4095]
                if payload:
                    steps += hpack_step(1 if from_server else 0, 6, 0, struct.pack(">H", len(payload)) + payload)
            if steps:
                save(out, bytes([0]) + steps, max_len)


def quic_varint(value):
    if value < 64:
        return bytes([value])
    if value < 16384:
        return struct.pack(">H", 0x4000 | value)
    return struct.pack(">I", 0x80000000 | value)


def seed_quic(out, fixtures, max_len):
    """Records for the quic-packets harness: frames it protects with real keys (Handshake with EncryptedExtensions,
    STREAM frames in and out of order with FIN, RESET_STREAM, NEW_CONNECTION_ID, ACK, CONNECTION_CLOSE, key
    updates, a move to a new port), and raw datagrams: the UDP payloads of the fixtures."""
    from scapy.all import UDP  # noqa: E402

    def record(options, frames, number=0):
        return bytes([options]) + struct.pack(">HHH", number, 0, len(frames)) + frames

    def stream(stream_id, offset, data, fin=False):
        return bytes([0x08 | 0x04 | 0x02 | (1 if fin else 0)]) + quic_varint(stream_id) + quic_varint(offset) \
            + quic_varint(len(data)) + data

    alpn = b"\x00\x10\x00\x05\x00\x03\x02h3"
    ee = b"\x08\x00\x00" + bytes([2 + len(alpn)]) + struct.pack(">H", len(alpn)) + alpn
    handshake = record(0, b"\x06" + quic_varint(0) + quic_varint(len(ee)) + ee) + record(4, b"\x06\x00" + quic_varint(len(ee)) + ee)
    request = b"\x01\x10\x00\x00\xd1\xd7\x51\x0a\x71\x75\x69\x63\x2e\x74\x65\x73\x74"
    ack = b"\x02" + quic_varint(3) + quic_varint(0) + quic_varint(1) + quic_varint(0) + quic_varint(0) + quic_varint(1)
    one_rtt = [
        record(1, stream(0, 0, request, fin=True), 1) + record(5, stream(0, 0, b"\x01\x02\x00\x00" + bytes(40), fin=True), 1),
        record(1, stream(0, 10, request[10:], fin=True), 1) + record(1, stream(0, 0, request[:12]), 2),
        record(1, stream(4, 0, bytes(100)), 1) + record(1, b"\x04" + quic_varint(4) + quic_varint(0x10c) + quic_varint(300), 2),
        record(1, b"\x18" + quic_varint(1) + quic_varint(0) + bytes([8]) + bytes(range(8)) + bytes(16), 1)
        + record(0x81, stream(8, 0, b"moved", fin=True), 2),
        record(2, ack + stream(2, 0, b"\x00\x04\x00"), 1) + record(6, stream(3, 0, b"\x00\x04\x00"), 1),
        record(1, b"\x1d" + quic_varint(0x100) + quic_varint(4) + b"done", 3) + record(5, b"\x1c\x0a\x00\x00", 3),
        record(0x41, stream(0, 0, request, fin=True), 1),
    ]
    for body in one_rtt:
        save(out, handshake + body, max_len)
    for path in fixtures:
        datagrams = b""
        for _, _, packet in packets_of(path):
            if UDP in packet and "quic" in path:
                payload = bytes(packet[UDP].payload)
                datagrams += bytes([0x03 | (0x04 if packet[UDP].sport in (443, 4433, 8443) else 0)]) \
                    + struct.pack(">HHH", 0, 0, len(payload)) + payload
        if datagrams:
            save(out, datagrams[:max_len], max_len)


def seed_h3(out, fixtures, max_len):
    """The stream pieces of Tests/Fixtures/h3 (aioquic's HTTP/3 client and server, Scripts/fixtures/make-h3-streams.py)
    as http3-frames steps: request streams by index, unidirectional streams by index and side, resets; whole and in
    halves."""
    import glob
    import json
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "..", "Tests", "Fixtures", "h3", "*.jsonl"))):
        steps = []
        for line in open(path):
            piece = json.loads(line)
            side = 0 if piece["client"] else 1
            if "reset" in piece:
                steps.append(bytes([side | 2 << 1, piece["reset"] & 0xFF]) + struct.pack(">H", piece["code"] & 0xFFFF))
                continue
            stream, data = piece["stream"], bytes.fromhex(piece["hex"])
            fin = 1 if piece["fin"] else 0
            kind, index = (1, (stream - 2 - side) // 4) if stream & 2 else (0, stream // 4)
            if index > 255:
                continue
            steps.append(bytes([side | kind << 1 | fin << 4, index]) + struct.pack(">H", len(data)) + data)
        for options in (0, 1, 4, 9):
            save(out, bytes([options]) + b"".join(steps), max_len)
        save(out, bytes([0]) + b"".join(steps[: len(steps) // 2]), max_len)


def nfq_attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("<HH", length, kind) + payload + bytes((4 - length % 4) % 4)


def nfq_message(msg_type, attributes, queue=8192, flags=0):
    """nlmsghdr (host order: little-endian here) + nfgenmsg (queue number big-endian) + attributes."""
    body = bytes([0, 0]) + struct.pack(">H", queue) + b"".join(attributes)
    return struct.pack("<IHHII", 16 + len(body), msg_type, flags, 1, 0) + body


def seed_nfqueue(out, fixtures, max_len):
    """Messages as the kernel sends them on a netfilter queue socket (linux/netfilter/nfnetlink_queue.h): packets
    with NFQA_PACKET_HDR (id, hw protocol, hook), with and without NFQA_PAYLOAD (an IPv4 header and some bytes),
    several in one receive, and the NLMSG_ERROR answers to configuration (acknowledgement, EPERM)."""
    packet_type = (3 << 8) | 0
    ipv4 = bytes.fromhex("4500003c1c4640004006b1e60a0000010a000002") + bytes(range(40))
    def packet(packet_id, payload=None, queue=8192):
        attributes = [nfq_attribute(1, struct.pack(">IHB", packet_id, 0x0800, 3)),
                      nfq_attribute(9, struct.pack(">I", 2))]  # NFQA_IFINDEX_OUTDEV
        if payload is not None:
            attributes.append(nfq_attribute(10, payload))
        return nfq_message(packet_type, attributes, queue)
    for options in (0,):
        save(out, bytes([options]) + packet(1), max_len)
        save(out, bytes([options]) + packet(2, ipv4), max_len)
        save(out, bytes([options]) + packet(3) + packet(4, ipv4, 8193) + packet(5, b"", 8194), max_len)
    for code in (0, -1, -16):
        request = struct.pack("<IHHII", 28, (3 << 8) | 2, 5, 7, 0) + bytes(12)
        save(out, bytes([1]) + struct.pack("<IHHII", 16 + 4 + len(request), 2, 0, 7, 0) + struct.pack("<i", code) + request,
             max_len)


def seed_dns(out, fixtures, max_len):
    """DNS messages as a sandbox's command sends them to its resolver: the UDP port 53 payloads of the fixtures,
    plus hand-made queries (A, AAAA with an EDNS OPT record, mixed case, a 63-byte label), each behind an options
    byte (bit 0: answer NXDOMAIN, bit 1: SERVFAIL)."""
    from scapy.all import UDP  # noqa: E402
    def query(name, qtype=1, edns=False, qid=0x1234):
        labels = b"".join(bytes([len(l)]) + l for l in name.encode().split(b".") if l) + b"\x00"
        header = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1 if edns else 0)
        opt = b"\x00" + struct.pack(">HHIH", 41, 1232, 0, 0) if edns else b""
        return header + labels + struct.pack(">HH", qtype, 1) + opt
    for options in (0, 1, 2):
        save(out, bytes([options]) + query("example.com"), max_len)
        save(out, bytes([options]) + query("Api.Example.COM", 28, edns=True), max_len)
        save(out, bytes([options]) + query("a" * 63 + ".test", 16), max_len)
        save(out, bytes([options]) + query(""), max_len)
    for path in fixtures:
        for _, _, packet in packets_of(path):
            if UDP in packet and 53 in (packet[UDP].dport, packet[UDP].sport):
                save(out, bytes([1]) + bytes(packet[UDP].payload), max_len)


def go_elf(pclntab_layout=118, with_sections=True, symtab=False, buildinfo="inline", version="go1.19.8", magic=0xfffffff0):
    """A small ELF64 file shaped like a Go binary for amd64: one PT_LOAD mapping the whole file at 0x400000, a
    .text, a .gopclntab in Go 1.18's layout (magic 0xfffffff0, or 1.20's 0xfffffff1) or 1.16's (0xfffffffa) naming main.main and
    crypto/tls.(*Config).writeKeyLog, a .go.buildinfo with the version inline (Go 1.18+) or behind pointers to a
    string header (older), optionally a .symtab, and optionally no section headers at all."""
    base = 0x400000
    names = b"main.main\0crypto/tls.(*Config).writeKeyLog\0"
    text_off, text = 0x100, b"\xc3" * 0x40
    def word(v):
        return struct.pack("<Q", v)
    if pclntab_layout == 118:
        header = struct.pack("<IBBBB", magic, 0, 0, 1, 8)
        name_off = 8 + 8 * 8
        pcln_off = name_off + len(names)
        header += word(2) + word(0) + word(base + text_off) + word(name_off) + word(0) + word(0) + word(0) + word(pcln_off)
        functab = struct.pack("<II", 0, 24) + struct.pack("<II", 0x20, 32) + struct.pack("<II", 0x40, 0)
        funcs = struct.pack("<Ii", 0, 0) + struct.pack("<Ii", 0x20, 10)
    else:
        header = struct.pack("<IBBBB", 0xfffffffa, 0, 0, 1, 8)
        name_off = 8 + 7 * 8
        pcln_off = name_off + len(names)
        header += word(2) + word(0) + word(name_off) + word(0) + word(0) + word(0) + word(pcln_off)
        functab = word(base + text_off) + word(48) + word(base + text_off + 0x20) + word(60) + word(base + text_off + 0x40) + word(0)
        funcs = word(base + text_off) + struct.pack("<i", 0) + word(base + text_off + 0x20) + struct.pack("<i", 10)
    pclntab = header + names + functab + funcs
    pcln_file = text_off + len(text)
    info_file = (pcln_file + len(pclntab) + 15) // 16 * 16
    magic = b"\xff Go buildinf:"
    if buildinfo == "inline":
        info = magic + bytes([8, 2]) + b"\0" * 16 + bytes([len(version)]) + version.encode()
    else:
        string_header = info_file + 32
        string_data = string_header + 16
        info = magic + bytes([8, 0]) + word(base + string_header) + word(0) + word(base + string_data) + word(len(version)) + version.encode()
    body = bytearray(info_file + len(info))
    body[text_off:text_off + len(text)] = text
    body[pcln_file:pcln_file + len(pclntab)] = pclntab
    body[info_file:info_file + len(info)] = info
    shstr = b"\0.text\0.gopclntab\0.go.buildinfo\0.shstrtab\0.symtab\0.strtab\0"
    def name_at(n):
        return shstr.index(n.encode() + b"\0")
    extra = b""
    sym_off = len(body) + len(shstr)
    strtab = b"\0crypto/tls.(*Config).writeKeyLog\0"
    if symtab:
        symbols = b"\0" * 24 + struct.pack("<IBBHQQ", 1, 0x12, 0, 1, base + text_off + 0x20, 0x20)
        extra = symbols + strtab
    phoff = 64
    shoff = sym_off + len(extra)
    shoff = (shoff + 7) // 8 * 8
    sections = [b"\0" * 64]
    def sh(name, kind, addr, off, size, link=0, entsize=0, flags=2):
        return struct.pack("<IIQQQQIIQQ", name_at(name), kind, flags, addr, off, size, link, 0, 1, entsize)
    sections.append(sh(".text", 1, base + text_off, text_off, len(text), flags=6))
    sections.append(sh(".gopclntab", 1, base + pcln_file, pcln_file, len(pclntab)))
    sections.append(sh(".go.buildinfo", 1, base + info_file, info_file, len(info), flags=3))
    sections.append(sh(".shstrtab", 3, 0, len(body), len(shstr), flags=0))
    if symtab:
        sections.append(sh(".symtab", 2, 0, sym_off, 48, link=6, entsize=24, flags=0))
        sections.append(sh(".strtab", 3, 0, sym_off + 48, len(strtab), flags=0))
    shstrndx = 4
    total = shoff + 64 * len(sections)
    ph = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, total, total, 0x1000)
    elf = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    elf += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + text_off, phoff, shoff if with_sections else 0,
                       0, 64, 56, 1, 64, len(sections) if with_sections else 0, shstrndx if with_sections else 0)
    out = bytearray(total)
    out[:len(body)] = body
    out[0:64] = elf
    out[64:64 + 56] = ph
    out[len(body):len(body) + len(shstr)] = shstr
    out[sym_off:sym_off + len(extra)] = extra
    out[shoff:shoff + 64 * len(sections)] = b"".join(sections)
    return bytes(out)


def seed_gobinary(out, fixtures, max_len):
    """Small Go-shaped ELF files (see go_elf): both pclntab layouts, both build information forms, with and without
    .symtab and section headers, and versions either side of 1.17."""
    for layout in (118, 116):
        for buildinfo in ("inline", "pointers"):
            for symtab in (False, True):
                for with_sections in (True, False):
                    version = "go1.19.8" if layout == 118 else "go1.17.13"
                    save(out, go_elf(layout, with_sections, symtab, buildinfo, version), max_len)
    save(out, go_elf(116, buildinfo="pointers", version="go1.16.15"), max_len)
    save(out, go_elf(118, version="go1.21.0", magic=0xfffffff1), max_len)


def main():
    kind, out, max_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fixtures = sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    makers = {"packets": seed_packets, "streams": seed_streams, "clienthello": seed_clienthello,
              "files": seed_files, "tunnels": seed_tunnels, "tlsrecords": seed_tlsrecords,
              "hpack": seed_hpack, "quic": seed_quic, "h3": seed_h3, "nfqueue": seed_nfqueue,
              "dns": seed_dns, "gobinary": seed_gobinary,
              "none": lambda *args: None}
    if kind not in makers:
        sys.exit(f"make-seeds.py: unknown seed kind {kind!r}; known: {', '.join(sorted(makers))}")
    makers[kind](out, fixtures, max_len)


if __name__ == "__main__":
    main()
