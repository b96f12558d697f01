# A stub of a shared library for scripts/gpu-bundle.sh: the same soname and
# dynamic symbols (with their versions), no code. Usage: gpu-stub.py LIB OUT
import subprocess, sys, re, os
lib, out = sys.argv[1], sys.argv[2]
soname = os.path.basename(lib)
txt = subprocess.run(["readelf", "--dyn-syms", "-W", lib], capture_output=True, text=True).stdout
vers = {}
plain = []
defs = []
for line in txt.splitlines():
    p = line.split()
    if len(p) < 8 or not p[0].endswith(":"): continue
    num, val, size, typ, bind, vis, ndx, name = p[:8]
    if ndx == "UND" or typ not in ("FUNC", "OBJECT", "IFUNC", "TLS") or bind == "LOCAL": continue
    if "@@" in name: n, v = name.split("@@", 1)
    elif "@" in name: continue
    else: n, v = name, None
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", n): continue
    sz = int(size, 0) if size.startswith("0x") else int(size)
    defs.append((n, typ, min(max(sz, 8), 64)))
    (vers.setdefault(v, []) if v else plain).append(n)
c = []
for n, typ, sz in defs:
    if typ == "OBJECT": c.append(f"char {n}[{sz}];")
    elif typ == "TLS": c.append(f"__thread char {n}[{sz}];")
    else: c.append(f"void {n}(void) {{}}")
open(out + ".c", "w").write("\n".join(c) + "\n")
vs = []
names = list(vers.keys())
if names:
    for i, v in enumerate(names):
        syms = vers[v] + (plain if i == 0 else [])
        vs.append(v + " { global: " + "".join(s + "; " for s in syms) + ("local: *; " if i == 0 else "") + "};")
    open(out + ".map", "w").write("\n".join(vs) + "\n")
    extra = ["-Wl,--version-script=" + out + ".map"]
else:
    extra = []
subprocess.run(["gcc", "-shared", "-fPIC", "-w", "-o", out, out + ".c", "-Wl,-soname," + soname] + extra, check=True)
