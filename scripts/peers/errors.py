"""The refusal every peer module shares, beneath all of them (it imports nothing of the kit):
Unsupported, a cell its system cannot run, which the log carries as status=unsupported with the
reason; one_line, an exception's text as the one line a reason holds."""


class Unsupported(Exception):
    pass


def one_line(text, limit=400):
    """text on one line (whitespace runs as one space), cut to `limit` characters with "..."."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
