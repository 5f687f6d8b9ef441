#!/usr/bin/env python3
"""Small network probes for the conditioner's VM tests (standard library only).

Every measuring subcommand prints one line of space-separated key=value pairs, so shell
scripts and the Swift tests can read the figures without parsing prose.

  sink        count the UDP datagrams that arrive (one-way loss, the receiving end)
  send        send numbered UDP datagrams (one-way loss, the sending end)
  echo-server answer every UDP datagram with itself
  rtt         UDP request/response round-trip times against echo-server
  dns-server  a tiny DNS responder: every A query gets the same answer
  dns         time DNS A lookups against a resolver
  series      UDP echo probes at a steady pace for a while, one line per probe, to a file
  phases      per-phase figures of a series file, phases given as NAME=START_EPOCH boundaries
  requests    HTTP requests on one TCP connection opened before a go-file appears (TCP_NODELAY, so
              every request leaves at once even when nothing is acknowledged)
  downloads   HTTP/1.0 downloads, one connection after another: how each ended as the client saw it (eof,
              timeout, or the errno it got, such as ECONNRESET), its bytes and seconds (connection faults)
"""

import argparse
import errno
import os
import socket
import struct
import sys
import time


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def emit(**fields):
    print(" ".join(f"{k}={v}" for k, v in fields.items()), flush=True)


def ms(seconds):
    return f"{seconds * 1000:.1f}"


def summary(prefix, samples, sent):
    """Figures for a list of round-trip times in seconds, `sent` requests."""
    got = len(samples)
    fields = {f"{prefix}_sent": sent, f"{prefix}_received": got,
              f"{prefix}_loss_pct": f"{(sent - got) * 100.0 / sent:.1f}" if sent else "nan"}
    if samples:
        fields.update({f"{prefix}_min_ms": ms(min(samples)),
                       f"{prefix}_median_ms": ms(median(samples)),
                       f"{prefix}_max_ms": ms(max(samples))})
    return fields


def cmd_sink(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    if args.ready_file:
        open(args.ready_file, "w").close()
    seen = set()
    datagrams = 0
    start = time.monotonic()
    last = None
    while True:
        now = time.monotonic()
        if now - start > args.max_seconds:
            break
        if last is not None and now - last > args.idle_seconds:
            break
        sock.settimeout(0.2)
        try:
            data, _ = sock.recvfrom(2048)
        except socket.timeout:
            continue
        datagrams += 1
        last = time.monotonic()
        if data.startswith(b"probe "):
            seen.add(data.split()[1])
    emit(sink_datagrams=datagrams, sink_unique=len(seen))


def cmd_send(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    start = time.monotonic()
    for seq in range(args.count):
        # Pace against the clock, not by sleeping a fixed time, so slow emulation does not stretch the run.
        due = start + seq * args.interval
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.sendto(b"probe %d " % seq + b"x" * 32, (args.to, args.port))
    emit(send_count=args.count, send_seconds=f"{time.monotonic() - start:.2f}")


def cmd_echo_server(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    if args.ready_file:
        open(args.ready_file, "w").close()
    while True:
        data, peer = sock.recvfrom(2048)
        sock.sendto(data, peer)


def await_reply(sock, deadline, accept):
    """Reads replies until accept(reply) gives something other than None, and returns that; None at the deadline."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)
        try:
            reply = sock.recv(4096)
        except (socket.timeout, ConnectionRefusedError):
            return None
        value = accept(reply)
        if value is not None:
            return value


def cmd_rtt(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.to, args.port))
    samples = []
    for seq in range(args.count):
        payload = b"rtt %d %d" % (seq, os.getpid())
        sent_at = time.monotonic()
        sock.send(payload)
        if await_reply(sock, sent_at + args.timeout, lambda data: True if data == payload else None):
            samples.append(time.monotonic() - sent_at)
        time.sleep(args.interval)
    emit(**summary(args.prefix, samples, args.count))


def dns_query(name, query_id):
    header = struct.pack("!HHHHHH", query_id, 0x0100, 1, 0, 0, 0)  # recursion desired, one question
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"
    return header + qname + struct.pack("!HH", 1, 1)  # type A, class IN


def parse_a_answer(reply, query_id):
    """The first A record's address in a reply to query_id, or None."""
    if len(reply) < 12:
        return None
    rid, flags, qd, an, _, _ = struct.unpack("!HHHHHH", reply[:12])
    if rid != query_id or not flags & 0x8000 or an == 0:
        return None
    offset = 12
    for _ in range(qd):
        while reply[offset] != 0:
            if reply[offset] & 0xC0 == 0xC0:
                offset += 1
                break
            offset += reply[offset] + 1
        offset += 5
    for _ in range(an):
        if reply[offset] & 0xC0 == 0xC0:
            offset += 2
        else:
            while reply[offset] != 0:
                offset += reply[offset] + 1
            offset += 1
        rtype, _, _, rdlength = struct.unpack("!HHIH", reply[offset:offset + 10])
        offset += 10
        if rtype == 1 and rdlength == 4:
            return socket.inet_ntoa(reply[offset:offset + 4])
        offset += rdlength
    return None


def cmd_dns(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.server, args.port))
    samples = []
    answers = set()
    for seq in range(args.count):
        query_id = (os.getpid() + seq) & 0xFFFF
        sent_at = time.monotonic()
        sock.send(dns_query(args.name, query_id))
        address = await_reply(sock, sent_at + args.timeout, lambda reply: parse_a_answer(reply, query_id))
        if address is not None:
            samples.append(time.monotonic() - sent_at)
            answers.add(address)
        time.sleep(args.interval)
    fields = summary(args.prefix, samples, args.count)
    fields[f"{args.prefix}_answer"] = ",".join(sorted(answers)) or "none"
    emit(**fields)


def cmd_dns_server(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((args.bind, args.port))
    if args.ready_file:
        open(args.ready_file, "w").close()
    answer = socket.inet_aton(args.answer)
    while True:
        query, peer = sock.recvfrom(2048)
        if len(query) < 17:
            continue
        query_id = query[:2]
        end = query.index(b"\0", 12) + 5  # question: name, type, class
        question = query[12:end]
        header = query_id + struct.pack("!HHHHH", 0x8180, 1, 1, 0, 0)
        record = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + answer
        sock.sendto(header + question + record, peer)


def cmd_series(args):
    """Probe on a steady clock; a reply is matched by sequence number whenever it arrives."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.to, args.port))
    sock.setblocking(False)
    sent = {}
    rtts = {}
    start = time.monotonic()
    wall_offset = time.time() - start
    seq = 0
    end = start + args.seconds
    stop_file = args.stop_file
    while True:
        now = time.monotonic()
        if now >= end or (stop_file and os.path.exists(stop_file)):
            break
        if now >= start + seq * args.interval:
            try:
                sock.send(b"series %d" % seq)
            except (BlockingIOError, ConnectionRefusedError):
                pass
            sent[seq] = now
            seq += 1
        try:
            while True:
                data = sock.recv(2048)
                parts = data.split()
                if len(parts) == 2 and parts[0] == b"series":
                    n = int(parts[1])
                    if n in sent and n not in rtts:
                        rtts[n] = time.monotonic() - sent[n]
        except (BlockingIOError, ConnectionRefusedError):
            pass
        time.sleep(min(0.01, args.interval / 4))
    # Late replies still count: give in-flight probes their timeout.
    drain_end = time.monotonic() + args.timeout
    sock.setblocking(True)
    while time.monotonic() < drain_end:
        sock.settimeout(max(0.01, drain_end - time.monotonic()))
        try:
            parts = sock.recv(2048).split()
        except (socket.timeout, ConnectionRefusedError):
            continue
        if len(parts) == 2 and parts[0] == b"series":
            n = int(parts[1])
            if n in sent and n not in rtts:
                rtts[n] = time.monotonic() - sent[n]
    with open(args.output, "w") as out:
        for n in sorted(sent):
            rtt = rtts.get(n)
            out.write(f"{sent[n] + wall_offset:.6f} {rtt * 1000 if rtt is not None else -1:.3f}\n")
    emit(series_sent=len(sent), series_received=len(rtts))


def cmd_phases(args):
    """Phases are NAME=START (epoch seconds), in order; each phase ends where the next starts."""
    bounds = []
    for item in args.phase:
        name, _, start = item.partition("=")
        bounds.append((name, float(start)))
    bounds.append(("end", float("inf")))
    probes = []
    with open(args.series) as series:
        for line in series:
            sent_at, rtt = line.split()
            probes.append((float(sent_at), float(rtt)))
    fields = {}
    for (name, start), (_, end) in zip(bounds, bounds[1:]):
        # Probes sent within `margin` of a boundary are left out: they straddle two phases.
        inside = [rtt for sent_at, rtt in probes if start + args.margin <= sent_at < end - args.margin]
        answered = [rtt for rtt in inside if rtt >= 0]
        fields[f"{name}_sent"] = len(inside)
        fields[f"{name}_received"] = len(answered)
        if answered:
            fields[f"{name}_min_ms"] = f"{min(answered):.1f}"
            fields[f"{name}_median_ms"] = f"{median(answered):.1f}"
            fields[f"{name}_max_ms"] = f"{max(answered):.1f}"
        if args.fast_below is not None:
            fields[f"{name}_fast"] = sum(1 for rtt in answered if rtt < args.fast_below)
    emit(**{f"{args.prefix}_{k}": v for k, v in fields.items()})


def cmd_requests(args):
    sock = socket.create_connection((args.to, args.port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    open(args.connected_file, "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(args.go_file) and time.monotonic() < deadline:
        time.sleep(0.05)
    sock.settimeout(0.2)
    received = b""
    for number in range(1, args.count + 1):
        request = f"GET /{args.path_prefix}{number} HTTP/1.1\r\nHost: {args.to}\r\n\r\n".encode()
        sock.sendall(request)
        end = time.monotonic() + args.interval
        while time.monotonic() < end:
            try:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
            except socket.timeout:
                pass
    end = time.monotonic() + args.wait
    while time.monotonic() < end:
        try:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        except socket.timeout:
            pass
    emit(**{f"{args.prefix}_sent": args.count, f"{args.prefix}_responses": received.count(b"HTTP/1.")})


def cmd_downloads(args):
    first, outcomes = None, {}
    for _ in range(args.count):
        got, start, sock = 0, time.monotonic(), None
        try:
            sock = socket.create_connection((args.to, args.port), timeout=args.timeout)
            sock.sendall(f"GET /{args.path} HTTP/1.0\r\nHost: {args.to}\r\n\r\n".encode())
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    outcome = "eof"
                    break
                got += len(chunk)
        except socket.timeout:
            outcome = "timeout"
        except OSError as error:
            outcome = errno.errorcode.get(error.errno, str(error.errno))
        finally:
            if sock:
                sock.close()
        if first is None:
            first = (outcome, got, time.monotonic() - start)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    emit(**{f"{args.prefix}_outcome": first[0], f"{args.prefix}_bytes": first[1],
            f"{args.prefix}_seconds": f"{first[2]:.3f}", f"{args.prefix}_count": args.count,
            f"{args.prefix}_resets": outcomes.get("ECONNRESET", 0), f"{args.prefix}_eofs": outcomes.get("eof", 0),
            f"{args.prefix}_outcomes": ",".join(f"{k}:{v}" for k, v in sorted(outcomes.items()))})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sink", help="count arriving UDP datagrams")
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--idle-seconds", type=float, default=2.0, help="stop this long after the last datagram")
    p.add_argument("--max-seconds", type=float, default=30.0, help="stop after this long in any case")
    p.add_argument("--ready-file")
    p.set_defaults(func=cmd_sink)

    p = sub.add_parser("send", help="send numbered UDP datagrams")
    p.add_argument("--to", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--interval", type=float, default=0.002)
    p.set_defaults(func=cmd_send)

    p = sub.add_parser("echo-server", help="echo UDP datagrams")
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ready-file")
    p.set_defaults(func=cmd_echo_server)

    p = sub.add_parser("rtt", help="UDP round-trip times against echo-server")
    p.add_argument("--to", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--timeout", type=float, default=3.0)
    p.add_argument("--prefix", default="udp")
    p.set_defaults(func=cmd_rtt)

    p = sub.add_parser("dns", help="time DNS A lookups")
    p.add_argument("--server", required=True)
    p.add_argument("--port", type=int, default=53)
    p.add_argument("--name", default="lab.test")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--timeout", type=float, default=3.0)
    p.add_argument("--prefix", default="dns")
    p.set_defaults(func=cmd_dns)

    p = sub.add_parser("dns-server", help="answer every A query with one address")
    p.add_argument("--bind", required=True)
    p.add_argument("--port", type=int, default=53)
    p.add_argument("--answer", required=True)
    p.add_argument("--ready-file")
    p.set_defaults(func=cmd_dns_server)

    p = sub.add_parser("series", help="steady UDP echo probes, one line per probe to --output")
    p.add_argument("--to", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--interval", type=float, default=0.1)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--stop-file", help="stop sending when this file appears")
    p.add_argument("--timeout", type=float, default=3.0, help="how long to wait for late replies at the end")
    p.add_argument("--output", required=True)
    p.set_defaults(func=cmd_series)

    p = sub.add_parser("phases", help="per-phase figures of a series file")
    p.add_argument("--series", required=True)
    p.add_argument("--margin", type=float, default=0.0, help="seconds around each boundary to leave out")
    p.add_argument("--fast-below", type=float, help="also count replies faster than this many ms")
    p.add_argument("--prefix", default="phase")
    p.add_argument("phase", nargs="+", help="NAME=START_EPOCH_SECONDS, in order")
    p.set_defaults(func=cmd_phases)

    p = sub.add_parser("requests", help="HTTP requests on one connection made before --go-file appears")
    p.add_argument("--to", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--interval", type=float, default=0.3)
    p.add_argument("--wait", type=float, default=2.0, help="how long to wait for answers after the last request")
    p.add_argument("--path-prefix", default="r")
    p.add_argument("--connected-file", required=True)
    p.add_argument("--go-file", required=True)
    p.add_argument("--prefix", default="http")
    p.set_defaults(func=cmd_requests)

    p = sub.add_parser("downloads", help="HTTP/1.0 downloads, one connection after another, and how each ended")
    p.add_argument("--to", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--path", default="blob")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--timeout", type=float, default=2.0, help="connect and read timeout, seconds")
    p.add_argument("--prefix", default="download")
    p.set_defaults(func=cmd_downloads)

    args = parser.parse_args()
    try:
        args.func(args)
    except KeyboardInterrupt:
        pass
    except OSError as error:
        print(f"probe.py {args.command}: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
