"""The text format of merge/uca_table.cpp: a UCA table as runs of code points and
contractions, as scripts/gen_uca_weights.sh writes it.

An entry is a tuple of levels, each a tuple of 16-bit weights (no zeros)."""

DEFAULT_L2, DEFAULT_L3 = (0x20,), (0x02,)

def hexes(ws):
    return ".".join("%x" % w for w in ws)

def level_text(entry):
    parts = [hexes(entry[0])]
    if len(entry) == 3 and (entry[1] != DEFAULT_L2 or entry[2] != DEFAULT_L3):
        parts.append(hexes(entry[1]))
        if entry[2] != DEFAULT_L3:
            parts.append(hexes(entry[2]))
    return "|".join(parts)

def follows(prev, entry, step):
    """entry is prev with its last level-1 weight grown by step (0: the same weights)."""
    if step == 0:
        return entry == prev
    return (len(entry[0]) > 0 and len(entry[0]) == len(prev[0]) and entry[0][:-1] == prev[0][:-1]
            and entry[0][-1] == prev[0][-1] + 1 and entry[1:] == prev[1:])

def runs(table):
    out = []  # [first, count, step, entry]: step 1 = the last level-1 weight grows by one
    for cp, entry in table:
        if out and cp == out[-1][0] + out[-1][1]:
            run = out[-1]
            if run[1] == 1 and entry != run[3] and follows(run[3], entry, 1):
                run[2] = 1
            last = run[3]
            if run[2]:
                last = (last[0][:-1] + (last[0][-1] + run[1] - 1,),) + last[1:]
            if follows(last, entry, run[2]):
                run[1] += 1
                continue
        out.append([cp, 1, 0, entry])
    return out

def run_text(table):
    words, end = [], 0
    for first, count, step, entry in runs(table):
        head = ("%x" % (first - end) if first != end else "") + ("," + "%x" % count if count != 1 else "")
        words.append(head + ("+" if step else "") + ":" + level_text(entry))
        end = first + count
    return words

def contraction_text(table):
    return [".".join("%x" % c for c in seq) + ":" + level_text(entry) for seq, entry in table]

def literal(words, indent="    "):
    lines, line = [], ""
    for w in words:
        if line and len(line) + len(w) + 1 > 104:
            lines.append(line)
            line = ""
        line += (" " if line else "") + w
    lines.append(line)
    return "\n".join('%s"%s "' % (indent, l) for l in lines)

