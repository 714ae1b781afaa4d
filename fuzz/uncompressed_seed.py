#!/usr/bin/env python3
# Usage: fuzz/uncompressed_seed.py OUT_DIR entry.bin... (entries from Compiled::serialize or a cache directory).
# Rewrites a serialised executable with its payload uncompressed (flags 0) and a zero checksum: a seed that
# libFuzzer's mutations reach the sections of (the fuzz target recomputes the size and checksum).
import struct, subprocess, sys
def rewrite(src, dst):
    b = open(src, 'rb').read()
    pos = 8 + 4 + 8
    head = b[:pos]
    for _ in range(10):
        (n,) = struct.unpack_from('<Q', b, pos); pos += 8 + n
    fields = b[20:pos]
    flags, raw = struct.unpack_from('<IQ', b, pos); pos += 12
    packed = b[pos:-8]
    payload = subprocess.run(['zstd', '-d', '-c'], input=packed, capture_output=True, check=True).stdout
    assert len(payload) == raw
    body = head[:12] + b'\0' * 8 + fields + struct.pack('<IQ', 0, len(payload)) + payload
    total = len(body) + 8
    body = body[:12] + struct.pack('<Q', total) + body[20:]
    open(dst, 'wb').write(body + b'\0' * 8)
for a in sys.argv[2:]: rewrite(a, sys.argv[1] + '/' + a.replace('.bin', '_raw.bin'))
