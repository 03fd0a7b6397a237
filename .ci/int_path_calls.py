"""What `.ci/check-int-path.sh` runs on each image's disassembly (llvm-objdump -d
--demangle): the functions reachable from a root by direct calls and branches, and whether
any of them is forbidden on the integer hedge path. Exit status 1 if one is.

    python3 .ci/int_path_calls.py LISTING ROOT TARGET
"""

import bisect
import re
import sys

# Soft-float helpers (ARM EABI and compiler-rt names), libm, compiler-builtins' float
# code, and division of any width (64-bit is what matters: __aeabi_uldivmod is hundreds
# of instructions on a Cortex-M; the path needs no 32-bit one either).
FORBIDDEN = re.compile(
    r"^(__aeabi_[df]\w*"
    r"|__aeabi_u?ldivmod|__aeabi_l(div|mod)"
    r"|__(add|sub|mul|div|neg|pow)[sdt]f[23]|__powi[sdt]f2"
    r"|__fix(uns)?[sdt]f[sdt]i|__float(un)?[sdt]i[sdt]f"
    r"|__(eq|ne|lt|le|gt|ge|un|cmp)[sdt]f2|__extend\w+|__trunc[sdt]f\w+"
    r"|__u?(div|mod)[dt]i3|__u?divmod[dt]i4"
    # and 32-bit division (none is needed either: a library call on the Cortex-M0)
    r"|__aeabi_u?idiv(mod)?|__u?(div|mod)si3|__u?divmodsi4)$"
    r"|\blibm::|compiler_builtins::float::|compiler_builtins::math::"
    r"|compiler_builtins::int::specialized_div_rem::u(64|128)"
)
# VFP arithmetic and conversions (the Cortex-M4F's single-precision FPU): an integer path
# has none. Moves, loads and stores of registers are not float operations.
FLOAT_INSN = re.compile(r"^v(add|sub|mul|nmul|div|mla|mls|nmla|nmls|fma|fms|fnma|fnms|cvt\w*|sqrt|cmp|cmpe|neg|abs|rint\w*|sel\w*|max\w*|min\w*)(\.|$)")
HEADER = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
TARGET = re.compile(r"0x([0-9a-f]+) <")


def main():
    listing, root, target = sys.argv[1:4]
    starts, names, body = [], [], {}
    current = None
    for line in open(listing, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        header = HEADER.match(line)
        if header:
            name = header.group(2)
            if name.startswith("$"):  # a mapping symbol ($t code, $d data): same function
                continue
            current = name
            starts.append(int(header.group(1), 16))
            names.append(name)
            body.setdefault(name, [])
            continue
        insn = INSN.match(line)
        if current and insn and not insn.group(2).startswith("."):
            body[current].append((insn.group(2), insn.group(3)))

    def function_at(address):
        i = bisect.bisect_right(starts, address) - 1
        return names[i] if i >= 0 else None

    if root not in body:
        print(f"check-int-path: {target}: no function {root} in the image", file=sys.stderr)
        return 1
    seen, stack, problems = {root}, [root], []
    parent = {root: None}

    def chain(name):
        path = []
        while name is not None:
            path.append(name)
            name = parent[name]
        return " <- ".join(path)

    while stack:
        name = stack.pop()
        if FORBIDDEN.search(name):
            problems.append(f"reaches {chain(name)}")
            continue  # its own callees are the helper's business
        for mnemonic, operands in body.get(name, []):
            m = mnemonic.split(".")[0]
            if FLOAT_INSN.match(mnemonic):
                problems.append(f"{name}: float instruction {mnemonic} {operands}")
            if m in ("blx", "bx") and re.match(r"^r\d+|^r(ip|12)", operands) and not operands.startswith("lr"):
                problems.append(f"{name}: indirect branch {mnemonic} {operands}")
            if m.startswith("b") or m.startswith("cb"):
                found = TARGET.search(operands)
                if found:
                    callee = function_at(int(found.group(1), 16))
                    if callee and callee not in seen:
                        seen.add(callee)
                        parent[callee] = name
                        stack.append(callee)
    for problem in sorted(set(problems)):
        print(f"check-int-path: {target}: {problem}", file=sys.stderr)
    reachable = sum(len(body.get(n, [])) for n in seen)
    print(
        f"{target}: {len(seen)} functions, {reachable} instructions reachable from {root}: "
        + ("FORBIDDEN code reachable" if problems else "integer only")
    )
    if "-v" in sys.argv[4:]:
        for n in sorted(seen):
            print("   ", n)
    return 1 if problems else 0


sys.exit(main())
