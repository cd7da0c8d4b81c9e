#!/usr/bin/env python3
"""Generate the MeterAudit TLS benchmark capture and its key log: the traffic of
scripts/bench-capture.py (same plan, server and client), carried over TLS 1.3 and TLS 1.2.

Used by scripts/bench (see docs/BENCHMARK.md); can be run on its own (as root):

    python3 scripts/bench-tls-capture.py [--size-mb 60] [--seed 1] [--connections 64] [--regenerate]

What it does, all on 127.0.0.1 and bounded in count and time:
  1. Re-runs itself in a network namespace of its own (`unshare --net`), where it brings lo up
     with MTU 1500 and turns lo's offloads off (`ethtool -K lo tso off gso off gro off ...`), so
     the kernel itself cuts every TCP segment to the MSS (1448 bytes with timestamps) and
     hands tcpdump frames of at most 1514 bytes, as on an Ethernet wire (lo's checksum offload
     cannot be turned off: step 3 recomputes the checksums it leaves partial).
  2. Plans the traffic from --seed exactly as bench-capture.py does (its functions are reused),
     starts tcpdump on the namespace's lo, bench-capture.py's HTTP/1.1 server behind a Python
     `ssl` server context (RSA certificate made here with openssl; the context writes the key log),
     and one client thread per connection. Even connections speak TLS 1.3 (OpenSSL's default
     suite order: TLS_AES_256_GCM_SHA384), odd ones TLS 1.2 with ECDHE-RSA and, in turn,
     AES128-GCM-SHA256, AES256-GCM-SHA384, CHACHA20-POLY1305 and AES128-SHA256 (CBC, encrypt-then-mac).
     Writes are whole messages (ssl cuts them into records of up to 16 KB, TCP into segments).
  3. Requires "0 packets dropped by kernel", passes the capture through bench-capture.py's
     post-processing (which must find no super-packet to split; it recomputes checksums), and
     verifies with tshark: every frame <= 1514 bytes, no lost segment, one TCP stream per connection.
  4. Writes FILE (pcap), FILE.keys (NSS key log) and FILE.json (parameters, sha256 of both,
     counts). A later run with the same parameters reuses them while they match (unless --regenerate).

Prints the capture path as the last line of stdout; the key log is that path + ".keys".
"""

import argparse
import importlib.util
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("bench_capture", os.path.join(HERE, "bench-capture.py"))
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)

GENERATOR_VERSION = 1
NETNS_MARK = "METERAUDIT_BENCH_TLS_NETNS"
TLS12_CIPHERS = ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
                 "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-AES128-SHA256"]
OFFLOADS = ["tso", "gso", "gro", "tx", "rx", "sg"]


def log(msg):
    print(f"bench-tls-capture: {msg}", file=sys.stderr, flush=True)


def whole_writes(sock, data, _mss):
    """One sendall per message: ssl makes 16 KB records, TCP (offloads off) MSS-sized segments."""
    sock.sendall(data)


bc.send_segments = whole_writes


def setup_namespace_loopback():
    """In our own network namespace: lo up at MTU 1500, offloads off. Returns ethtool's view."""
    subprocess.run(["ip", "link", "set", "lo", "mtu", "1500", "up"], check=True)
    for feature in OFFLOADS:  # one at a time: a feature lo cannot change must not stop the others
        subprocess.run(["ethtool", "-K", "lo", feature, "off"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    out = subprocess.run(["ethtool", "-k", "lo"], check=True, stdout=subprocess.PIPE, text=True).stdout
    wanted = ("tcp-segmentation-offload:", "generic-segmentation-offload:", "generic-receive-offload:",
              "tx-checksumming:", "scatter-gather:")
    state = {line.split(":")[0].strip(): line.split(":")[1].split()[0]
             for line in out.splitlines() if line.strip().startswith(wanted)}
    link = subprocess.run(["ip", "-o", "link", "show", "lo"], check=True, stdout=subprocess.PIPE, text=True).stdout
    mtu = int(link.split(" mtu ")[1].split()[0])
    # lo's checksum and scatter-gather features cannot be turned off (the kernel leaves checksums
    # "partial": post-processing recomputes them); segmentation and receive offloads must be off.
    segmenting = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload")
    if mtu != 1500 or any(state.get(k) != "off" for k in segmenting):
        raise RuntimeError(f"loopback not set up: mtu {mtu}, offloads {state}")
    return {"mtu": mtu, "offloads": state}


def make_certificate(work):
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


class TLSServer(bc.Server):
    """bench-capture.py's server, each accepted connection wrapped in TLS before it is served."""

    def __init__(self, ctx, *a):
        super().__init__(*a)
        self.ctx = ctx

    def serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            t = threading.Thread(target=self.handle_tls, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    def handle_tls(self, conn):
        try:
            conn.settimeout(30)
            tls = self.ctx.wrap_socket(conn, server_side=True)
        except Exception as e:  # noqa: BLE001 - recorded and reported by the caller
            self.errors.append(f"server handshake: {e!r}")
            conn.close()
            return
        self.handle(tls)


def client_context(index):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if index % 2 == 0:
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
        return ctx, "TLSv1.3", None
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    cipher = TLS12_CIPHERS[(index // 2) % len(TLS12_CIPHERS)]
    ctx.set_ciphers(cipher)
    return ctx, "TLSv1.2", cipher


def run_tls_client(index, port, exchanges, deadline, gate, stats, errors, lock):
    """bench-capture.py's run_client over TLS; records the negotiated version and suite."""
    try:
        ctx, _, _ = client_context(index)
        with gate:
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, bc.MSS_OPTION)
            raw.settimeout(30)
            raw.connect((bc.HOST, port))
            bc.tune(raw)
            mss = raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
            s = ctx.wrap_socket(raw, server_hostname="localhost")
            suite = f"{s.version()} {s.cipher()[0]}"
            rd = bc.Reader(s)
            done = 0
            for ex in exchanges:
                if time.monotonic() > deadline:
                    raise TimeoutError("generation deadline exceeded")
                s.sendall(bc.encode_request(ex, port))
                status, headers = rd.head()
                if " 304 " not in status + " ":
                    rd.body(headers)
                done += 1
            s.settimeout(10)
            while s.recv(65536):
                pass
            s.close()
            with lock:
                stats["exchanges"] += done
                stats["mss"].add(mss)
                stats["suites"][suite] = stats["suites"].get(suite, 0) + 1
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"client {index}: {e!r}")


def generate(args, raw_path, keys_path, work):
    text, catalogue, bodies, conns, mix = bc.plan(args)
    n_ex = sum(len(c) for c in conns)

    cert, key = make_certificate(work)
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(cert, key)
    sctx.minimum_version = ssl.TLSVersion.TLSv1_2
    sctx.set_ciphers("ALL")
    sctx.keylog_filename = keys_path  # every connection's secrets (TLS 1.2 and 1.3), one writer

    deadline = time.monotonic() + args.timeout
    server = TLSServer(sctx, args.seed, catalogue, bodies, text, args.port, deadline)
    stats = {"exchanges": 0, "mss": set(), "suites": {}}

    def client(index, exchanges, gate, errors, lock):
        run_tls_client(index, server.port, exchanges, deadline, gate, stats, errors, lock)

    traffic_s, tstats = bc.drive(server, raw_path, conns, deadline, len(conns), client, stats)
    log(f"traffic done in {traffic_s:.1f}s; tcpdump: {tstats}; suites: {stats['suites']}")
    return {"exchanges": n_ex, "http_messages": 2 * n_ex, "connections": len(conns), "mix": mix,
            "suites": dict(sorted(stats["suites"].items())), "server_port": server.port,
            "mss": sorted(stats["mss"]), "traffic_seconds": round(traffic_s, 1), "tcpdump": tstats}


def reusable(out, keys, meta_path, params):
    meta = bc.reusable(out, meta_path, params)
    try:
        if meta and os.path.getsize(keys) == meta["keys_bytes"] and bc.sha256(keys) == meta["keys_sha256"]:
            return meta
    except (OSError, KeyError):
        pass
    return None


def in_namespace(args, out, keys, meta_path, params):
    """The generation proper, inside our network namespace."""
    loopback = setup_namespace_loopback()
    log(f"network namespace: lo {loopback}")
    work = tempfile.mkdtemp(prefix="bench-tls-capture.")
    raw, tmp, tmp_keys = out + ".raw", out + ".tmp", keys + ".tmp"
    try:
        if os.path.exists(tmp_keys):
            os.unlink(tmp_keys)
        t0 = time.monotonic()
        try:
            info = generate(args, raw, tmp_keys, work)
        except (RuntimeError, OSError, ssl.SSLError) as e:
            log(f"generation failed: {e}")
            return 1
        if info["tcpdump"]["dropped by kernel"]:
            log(f"tcpdump dropped {info['tcpdump']['dropped by kernel']} packets")
            return 1
        pp = bc.postprocess(raw, tmp)
        log(f"post-processed: {pp}")
        if pp["superpackets_split"]:
            log(f"{pp['superpackets_split']} segments larger than a frame: offloads were not off")
            return 1
        ver = bc.tshark_verify(tmp)
        log(f"tshark: {ver}")
        if ver["max_frame_len"] > bc.MAX_FRAME or ver["lost_segments"] or ver["tcp_streams"] != args.connections:
            log("verification failed (frame size, lost segments or stream count)")
            return 1
        size = os.path.getsize(tmp)
        if size < args.size_mb * 1_000_000:
            log(f"capture is {size / 1e6:.1f} MB, less than {args.size_mb} MB")
            return 1
        os.replace(tmp, out)
        os.replace(tmp_keys, keys)
        meta = {"params": params, "file": os.path.basename(out), "bytes": size, "sha256": bc.sha256(out),
                "keys": os.path.basename(keys), "keys_bytes": os.path.getsize(keys), "keys_sha256": bc.sha256(keys),
                "loopback": loopback, **info, "postprocess": pp, "verify": ver,
                "generated_seconds": round(time.monotonic() - t0, 1)}
        with open(meta_path, "w") as f:
            bc.json.dump(meta, f, indent=2)
            f.write("\n")
        log(f"wrote {out} ({size / 1e6:.1f} MB, {info['exchanges']} exchanges on {info['connections']} "
            f"connections, {ver['frames']} frames, max frame {ver['max_frame_len']} B) and {keys}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for p in (raw, tmp, tmp_keys):
            if os.path.exists(p):
                os.unlink(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="capture path (default bench-data/https-bench-<N>mb-s<SEED>.pcap at the repo root)")
    ap.add_argument("--size-mb", type=int, default=60, help="minimum capture size in MB (10^6 bytes); default 60")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--port", type=int, default=28932, help="server port on 127.0.0.1 (in our own namespace)")
    ap.add_argument("--timeout", type=int, default=300, help="traffic deadline in seconds (default 300)")
    ap.add_argument("--regenerate", action="store_true", help="ignore an existing capture")
    args = ap.parse_args()
    if args.size_mb < 1 or args.connections < 1:
        ap.error("--size-mb and --connections must be positive")

    repo = os.path.dirname(HERE)
    out = os.path.abspath(args.out or os.path.join(repo, "bench-data", f"https-bench-{args.size_mb}mb-s{args.seed}.pcap"))
    keys, meta_path = out + ".keys", out + ".json"
    params = {"generator_version": GENERATOR_VERSION, "base_generator_version": bc.GENERATOR_VERSION,
              "size_mb": args.size_mb, "seed": args.seed, "connections": args.connections}
    if os.environ.get(NETNS_MARK) == "1":
        return in_namespace(args, out, keys, meta_path, params)

    if not args.regenerate:
        meta = reusable(out, keys, meta_path, params)
        if meta:
            log(f"reusing {out} ({meta['bytes'] / 1e6:.1f} MB, {meta['http_messages']} HTTP messages)")
            print(out)
            return 0
    for tool in ("tcpdump", "tshark", "openssl", "ethtool", "ip", "unshare"):
        if not shutil.which(tool):
            log(f"{tool} not found (run scripts/setup --samples)")
            return 2
    if os.geteuid() != 0:
        log("needs root (a network namespace and tcpdump)")
        return 2
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for p in (out, keys, meta_path):
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, **{NETNS_MARK: "1"})
    argv = [sys.executable, os.path.abspath(__file__), "--out", out, "--size-mb", str(args.size_mb),
            "--seed", str(args.seed), "--connections", str(args.connections), "--port", str(args.port),
            "--timeout", str(args.timeout)]
    # The namespace (and its lo) ends with the child: nothing to tear down.
    rc = subprocess.run(["unshare", "--net", "--"] + argv, env=env, stdout=subprocess.DEVNULL).returncode
    if rc != 0:
        return rc
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
