#!/usr/bin/env python3
"""The engine's API held against LibTorch's, name by name.

Reads the Tensor methods (ATen/core/TensorBody.h) and the free functions
(the ATen/ops/NAME.h headers ATen/Functions.h includes) of Debian's LibTorch,
asks the compiler which of them the engine's <torch/torch.h> lacks (taking a
member's or a function's address fails with "is not a member" only where the
name is missing, overloaded or not), and sorts every missing name with the
patterns of api_sweep.tsv: a pattern's class says why LibTorch's name is not
the engine's (out of the course's topics), or that it is to be added ("todo:",
named one by one). Fails when a missing name matches no pattern (a new gap:
decide it), or when a name listed as todo is no longer missing (the list is
stale: take it out). So the list of what the course still lacks is kept
true, and shrinks only by adding names to the engine.

  api_sweep.py LIBTORCH_INCLUDE ENGINE_INCLUDE CXX [--report FILE]
Exit 77 when LibTorch's headers are not there (libtorch-dev not installed).
"""
import os
import re
import subprocess
import sys
import tempfile


def libtorch_names(inc):
    body = os.path.join(inc, "ATen/core/TensorBody.h")
    funcs_h = os.path.join(inc, "ATen/Functions.h")
    if not (os.path.exists(body) and os.path.exists(funcs_h)):
        return None, None
    methods = set()
    for line in open(body, encoding="utf-8", errors="replace"):
        m = re.match(r"^  (?:[A-Za-z_:<>,&* ]+) ([a-z][a-z_0-9]*)\(", line)
        if m:
            methods.add(m.group(1))
    funcs = set()
    for line in open(funcs_h, encoding="utf-8", errors="replace"):
        m = re.match(r"#include <ATen/ops/([a-z][a-z_0-9]*)\.h>", line)
        if not m:
            continue
        path = os.path.join(inc, "ATen/ops", m.group(1) + ".h")
        for l in open(path, encoding="utf-8", errors="replace"):
            f = re.match(r"^(?:TORCH_API )?inline [^(]*?\b([a-z][a-z_0-9]*)\(", l)
            if f:
                funcs.add(f.group(1))
    internal = re.compile(r"(_out|_outf|_symint)$")
    return ({n for n in methods if not internal.search(n)}, {n for n in funcs if not internal.search(n)})


def missing(names, what, engine_inc, cxx):
    """The names the engine's headers lack, as `what` ("torch::Tensor::" or "torch::")."""
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("#include <torch/torch.h>\nvoid probe() {\n")
        for n in sorted(names):
            f.write(f"  (void)&{what}{n};\n")
        f.write("}\n")
        path = f.name
    try:
        every_error = "-ferror-limit=0" if "clang" in os.path.basename(cxx) else "-fmax-errors=0"
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", every_error, "-I", engine_inc, path],
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    scope = "gradlab::Tensor" if what.endswith("Tensor::") else "torch"
    out = set()
    # GCC: 'x' is not a member of 'torch'; clang: no member named 'x' in namespace 'torch'.
    for m in re.finditer(r"[‘']([a-z][a-z_0-9]*)[’'] is not a member of [‘']([A-Za-z:]+)[’']"
                         r"|no member named [‘']([a-z][a-z_0-9]*)[’'] in (?:namespace )?[‘']([A-Za-z:]+)[’']", r.stderr):
        name, where = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if where == scope:
            out.add(name)
    return out


def read_classes(path):
    rules = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        pattern, _, cls = line.partition("\t")
        if not cls:
            sys.exit(f"{path}:{n}: a line is PATTERN<TAB>CLASS")
        rules.append((re.compile(pattern), cls.strip(), n))
    return rules


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    inc, engine_inc, cxx = sys.argv[1:4]
    report = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--report" else None
    methods, funcs = libtorch_names(inc)
    if methods is None:
        print(f"LibTorch's headers are not under {inc} (Debian package libtorch-dev): skipped")
        return 77
    gaps = sorted({"Tensor::" + n for n in missing(methods, "torch::Tensor::", engine_inc, cxx)} |
                  {"torch::" + n for n in missing(funcs, "torch::", engine_inc, cxx)})
    rules = read_classes(os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_sweep.tsv"))
    by_class, unclassified, used = {}, [], set()
    for g in gaps:
        for pattern, cls, n in rules:
            if pattern.search(g):
                by_class.setdefault(cls, []).append(g)
                used.add(n)
                break
        else:
            unclassified.append(g)
    # A todo line names its names one by one: one no longer missing is done.
    stale = []
    for pattern, cls, n in rules:
        if cls.startswith("todo"):
            for name in pattern.pattern.strip("^$()").split("|"):
                if name not in gaps:
                    stale.append(f"api_sweep.tsv:{n}: {name} is in the engine now: take it out of the todo list")
    lines = [f"LibTorch {len(methods)} Tensor methods and {len(funcs)} functions; the engine lacks {len(gaps)}:"]
    for cls in sorted(by_class):
        lines.append(f"  {len(by_class[cls]):4d}  {cls}")
    todo = sorted(g for cls, gs in by_class.items() if cls.startswith("todo") for g in gs)
    lines.append("todo: " + " ".join(todo))
    text = "\n".join(lines) + "\n"
    if report:
        with open(report, "w", encoding="utf-8") as f:
            f.write(text)
    print(text, end="")
    for u in unclassified:
        print(f"unclassified: {u} is LibTorch's and not the engine's; give it a class in api_sweep.tsv")
    for s in stale:
        print(s)
    return 1 if unclassified or stale else 0


if __name__ == "__main__":
    sys.exit(main())
