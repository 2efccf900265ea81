"""kvlog: the log line format of common/kvline.h, for the Python peers.

    <tag> key=value key="value with spaces" ...

Same rules as kvline.c: a value that is empty or holds a space, tab, CR, LF, '"', '\\', '='
or '#' is double-quoted; inside quotes '"' and '\\' get a backslash, LF is written as \\n and
CR as \\r, so one record is always one line. The parser is the inverse of kv_parse (used by
the tests and by gpu_check.sh's table). Standard library only: it must work without torch.
"""

_NEEDS_QUOTES = (" ", "\t", "\r", "\n", '"', "\\", "=", "#")


def needs_quotes(val):
    return val == "" or any(c in val for c in _NEEDS_QUOTES)


def quote(val):
    """A value as kv_put writes it."""
    val = str(val)
    if not needs_quotes(val):
        return val
    out = []
    for c in val:
        if c in ('"', "\\"):
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def line(tag, pairs):
    """One record: tag followed by ' key=value' for each (key, value) in order."""
    return tag + "".join(" %s=%s" % (k, quote(v)) for k, v in pairs)


class ParseError(ValueError):
    pass


def parse(text):
    """(tag, [(key, value), ...]) of one line; ParseError with the column on bad input."""
    s = text.rstrip(" \t\r\n")
    i, n = 0, len(s)
    while i < n and s[i] in " \t\r\n":
        i += 1
    if i == n:
        raise ParseError("column 1: empty line")
    start = i
    while i < n and s[i] not in " \t\r\n":
        if s[i] in '="':
            raise ParseError(
                "column %d: line starts with a key=value, expected a tag word" % (i + 1))
        i += 1
    tag, pairs = s[start:i], []
    while True:
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i >= n:
            return tag, pairs
        kstart = i
        while i < n and s[i] != "=" and s[i] not in " \t\r\n":
            i += 1
        if i >= n or s[i] != "=" or i == kstart:
            raise ParseError("column %d: expected key=value" % (kstart + 1))
        key = s[kstart:i]
        i += 1
        if i < n and s[i] == '"':
            qstart, i, val = i, i + 1, []
            while i < n and s[i] != '"':
                if s[i] == "\\" and i + 1 < n:
                    c = s[i + 1]
                    val.append("\n" if c == "n" else "\r" if c == "r" else c)
                    i += 2
                    continue
                val.append(s[i])
                i += 1
            if i >= n:
                raise ParseError("column %d: unterminated quoted value" % (qstart + 1))
            i += 1
            if i < n and s[i] not in " \t\r\n":
                raise ParseError("column %d: text after a closing quote" % (i + 1))
            pairs.append((key, "".join(val)))
        else:
            vstart = i
            while i < n and s[i] not in " \t\r\n":
                i += 1
            pairs.append((key, s[vstart:i]))


def read_log(path):
    """{tag: dict of its LAST record} of a log file (readers take the last result line)."""
    records = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, text in enumerate(f, 1):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            try:
                tag, pairs = parse(text)
            except ParseError as e:
                raise ParseError("%s:%d: %s" % (path, lineno, e)) from None
            records[tag] = dict(pairs)
    return records
