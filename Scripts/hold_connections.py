#!/usr/bin/env python3
"""Holds many idle keep-alive HTTP/1.1 connections open against a loopback server.

Used by Scripts/bench to see what 10,000 idle clients cost a server. Each connection sends one
`GET /healthz` with keep-alive, reads the whole response, and then stays open and idle. Once all
are open it writes a line to --ready-file (so the caller can measure the server while they are
held), holds them for --hold seconds, then sends a second request on a sample of them to check
the server kept them, and prints one JSON object with the results.

Standard library only. Loopback addresses only: this is a local benchmark helper.
"""

import argparse
import ipaddress
import json
import os
import resource
import selectors
import socket
import sys
import time

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n"


def raise_fd_limit(needed):
    # Every connection is a file descriptor; the default soft limit (1024) is far too low.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed + 64
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    return soft


def response_complete(data):
    """True when data holds a whole response with a Content-Length body."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    length = 0
    for line in data[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    return len(data) >= end + 4 + length


def status_of(data):
    parts = data.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def exchange(socks, deadline):
    """Sends REQUEST on every socket at once and reads each response; returns the ones that
    got a 200 and the number that failed."""
    sel = selectors.DefaultSelector()
    buffers = {}
    for s in socks:
        try:
            s.sendall(REQUEST)
        except OSError:
            continue
        buffers[s] = b""
        sel.register(s, selectors.EVENT_READ)
    ok = []
    while buffers and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            try:
                chunk = s.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                del buffers[s]
                continue
            buffers[s] += chunk
            if response_complete(buffers[s]):
                sel.unregister(s)
                if status_of(buffers.pop(s)) == 200:
                    ok.append(s)
    sel.close()
    return ok, len(socks) - len(ok)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--hold", type=float, default=5.0, help="seconds to hold after all are open")
    parser.add_argument("--batch", type=int, default=500, help="connections opened per round")
    parser.add_argument("--timeout", type=float, default=120.0, help="overall time limit, seconds")
    parser.add_argument("--ready-file", help="written once every connection is open and idle")
    parser.add_argument("--sample", type=int, default=200, help="connections re-checked at the end")
    args = parser.parse_args()

    if not ipaddress.ip_address(args.host).is_loopback:
        sys.exit("hold_connections: only loopback addresses are allowed")
    limit = raise_fd_limit(args.connections)
    if limit < args.connections + 64:
        sys.exit(f"hold_connections: file descriptor limit {limit} is below {args.connections + 64}")

    deadline = time.monotonic() + args.timeout
    started = time.monotonic()
    held = []
    failed = 0
    # In batches: a burst of 10,000 connects overflows the listen backlog and turns into
    # SYN retransmits (seconds of delay) instead of measuring the server.
    while len(held) + failed < args.connections and time.monotonic() < deadline:
        batch = []
        for _ in range(min(args.batch, args.connections - len(held) - failed)):
            s = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(5)
            try:
                s.connect((args.host, args.port))
                batch.append(s)
            except OSError:
                s.close()
                failed += 1
        ok, bad = exchange(batch, deadline)
        held.extend(ok)
        failed += bad
        for s in batch:
            if s not in ok:
                s.close()
    open_seconds = time.monotonic() - started

    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{len(held)} {failed}\n")
        os.rename(tmp, args.ready_file)  # atomic: the caller never reads half a line

    time.sleep(max(0.0, min(args.hold, deadline - time.monotonic())))

    # Are they still served? A server that silently dropped idle connections would fail here.
    step = max(1, len(held) // max(1, args.sample))
    sample = held[::step][: args.sample]
    sample_ok, _ = exchange(sample, min(deadline, time.monotonic() + 10) if sample else deadline)
    for s in held:
        s.close()

    print(json.dumps({
        "requested": args.connections,
        "held": len(held),
        "failed": failed,
        "open_seconds": round(open_seconds, 2),
        "sample": len(sample),
        "sample_ok": len(sample_ok),
    }))
    return 0 if failed == 0 and len(sample_ok) == len(sample) else 1


if __name__ == "__main__":
    sys.exit(main())
