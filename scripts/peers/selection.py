"""The e2e model's KV-cache selection as a feature of the registry rows (their `select`): per
SEL_* rule the output slots it reads and the keys per head it keeps at most, the budgets of
kernels/e2e/e2e.h. workloads.formulation_missing and llama.py (which implements the rules on
the attention outputs) read it; it imports nothing of the kit and needs no torch."""

KEEP = 512
KEEP_STD = 256
CORM_CAP = 512

# SEL_*: (the output slots the rule reads, the keys it keeps per head at most).
SELECTS = {
    "SEL_NONE": ((), lambda seqlen: 0),
    "SEL_TOPK": (("score",), lambda seqlen: min(KEEP, seqlen)),
    "SEL_TOPK_STD": (("score", "score2"), lambda seqlen: min(KEEP_STD + KEEP, seqlen)),
    "SEL_FLAGS": (("flags",), lambda seqlen: min(CORM_CAP, seqlen)),
}


def selection_missing(row):
    """None when the e2e model implements registry row `row`'s select rule on the outputs the
    row has, else the reason."""
    if row.select not in SELECTS:
        return "workload %s: select %s has no PyTorch formulation" % (row.name, row.select)
    missing = [slot for slot in SELECTS[row.select][0] if slot not in row.slots]
    if missing:
        return "workload %s: select %s reads %s, which the row does not output" % (
            row.name, row.select, "+".join(missing))
    return None
