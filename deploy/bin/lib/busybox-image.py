#!/usr/bin/env python3
"""Writes a `docker save` archive of a one-layer image holding Debian's static busybox.

Usage: busybox-image.py OUT.tar REFERENCE   (e.g. bench/busybox:1)
Used by deploy/bin/bench to give the image-template rounds an image without a registry
(`agentbox image import OUT.tar`). Needs /bin/busybox statically linked (Debian busybox-static).
"""
import hashlib
import io
import json
import os
import platform
import sys
import tarfile


def entry(tar, name, kind=tarfile.REGTYPE, mode=0o644, data=b"", link=""):
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname, info.mtime = kind, mode, link, 1714564800
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, ref = sys.argv[1], sys.argv[2]
    with open("/bin/busybox", "rb") as f:
        busybox = f.read()
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, mode in (("bin", 0o755), ("etc", 0o755), ("home", 0o755), ("root", 0o700), ("tmp", 0o1777)):
            entry(t, name, tarfile.DIRTYPE, mode)
        entry(t, "bin/busybox", mode=0o755, data=busybox)
        for applet in ("sh", "true", "cat", "echo", "ls", "sleep", "id"):
            entry(t, "bin/" + applet, tarfile.SYMTYPE, 0o777, link="busybox")
        entry(t, "etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\n")
        entry(t, "etc/group", data=b"root:x:0:\n")
    layer_bytes = layer.getvalue()
    diff_id = hashlib.sha256(layer_bytes).hexdigest()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    config = json.dumps({"architecture": arch, "os": "linux",
                         "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]}}).encode()
    config_hex = hashlib.sha256(config).hexdigest()
    manifest = json.dumps([{"Config": config_hex + ".json", "RepoTags": [ref],
                            "Layers": [diff_id + "/layer.tar"]}]).encode()
    with tarfile.open(out, "w") as t:
        entry(t, diff_id, tarfile.DIRTYPE, 0o755)
        entry(t, diff_id + "/layer.tar", data=layer_bytes)
        entry(t, config_hex + ".json", data=config)
        entry(t, "manifest.json", data=manifest)
    print(f"{out}: {ref}, {len(layer_bytes) / 1e6:.1f} MB layer", file=sys.stderr)


if __name__ == "__main__":
    main()
