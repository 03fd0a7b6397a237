#!/usr/bin/env python3
"""Every public item is documented, and has a runnable example.

The project rule: docs with a runnable example on every public item. This reads rustdoc's
JSON output for the library with every feature on, walks the public API from the crate root
(modules and `pub use` re-exports, so only what a user can name), and reports

* any public item without docs (types, traits, functions, methods, associated consts and
  types, constants, enum variants, public fields), and
* any public type (struct, enum, type alias), trait, free function or method (inherent, or
  declared by a public trait) without an example: a Rust code block (```` ``` ````,
  ```` ```rust ````, ```` ```should_panic ````, ...; not ```` ```text ````, ````ignore````,
  ````no_run```` or ````compile_fail````, which run nothing) in its own docs. A method also
  passes when an example in its type's (or trait's) docs calls it: `.name(` for a method
  with a receiver, `Type::name` for an associated function (`Type` being the type, `Self`,
  or an alias of it; for a trait's, any implementor, a generic parameter included). That
  is how a type's example covers its trivial accessors; a name match, so a call of
  another type's method of the same name counts too.

Implementations of traits (`impl Display for X`, derived or not) are not checked: their
docs are the trait's. Items under `#[doc(hidden)]` are not in rustdoc's output at all.

Usage (from the repository root; the JSON takes a nightly rustdoc, about 20 s from cold,
the check itself under a second):

    cargo +nightly rustdoc --lib --all-features -- -Z unstable-options --output-format json
    python3 .ci/check-doc-examples.py [path/to/tailguard.json]

Whether the examples pass is `cargo test --doc --all-features`'s business, not this.

The path defaults to $CARGO_TARGET_DIR (or target)/doc/tailguard.json. Prints each offender
as `file:line: kind path: what is missing`, and exits 1 if there is any (0 otherwise, 2 if the
JSON is unreadable or of a format this script does not know).
"""

import json
import os
import re
import sys

# Items exempt from needing an example, each with its reason. Keep it short: an exemption
# is a doc a user cannot copy from. Keys are the item's public path.
ALLOW_NO_EXAMPLE = {}

# The code-block attributes under which rustdoc runs nothing.
NOT_RUN = {"text", "ignore", "no_run", "compile_fail", "plain", "console", "sh", "bash",
           "toml", "json", "python", "c", "sql"}

FENCE = re.compile(r"^\s*(```+|~~~+)\s*([^`]*)$")


def code_blocks(docs):
    """The Rust code blocks of a doc string (each as its text), which rustdoc would run."""
    blocks, cur, fence, runs = [], None, None, False
    for line in (docs or "").splitlines():
        m = FENCE.match(line)
        if cur is None:
            if m:
                fence = m.group(1)
                attrs = {a.strip() for a in re.split(r"[,\s]+", m.group(2)) if a.strip()}
                attrs = {a for a in attrs if not a.startswith("edition")}
                # Rust unless another language is named; `rust` alone or with test attrs.
                lang_ok = all(a in {"rust", "should_panic"} or a.startswith("ignore-")
                              for a in attrs)
                runs = lang_ok and not (attrs & NOT_RUN)
                cur = []
        elif m and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence) \
                and not m.group(2).strip():
            if runs:
                blocks.append("\n".join(cur))
            cur = None
        else:
            cur.append(line)
    return blocks


def main():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(target, "doc", "tailguard.json")
    try:
        with open(path) as f:
            krate = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check-doc-examples: cannot read {path}: {e}\n(build it with: cargo +nightly "
              "rustdoc --lib --all-features -- -Z unstable-options --output-format json)",
              file=sys.stderr)
        return 2
    if krate.get("format_version", 0) < 45:
        print(f"check-doc-examples: rustdoc JSON format {krate.get('format_version')} is too "
              "old (needs 45 or later: a recent nightly)", file=sys.stderr)
        return 2
    index = krate["index"]

    def item(i):
        return index.get(str(i))

    def kind(it):
        return next(iter(it["inner"])) if isinstance(it["inner"], dict) else it["inner"]

    offenders = []  # (file, line, kind, path, problem)
    seen = set()
    # Names by which each type can be called (`Type::new`): its own and its aliases'.
    aliases = {}

    def where(it):
        span = it.get("span") or {}
        return span.get("filename", "?"), (span.get("begin") or [0])[0]

    def report(it, path, problem):
        if path in ALLOW_NO_EXAMPLE and problem == "no example":
            return
        f, line = where(it)
        offenders.append((f, line, kind(it), path, problem))

    def has_docs(it):
        return bool((it.get("docs") or "").strip())

    # First pass: the public items, by walking modules and re-exports from the root.
    public = []  # (id, path)

    def walk(mod_id, prefix):
        mod = item(mod_id)
        for child_id in mod["inner"]["module"]["items"]:
            child = item(child_id)
            if child is None or child["crate_id"] != 0:
                continue
            k = kind(child)
            if k == "use":
                use = child["inner"]["use"]
                target_item = item(use["id"]) if use.get("id") is not None else None
                if target_item is None or target_item["crate_id"] != 0:
                    continue
                if use["is_glob"]:
                    if kind(target_item) == "module":
                        walk(use["id"], prefix)
                    continue
                visit(use["id"], f"{prefix}::{use['name']}", via_use=True)
            else:
                visit(child_id, f"{prefix}::{child['name']}")

    def visit(i, path, via_use=False):
        it = item(i)
        if kind(it) == "type_alias":
            target = it["inner"]["type_alias"]["type"].get("resolved_path")
            if target:
                aliases.setdefault(target["id"], set()).add(path.rsplit("::", 1)[1])
        if i in seen:
            return
        seen.add(i)
        public.append((i, path))
        if kind(it) == "module":
            walk(i, path)

    walk(krate["root"], "tailguard")

    def examples_of(it):
        return code_blocks(it.get("docs"))

    methods = [0]

    def check_method(m, owner, owner_path, owner_names, owner_examples):
        path = f"{owner_path}::{m['name']}"
        methods[0] += 1
        if not has_docs(m):
            report(m, path, "no docs")
            return
        if examples_of(m):
            return
        fn = m["inner"]["function"]
        inputs = fn["sig"]["inputs"]
        has_self = bool(inputs) and inputs[0][0] == "self"
        name = re.escape(m["name"])
        if has_self:
            pat = re.compile(rf"\.{name}\s*(\(|::<)")
        elif kind(owner) == "trait":
            # Through any implementor (`LogMapping::new`, a generic `M::new`).
            pat = re.compile(rf"\b\w+(?:::<[^>]*>)?::{name}\b")
        else:
            names = "|".join(re.escape(n) for n in owner_names | {"Self"})
            pat = re.compile(rf"\b(?:{names})(?:::<[^>]*>)?::{name}\b")
        if any(pat.search(ex) for ex in owner_examples):
            return
        report(m, path, "no example (in its docs, or calling it in its type's)")

    for i, path in public:
        it = item(i)
        k = kind(it)
        if k == "module":
            if not has_docs(it):
                report(it, path, "no docs")
            continue
        if not has_docs(it):
            report(it, path, "no docs")
        elif k in {"struct", "enum", "union", "trait", "type_alias", "function"} \
                and not examples_of(it):
            report(it, path, "no example")
        names = {it["name"]} | aliases.get(i, set())
        owner_examples = examples_of(it)
        if k in {"struct", "enum", "union"}:
            inner = it["inner"][k]
            if k == "struct":
                sk = inner["kind"]
                fields = (sk.get("plain", {}) or {}).get("fields", []) if isinstance(sk, dict) \
                    else []
                if isinstance(sk, dict) and "tuple" in sk:
                    fields = [f for f in sk["tuple"] if f is not None]
                for f in fields:
                    fi = item(f)
                    if fi and fi["visibility"] == "public" and not has_docs(fi):
                        report(fi, f"{path}::{fi['name']}", "no docs")
            if k == "enum":
                for v in inner["variants"]:
                    vi = item(v)
                    if vi and not has_docs(vi):
                        report(vi, f"{path}::{vi['name']}", "no docs")
            for impl_id in inner["impls"]:
                impl = item(impl_id)
                if impl is None or impl["inner"]["impl"]["trait"] is not None:
                    continue
                for m_id in impl["inner"]["impl"]["items"]:
                    m = item(m_id)
                    if m is None or m["visibility"] != "public":
                        continue
                    mk = kind(m)
                    if mk == "function":
                        check_method(m, it, path, names, owner_examples)
                    elif not has_docs(m):
                        report(m, f"{path}::{m['name']}", "no docs")
        elif k == "trait":
            for m_id in it["inner"]["trait"]["items"]:
                m = item(m_id)
                if m is None:
                    continue
                if kind(m) == "function":
                    check_method(m, it, path, names, owner_examples)
                elif not has_docs(m):
                    report(m, f"{path}::{m['name']}", "no docs")

    offenders.sort()
    for f, line, k, path, problem in offenders:
        print(f"{f}:{line}: {k} {path}: {problem}")
    missing = sum(1 for o in offenders if o[4] != "no docs")
    undocumented = len(offenders) - missing
    print(f"check-doc-examples: {len(public)} public items and {methods[0]} methods checked; "
          f"{missing} without an example, {undocumented} without docs", file=sys.stderr)
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
