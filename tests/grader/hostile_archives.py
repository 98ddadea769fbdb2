#!/usr/bin/env python3
"""Hostile archives as students hand them in, for the hostile test's batch.

   hostile_archives.py CLASS_DIR SOLUTION SECRET_FILE

Writes one student folder per case under CLASS_DIR (h-arch-<case>/) and
prints, per case, the student, the verdict gradebook.csv must give them
(compile_error, missing, or "graded": any verdict of a file that ran) and a
phrase the batch's log must say about them. The archives are made here, at
test time: a bomb is small only while it is packed.
"""
import io
import os
import sys
import tarfile
import zipfile

cls, solution, secret = sys.argv[1], sys.argv[2], sys.argv[3]
honest = open(solution, "rb").read()


def folder(case):
    d = os.path.join(cls, "h-arch-" + case)
    os.makedirs(d, exist_ok=True)
    return d


def tar_add(t, name, data=b"", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    t.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


cases = []

# Zip slip: entries that climb out, beside the honest file.
with zipfile.ZipFile(os.path.join(folder("zip-slip"), "exercise3.zip"), "w") as z:
    z.writestr("../../../../../../pwned", b"escaped")
    z.writestr("exercise3.cpp", honest)
cases.append(("zip-slip", "graded", "climbs out of the archive"))

# Absolute paths in a tarball.
with tarfile.open(os.path.join(folder("tar-absolute"), "lab.tar"), "w") as t:
    tar_add(t, "/tmp/pwned", b"escaped")
    tar_add(t, "exercise3.cpp", honest)
cases.append(("tar-absolute", "graded", "its path is absolute"))

# Links: a symbolic link and a hard link, named for the exercise, to the secret.
with tarfile.open(os.path.join(folder("tar-symlink"), "exercise3.tar.gz"), "w:gz") as t:
    tar_add(t, "exercise3.cpp", kind=tarfile.SYMTYPE, link=secret)
cases.append(("tar-symlink", "missing", "a symbolic link (to"))
with tarfile.open(os.path.join(folder("tar-hardlink"), "exercise3.tgz"), "w:gz") as t:
    tar_add(t, "exercise3.cpp", kind=tarfile.LNKTYPE, link=secret.lstrip("/"))
cases.append(("tar-hardlink", "missing", "a hard link (to"))

# A device entry named for the exercise.
with tarfile.open(os.path.join(folder("tar-device"), "exercise3.tar"), "w") as t:
    tar_add(t, "exercise3.cpp", kind=tarfile.CHRTYPE)
cases.append(("tar-device", "missing", "a device, fifo or socket"))

# Bombs: by size (a zip's headers say 300 MiB), by ratio (a gzip stream of zeros).
with zipfile.ZipFile(os.path.join(folder("bomb-size"), "exercise3.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("exercise3.cpp", b"\0" * (300 << 20))
cases.append(("bomb-size", "compile_error", "unpacks to more than 256 MiB"))
with tarfile.open(os.path.join(folder("bomb-ratio"), "exercise3.tar.gz"), "w:gz") as t:
    tar_add(t, "exercise3.cpp", honest)
    tar_add(t, "padding.bin", b"\0" * (64 << 20))
cases.append(("bomb-ratio", "compile_error", "times its size"))

# Ten thousand entries.
with zipfile.ZipFile(os.path.join(folder("many-entries"), "exercise3.zip"), "w") as z:
    for i in range(10000):
        z.writestr(f"f/{i}.txt", b"")
    z.writestr("exercise3.cpp", honest)
cases.append(("many-entries", "compile_error", "more than 5000 entries"))

# Nested: one level down is opened, two levels down is not.
deepest = io.BytesIO()
with zipfile.ZipFile(deepest, "w") as z:
    z.writestr("exercise3.cpp", b"this is not the file that is graded")
inner = io.BytesIO()
with zipfile.ZipFile(inner, "w") as z:
    z.writestr("deeper.zip", deepest.getvalue())
    z.writestr("exercise3.cpp", honest)
with zipfile.ZipFile(os.path.join(folder("nested"), "hand-in.zip"), "w") as z:
    z.writestr("inner.zip", inner.getvalue())
cases.append(("nested", "graded", "an archive inside an archive inside the archive"))

# Not an archive at all.
with open(os.path.join(folder("garbage"), "exercise3.zip"), "wb") as f:
    f.write(os.urandom(4096))
cases.append(("garbage", "compile_error", "not a zip or tar archive"))

for case, verdict, phrase in cases:
    print(f"h-arch-{case}\t{verdict}\t{phrase}")
