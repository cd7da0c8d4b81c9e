#!/bin/sh
# Regenerates the committed CaptureIO fixtures with Wireshark's own tools, so that these files
# do not come from the project's test writer (an independent check of the pcapng reader).
#   two-linktypes.pcapng   mergecap of an Ethernet and a raw-IPv4 capture made by text2pcap:
#                          two interfaces with different link types, frames interleaved in time.
#   two-linktypes.pcapng.gz   the same, gzip -9 compressed.
# Expected values are asserted in Tests/CaptureIOTests/WiresharkFixtureTests.swift.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TZ=UTC

cat > "$work/ether.txt" <<'HEX'
2023-11-14T22:13:20.000000001Z
0000  ff ff ff ff ff ff 02 00 00 00 00 01 08 00 45 00
0010  00 14 00 01 00 00 40 06 00 00 0a 00 00 01 0a 00
0020  00 02

2023-11-14T22:13:20.500000000Z
0000  02 00 00 00 00 01 02 00 00 00 00 02 86 dd 60 00

2023-11-14T22:13:21.250000123Z
0000  02 00 00 00 00 02 02 00 00 00 00 01 08 06 00 01
0010  08 00 06 04 00 01
HEX

cat > "$work/raw.txt" <<'HEX'
2023-11-14T22:13:20.250000000Z
0000  45 00 00 14 00 02 00 00 40 11 00 00 c0 a8 00 01
0010  c0 a8 00 02

2023-11-14T22:13:21.000000999Z
0000  45 00 00 18 00 03 00 00 40 01 00 00 c0 a8 00 02
0010  c0 a8 00 01 08 00 00 00
HEX

text2pcap -q -t ISO -l 1 -N eth0 "$work/ether.txt" "$work/ether.pcapng"
text2pcap -q -t ISO -l 101 -N tun0 "$work/raw.txt" "$work/raw.pcapng"
mergecap -F pcapng -w two-linktypes.pcapng "$work/ether.pcapng" "$work/raw.pcapng"
gzip -9 -n -c two-linktypes.pcapng > two-linktypes.pcapng.gz
