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

import importlib.util
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
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


def launch_in_namespace(script, mark, args, out, outputs, tools, log, extra_argv=()):
    """Outside the namespace: checks the tools and root, removes the old `outputs`, then re-runs
    `script` with the same parameters (and `extra_argv`) in a network namespace of its own, the
    environment variable `mark` set. Prints `out` on success; returns the exit status."""
    for tool in tools:
        if not shutil.which(tool):
            log(f"{tool} not found (run scripts/setup --samples)")
            return 2
    if os.geteuid() != 0:
        log("needs root (a network namespace and tcpdump)")
        return 2
    os.makedirs(os.path.dirname(out), exist_ok=True)
    for p in outputs:
        if os.path.exists(p):
            os.unlink(p)
    env = dict(os.environ, **{mark: "1"})
    argv = [sys.executable, os.path.abspath(script), "--out", out, "--size-mb", str(args.size_mb),
            "--seed", str(args.seed), "--connections", str(args.connections), "--port", str(args.port),
            "--timeout", str(args.timeout), *extra_argv]
    # The namespace (and its lo) ends with the child: nothing to tear down.
    rc = subprocess.run(["unshare", "--net", "--"] + argv, env=env, stdout=subprocess.DEVNULL).returncode
    if rc != 0:
        return rc
    print(out)
    return 0


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

    def accepted(self, conn):
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
            raw, mss = bc.connect(port)
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
            bc.finish_client(s, done, mss, stats, lock)
            with lock:
                stats["suites"][suite] = stats["suites"].get(suite, 0) + 1
    except Exception as e:  # noqa: BLE001
        with lock:
            errors.append(f"client {index}: {e!r}")


def generate(args, raw_path, keys_path, work):
    text, catalogue, bodies, conns, mix = bc.plan(args)
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
    return bc.traffic_info(conns, mix, server, stats, traffic_s, tstats, suites=dict(sorted(stats["suites"].items())))


def reusable(out, meta_path, params):
    """bench-capture.py's check, and the key log (out + ".keys") must match its metadata too."""
    meta = bc.reusable(out, meta_path, params)
    keys = out + ".keys"
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
        meta = bc.publish_capture(args, info, raw, tmp, out, meta_path, {"params": params, "loopback": loopback},
                                  t0, log, companions=[(tmp_keys, keys, "keys")])
        if meta is None:
            return 1
        log(f"wrote {out} ({meta['bytes'] / 1e6:.1f} MB, {info['exchanges']} exchanges on {info['connections']} "
            f"connections, {meta['verify']['frames']} frames, max frame {meta['verify']['max_frame_len']} B) and {keys}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for p in (raw, tmp, tmp_keys):
            if os.path.exists(p):
                os.unlink(p)


def main():
    ap = bc.arguments(__doc__, "https-bench", 64, 28932, "server port on 127.0.0.1 (in our own namespace)")
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

    if not args.regenerate and bc.reuse(out, meta_path, params, log, check=reusable):
        return 0
    return launch_in_namespace(__file__, NETNS_MARK, args, out, (out, keys, meta_path),
                               ("tcpdump", "tshark", "openssl", "ethtool", "ip", "unshare"), log)


if __name__ == "__main__":
    sys.exit(main())
