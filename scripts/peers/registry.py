#!/usr/bin/env python3
"""registry.py: the workload registry, kernels/attention/registry/workloads.def, read by Python.

    registry.py [--def PATH] names     one workload name per line, in the file's (enum) order
    registry.py [--def PATH] show      a table of the rows
(PATH: default <repo>/kernels/attention/registry/workloads.def beside this script, or
$REPRO_WORKLOADS_DEF.)

load() returns one Workload per WORKLOAD(...) row. Reading is strict: a row that is not
`WORKLOAD(` thirteen comma-separated arguments `)` on one line, or an argument of the wrong
form, raises RegistryError naming the file, the line and what was expected. Feature names
are checked for their prefix only (LOGITS_, KEYS_, COL_, SEL_): whether an implementation
knows a feature is that implementation's question (workloads.formulation_missing for the
peers).
"""
import collections
import os
import re
import sys

# <repo>/kernels/attention/registry/workloads.def; $REPRO_WORKLOADS_DEF names another file (the
# tests use it).
DEF_PATH = os.environ.get("REPRO_WORKLOADS_DEF") or os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "attention", "registry",
    "workloads.def"))

OUTPUT_SLOTS = ("score", "score2", "flags")


class RegistryError(Exception):
    pass


class Workload(collections.namedtuple("Workload", (
        "id", "name", "logits", "keys", "column", "pool", "select", "score", "score2",
        "flags", "tol_rel_l2", "tol_max_abs", "where"))):
    """One row. score, score2, flags: output names or None; where: "file:line"."""
    __slots__ = ()

    @property
    def slots(self):
        """The output slots the row fills, after out: a subset of OUTPUT_SLOTS, in order."""
        return tuple(s for s in OUTPUT_SLOTS if getattr(self, s) is not None)

    @property
    def outputs(self):
        """Check-line names of the outputs: out, then score, score2, flags where present."""
        return ("out",) + tuple(getattr(self, s) for s in self.slots)


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_STRING = r'"[^"\\]*"'
_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
# (field, regex of the argument, what the error says was expected)
_FIELDS = (
    ("id", r"[A-Z][A-Z0-9_]*", "an enum suffix in capitals (ATTN)"),
    ("name", r'"[a-z][a-z0-9_]*"', 'a string literal of lower-case letters, digits, _ ("attn")'),
    ("logits", r"LOGITS_[A-Z0-9_]+", "a LOGITS_* feature"),
    ("keys", r"KEYS_[A-Z0-9_]+", "a KEYS_* feature"),
    ("column", r"COL_[A-Z0-9_]+", "a COL_* feature"),
    ("pool", r"[0-9]+", "a non-negative integer pool width"),
    ("select", r"SEL_[A-Z0-9_]+", "a SEL_* feature"),
    ("score", r'NULL|"[a-z][a-z0-9_]*"', 'NULL or an output name literal ("h2o_score")'),
    ("score2", r'NULL|"[a-z][a-z0-9_]*"', "NULL or an output name literal"),
    ("flags", r'NULL|"[a-z][a-z0-9_]*"', "NULL or an output name literal"),
    ("tol_rel_l2", _NUMBER, "a positive number (5e-3)"),
    ("tol_max_abs", _NUMBER, "a positive number (1e-2)"),
)
_ROW = re.compile(r"^\s*WORKLOAD\s*\((.*)\)\s*$")
_ARG = re.compile(r"\s*(%s|[^,\"]+?)\s*(?:,|$)" % _STRING)


def _strip_comments(text, path):
    """The text with /* */ and // comments blanked out, newlines kept (line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise RegistryError("%s:%d: comment opened here is never closed"
                                    % (path, text.count("\n", 0, i) + 1))
            out.append(re.sub(r"[^\n]", " ", text[i:end + 2]))
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text[i] == '"':
            m = re.compile(_STRING).match(text, i)
            end = m.end() if m else i + 1
            out.append(text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _split_args(body, where):
    args, pos = [], 0
    while pos < len(body):
        m = _ARG.match(body, pos)
        if not m or m.end() == pos:
            raise RegistryError("%s: cannot split the arguments at %r" % (where, body[pos:][:30]))
        args.append(m.group(1))
        pos = m.end()
    if body.rstrip().endswith(","):
        args.append("")
    return args


def _row(line, where):
    m = _ROW.match(line)
    if not m:
        raise RegistryError("%s: expected a row WORKLOAD(id, \"name\", ...) on one line, got %r"
                            % (where, line.strip()[:60]))
    args = _split_args(m.group(1), where)
    if len(args) != len(_FIELDS):
        raise RegistryError("%s: expected %d arguments (%s), got %d"
                            % (where, len(_FIELDS), ", ".join(f for f, _, _ in _FIELDS),
                               len(args)))
    values = {}
    for (field, pattern, expected), arg in zip(_FIELDS, args):
        if not re.fullmatch(pattern, arg):
            raise RegistryError("%s: argument %s: expected %s, got %r"
                                % (where, field, expected, arg))
        if arg == "NULL":
            values[field] = None
        elif arg.startswith('"'):
            values[field] = arg[1:-1]
        elif field == "pool":
            values[field] = int(arg)
        elif field.startswith("tol_"):
            values[field] = float(arg)
            if not values[field] > 0:
                raise RegistryError("%s: argument %s: expected %s, got %r"
                                    % (where, field, expected, arg))
        else:
            values[field] = arg
    return Workload(where=where, **values)


def load(path=DEF_PATH):
    """The rows of a workloads.def, in file order (the C enum order)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RegistryError(
            "%s: cannot read the workload registry: %s" % (path, e.strerror)) from e
    rows, seen = [], {}
    for number, line in enumerate(_strip_comments(text, path).split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # blank, comment, or a preprocessor line of the C includer
        where = "%s:%d" % (path, number)
        row = _row(line, where)
        if "out" in (row.score, row.score2, row.flags):
            raise RegistryError("%s: output name 'out' is the attention output's, expected "
                                "another name" % where)
        for key in ("id", "name") + OUTPUT_SLOTS:
            value = getattr(row, key)
            kind = "output name" if key in OUTPUT_SLOTS else key
            if value is not None and (kind, value) in seen:
                raise RegistryError("%s: %s %r already used at %s"
                                    % (where, kind, value, seen[(kind, value)]))
            if value is not None:
                seen[(kind, value)] = where
        rows.append(row)
    if not rows:
        raise RegistryError("%s: no WORKLOAD(...) row" % path)
    return rows


_cache = {}


def workloads(path=DEF_PATH):
    """load(path), read once per process."""
    if path not in _cache:
        _cache[path] = load(path)
    return _cache[path]


def names(path=DEF_PATH):
    return tuple(row.name for row in workloads(path))


def find(name, path=DEF_PATH):
    """The row called `name`; KeyError naming the known ones when there is none."""
    for row in workloads(path):
        if row.name == name:
            return row
    raise KeyError("unknown workload %r (the registry %s has %s)"
                   % (name, path, ", ".join(names(path))))


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="registry.py", description=__doc__.split("\n")[0])
    p.add_argument("--def", dest="path", default=DEF_PATH,
                   help="the .def file (default %(default)s)")
    p.add_argument("command", choices=("names", "show"))
    a = p.parse_args(argv)
    try:
        rows = load(a.path)
    except RegistryError as e:
        print("registry.py: %s" % e, file=sys.stderr)
        return 1
    if a.command == "names":
        print("\n".join(row.name for row in rows))
        return 0
    cols = ("name", "logits", "keys", "column", "pool", "select", "outputs", "tol_rel_l2",
            "tol_max_abs")
    table = [cols] + [tuple(",".join(r.outputs) if c == "outputs" else str(getattr(r, c))
                            for c in cols) for r in rows]
    widths = [max(len(t[i]) for t in table) for i in range(len(cols))]
    for t in table:
        print("  ".join(v.ljust(w) for v, w in zip(t, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
