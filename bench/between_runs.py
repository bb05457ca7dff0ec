#!/usr/bin/env python3
"""Analysis half of bench/between-runs.sh: rates of verdicts between runs.

Reads DIR/runs.sqlite (written by `between-runs.sh collect`), never writes
it: every side is formed in a copy (sqlite3's backup API) whose run labels
(and, for `check`, statuses) are changed, in a temporary directory.

Prints, with the figures for the note:
- A/A: identical runs (label "access log off") split 3 against 3, every
  point's verdict from `scalelab compare --json`; the share judged faster
  or slower (5% expected), and the whole-run (geomean) verdict's.
- the same pairs judged the old way, trial against trial (Mann-Whitney on
  one run's trials against the other's), for contrast;
- `check` with a 3-run baseline and an identical candidate: exit codes;
- a real change ("access log on"): 3 runs against 3, and `check`;
- `history`: resampled A/A histories, an outlying run at either end, a step
  next to an outlier; Apache Otava on the same run-median series.
"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

BIN, DIR = sys.argv[1], sys.argv[2]
MODE = sys.argv[3] if len(sys.argv) > 3 else ""
REAL = MODE == "real"
FLOOR = MODE == "floor"
STORE = os.path.join(DIR, {"real": "real.sqlite", "floor": "floor.sqlite"}.get(MODE, "runs.sqlite"))
OFF, ON = ("log off", "log on") if REAL or FLOOR else ("access log off", "access log on")
RECIPE = "pinned-access-log" if REAL else "quickstart"
TMP = tempfile.mkdtemp(prefix="between-runs-")
# KEEP_DISTURBED=1: the copies clear the background-load marks, so that
# runs which ran beside other tenants stay in the verdicts between runs.
KEEP_DISTURBED = os.environ.get("KEEP_DISTURBED") == "1"
rng = random.Random(35)


def runs_by_label():
    con = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True)
    rows = con.execute(
        "select id, label from runs where status = 'finished' order by id"
    ).fetchall()
    con.close()
    a = [i for i, l in rows if l == OFF]
    b = [i for i, l in rows if l == ON]
    return a, b


_copies = 0


def copy_with(labels, finished=None):
    """A copy of the store with these run labels; only `finished` runs
    left finished when given."""
    global _copies
    _copies += 1
    path = os.path.join(TMP, f"s{_copies}.sqlite")
    src = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True)
    dst = sqlite3.connect(path)
    src.backup(dst)
    src.close()
    for run, label in labels.items():
        dst.execute("update runs set label = ? where id = ?", (label, run))
    if KEEP_DISTURBED:
        # As if no background load had been seen: every run stays a sample
        # of the drift between runs (a loaded machine's view).
        dst.execute("update probes set summary = "
                    "replace(summary, '\"noisy\":true', '\"noisy\":false')")
    if finished is not None:
        keep = ",".join(str(i) for i in finished)
        dst.execute(f"update runs set status = 'aborted' where id not in ({keep})")
    dst.commit()
    dst.close()
    return path


def scalelab(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def compare(side_a, side_b):
    return compare_full(side_a, side_b)["comparisons"][0]


def verdict(c):
    return c["verdict"]["verdict"] if isinstance(c["verdict"], dict) else c["verdict"]


def tally(comparisons):
    judged = significant = whole_sig = whole_judged = 0
    slower = 0
    for c in comparisons:
        for p in c["points"]:
            v = p["comparison"]["verdict"]["verdict"]
            if v in ("faster", "slower", "no_difference"):
                judged += 1
                significant += v in ("faster", "slower")
                slower += v == "slower"
        g = c.get("geomean")
        if g and g["verdict"]["verdict"] in ("faster", "slower", "no_difference"):
            whole_judged += 1
            whole_sig += g["verdict"]["verdict"] in ("faster", "slower")
    return judged, significant, slower, whole_judged, whole_sig


def trial_level_rate(pairs):
    """The old method on one run against one: Mann-Whitney on the trials."""
    from scipy.stats import mannwhitneyu

    con = sqlite3.connect(f"file:{STORE}?mode=ro", uri=True)

    def trials(run):
        rows = con.execute(
            "select t.system, t.point, m.rps from trials t join measurements m on "
            "m.trial_id = t.id where t.run_id = ? and t.status = 'ok'",
            (run,),
        ).fetchall()
        out = {}
        for system, point, rps in rows:
            out.setdefault((system, point), []).append(rps)
        return out

    judged = significant = 0
    for a, b in pairs:
        ta, tb = trials(a), trials(b)
        for k in ta.keys() & tb.keys():
            x, y = ta[k], tb[k]
            if len(x) < 4 or len(y) < 4:
                continue
            p = mannwhitneyu(x, y, alternative="two-sided").pvalue
            ratio = sorted(y)[len(y) // 2] / sorted(x)[len(x) // 2]
            judged += 1
            significant += p < 0.05 and abs(ratio - 1) >= 0.02
    con.close()
    return judged, significant


def check(baseline, candidate):
    path = copy_with({i: "base" for i in baseline} | {candidate: "cand"},
                     finished=baseline + [candidate])
    code, out, _ = scalelab("check", path, f"{path}:{candidate}")
    os.remove(path)
    return code


def history(order, labels=None):
    """`history --json` over runs `order` (labelled h00, h01, ... in that
    order); the run medians per series and the change points found."""
    names = {run: f"h{k:02d}" for k, run in enumerate(order)}
    path = copy_with(names, finished=order)
    code, out, err = scalelab("history", RECIPE, path, "--order", "label", "--json")
    os.remove(path)
    if code != 0:
        raise SystemExit(f"history exited {code}: {err}")
    doc = json.loads(out)
    series = []
    for p in doc["points"]:
        values = [v["value"] for v in sorted(p["values"], key=lambda v: v["position"])]
        afters = [c["after_position"] for c in p["change_points"]]
        series.append((f'{p["system"]} {p["point"]}', values, afters))
    return series


def otava(values, pvalue):
    try:
        from otava.analysis import compute_change_points
    except ImportError:
        return None
    cps, _ = compute_change_points(values, window_len=50, max_pvalue=pvalue)
    return [c.index for c in cps]


def pct(n, d):
    return f"{n}/{d} = {100.0 * n / d:.1f}%" if d else "0/0"


def real_change():
    """The real change: every 3-against-3 draw of the runs, `check` of
    each "on" run against each 3 "off" runs, and the history off…on."""
    import itertools

    a, b = runs_by_label()
    print(f"runs: {len(a)} '{OFF}', {len(b)} '{ON}'; load average now "
          f"{open('/proc/loadavg').read().split()[:3]}")
    draws = [(list(x), list(y)) for x in itertools.combinations(a, 3)
             for y in itertools.combinations(b, 3)]
    results = [compare(x, y) for x, y in draws]
    j, s, slower, wj, ws = tally(results)
    ratios = sorted(c["geomean"]["ratio"] for c in results if c.get("geomean"))
    print(f"{ON} v {OFF}, 3 v 3 ({len(draws)} draws): points significant {pct(s, j)} "
          f"(slower {slower}); whole run significant {pct(ws, wj)}; geomean ratio "
          f"{ratios[0]:.3f}..{ratios[-1]:.3f}")
    codes = {}
    for base in itertools.combinations(a, 3):
        for cand in b:
            c = check(list(base), cand)
            codes[c] = codes.get(c, 0) + 1
    print(f"check, each '{ON}' run against each 3 '{OFF}' runs: exit codes "
          f"{dict(sorted(codes.items()))}")
    codes = {}
    for base in itertools.combinations(a, 3):
        for cand in a:
            if cand not in base:
                c = check(list(base), cand)
                codes[c] = codes.get(c, 0) + 1
    print(f"check, each '{OFF}' run against the other 3 (A/A): exit codes "
          f"{dict(sorted(codes.items()))}")
    series = history(a + b)
    found = sum(1 for s in series if len(a) in s[2])
    other = sum(1 for s in series for x in s[2] if x != len(a))
    ot = sum(1 for s in series if len(a) in (otava(s[1], 0.01) or []))
    print(f"history {len(a)} off then {len(b)} on: the step found in {found}/{len(series)} "
          f"series (elsewhere {other}); Otava (p 0.01) {ot}/{len(series)}")
    if len(b) >= 4:
        series = history(a + b[:-1] + a[:1])
        found = sum(1 for s in series if len(a) in s[2])
        other = sum(1 for s in series for x in s[2] if x != len(a))
        print(f"history {len(a)} off, {len(b) - 1} on, one off at the end: the step found in "
              f"{found}/{len(series)} series, elsewhere {other}")


def side_of(ci, floor):
    """analysis::floor::side: 'above', 'below' or 'within'."""
    lo, hi = ci
    if lo > 1 + floor:
        return "above"
    if hi < 1 - floor:
        return "below"
    return "within"


def floor_tally(results):
    """Points and whole runs: judged, claimed now, claims whose interval
    reaches inside the floor, and the old rule's claims (a claim now, or
    one the floor held back: `within_floor`), with how many of those
    reached inside it."""
    t = dict(points=0, judged=0, claimed=0, claimed_inside=0, old=0, old_inside=0,
             whole_judged=0, whole_claimed=0, whole_old=0, whole_old_inside=0)
    for r in results:
        floor = r["floor"]
        for p in r["points"]:
            c = p["comparison"]
            v = verdict(c)
            t["points"] += 1
            if v not in ("faster", "slower", "no_difference"):
                continue
            t["judged"] += 1
            claimed = v in ("faster", "slower")
            inside = c.get("ratio_ci") is None or side_of(c["ratio_ci"], floor) == "within"
            t["claimed"] += claimed
            t["claimed_inside"] += claimed and inside
            old = claimed or c.get("within_floor", False)
            t["old"] += old
            t["old_inside"] += old and inside
        g = r.get("geomean")
        if g and verdict(g) in ("faster", "slower", "no_difference"):
            t["whole_judged"] += 1
            claimed = verdict(g) in ("faster", "slower")
            t["whole_claimed"] += claimed
            old = claimed or g.get("within_floor", False)
            t["whole_old"] += old
            t["whole_old_inside"] += old and (
                g.get("ratio_ci") is None or side_of(g["ratio_ci"], floor) == "within")
    return t


def compare_full(side_a, side_b):
    """`compare --json` of A against B: the verdicts, the noise floor and
    the planning line's runs a side for A."""
    labels = {i: "A" for i in side_a} | {i: "B" for i in side_b}
    path = copy_with(labels)
    code, out, err = scalelab("compare", "--json", *[f"{path}:{i}" for i in side_a + side_b])
    os.remove(path)
    if code not in (0, 5):
        raise SystemExit(f"compare exited {code}: {err}")
    return json.loads(out)


def floor_main():
    """Issue 47: claims beyond the noise floor, A/A and a real change."""
    a, b = runs_by_label()
    print(f"runs: {len(a)} '{OFF}' (A/A), {len(b)} '{ON}'; load average now "
          f"{open('/proc/loadavg').read().split()[:3]}")
    splits = []
    while len(splits) < 48:
        six = rng.sample(a, 6)
        split = (tuple(six[:3]), tuple(six[3:]))
        if split not in splits:
            splits.append(split)
    results = []
    for x, y in splits:
        doc = compare_full(list(x), list(y))
        c = doc["comparisons"][0]
        c["floor"] = floor_of(doc)
        results.append(c)
    t = floor_tally(results)
    print(f"A/A 3 v 3 ({len(splits)} splits, floor {results[0]['floor']:.0%}): {t['judged']} of "
          f"{t['points']} points judged (the rest `?`: runs beside background load left out); claimed "
          f"now {pct(t['claimed'], t['judged'])}, of them with the interval inside the floor "
          f"{t['claimed_inside']}; the old rule (p < 0.05, ratio beyond the floor) claimed "
          f"{pct(t['old'], t['judged'])}, {t['old_inside']} of them with the interval inside "
          f"the floor")
    print(f"A/A whole run: claimed now {pct(t['whole_claimed'], t['whole_judged'])}; old rule "
          f"{pct(t['whole_old'], t['whole_judged'])} ({t['whole_old_inside']} inside the floor)")
    plan = compare_full(a, b)
    need = planned_runs(plan, OFF)
    print(f"planning line for '{OFF}' over its {len(a)} runs: {need} runs a side "
          f"({plan_sentence(plan, OFF)})")
    # Past the plan's 50 runs (`None`) the runs at hand are all there is.
    r = max(need or min(len(a), len(b)), 3)
    if min(len(a), len(b)) < r:
        # Fewer runs than planned: a wider interval, so a rate found here
        # is one the planned runs would reach too.
        print(f"only {len(a)} '{OFF}' and {len(b)} '{ON}' runs: fewer than the {r} a side "
              f"planned; the real change is judged at {min(len(a), len(b))} a side")
        r = min(len(a), len(b))
    # FLOOR_RUNS=N judges the real change at N runs a side instead.
    r = int(os.environ.get("FLOOR_RUNS", r))
    if r < 3:
        return
    draws = [(rng.sample(a, r), rng.sample(b, r)) for _ in range(40)]
    found = whole_found = judged = whole_judged = points = 0
    ratios = []
    for x, y in draws:
        doc = compare_full(x, y)
        c = doc["comparisons"][0]
        for p in c["points"]:
            points += 1
            if verdict(p["comparison"]) in ("faster", "slower", "no_difference"):
                judged += 1
                found += verdict(p["comparison"]) == "slower"
        g = c.get("geomean")
        if g and verdict(g) in ("faster", "slower", "no_difference"):
            whole_judged += 1
            whole_found += verdict(g) == "slower"
            ratios.append(g["ratio"])
    span = f"{min(ratios):.3f}..{max(ratios):.3f}" if ratios else "none judged"
    print(f"real change ('{ON}' v '{OFF}'), {r} v {r} runs ({len(draws)} draws): points found "
          f"slower {pct(found, judged)} of those judged ({judged} of {points}); the run "
          f"as a whole {pct(whole_found, whole_judged)}; geomean ratio {span}")
    print(f"load average at the end {open('/proc/loadavg').read().split()[:3]}")


def floor_of(doc):
    """The noise floor the verdicts were judged by (the drift plan's)."""
    for d in doc.get("drift", []):
        return d["noise"]
    return 0.02


def planned_runs(doc, label):
    for d in doc.get("drift", []):
        if d["side"] == label or d["side"] == "A":
            return d["runs_for_noise"]
    return None


def plan_sentence(doc, label):
    for d in doc.get("drift", []):
        if d["side"] == label or d["side"] == "A":
            return (f"median drift {d['median_between_cv']:.1%} between runs, "
                    f"{(d['median_within_cv'] or 0):.1%} within")
    return "no drift"


def main():
    if REAL:
        real_change()
        return
    if FLOOR:
        floor_main()
        return
    a, b = runs_by_label()
    print(f"runs: {len(a)} 'access log off' (A/A), {len(b)} 'access log on'; load average now "
          f"{open('/proc/loadavg').read().split()[:3]}")
    # A/A, 3 against 3: every 6 consecutive runs split alternately and in
    # halves, then random splits of all runs.
    splits = []
    for k in range(0, len(a) - 5, 6):
        six = a[k:k + 6]
        splits.append((six[0::2], six[1::2]))
        splits.append((six[:3], six[3:]))
    disjoint = len(splits)
    for _ in range(40):
        six = rng.sample(a, 6)
        splits.append((six[:3], six[3:]))
    results = [compare(x, y) for x, y in splits]
    j, s, _, wj, ws = tally(results[:disjoint])
    print(f"A/A 3 v 3, disjoint splits ({disjoint}): points significant {pct(s, j)}; "
          f"whole run {pct(ws, wj)}")
    j, s, _, wj, ws = tally(results)
    print(f"A/A 3 v 3, all splits ({len(splits)}): points significant {pct(s, j)}; "
          f"whole run {pct(ws, wj)}")
    ones = [(x, y) for i, x in enumerate(a) for y in a[i + 1:]]
    one = [compare([x], [y]) for x, y in ones[:20]]
    j, s, _, _, _ = tally(one)
    unmarked = sum(
        1 for c in one for p in c["points"] if p["comparison"].get("p_value") is not None)
    print(f"A/A 1 v 1 ({len(one)} pairs): judged {j}, points with a p-value {unmarked}")
    try:
        j, s = trial_level_rate(ones)
        print(f"the old way, trial against trial, 1 v 1 ({len(ones)} pairs): points "
              f"significant {pct(s, j)}")
    except ImportError:
        print("the old way: scipy missing (pip install scipy)")
    # check, A/A: 3 baseline runs and an identical candidate.
    codes = {}
    for _ in range(20):
        four = rng.sample(a, 4)
        c = check(four[:3], four[3])
        codes[c] = codes.get(c, 0) + 1
    print(f"check A/A, 20 tries (3-run baseline): exit codes {dict(sorted(codes.items()))}")
    one_base = check([a[0]], a[1])
    print(f"check with a 1-run baseline: exit {one_base}")
    # A real change: access log on, 3 v 3 and check.
    if len(b) >= 3:
        real = [compare(rng.sample(a, 3), rng.sample(b, 3)) for _ in range(10)]
        j, s, slower, wj, ws = tally(real)
        ratios = [c["geomean"]["ratio"] for c in real if c.get("geomean")]
        print(f"access log on v off, 3 v 3 (10 draws): points significant {pct(s, j)} "
              f"(slower {slower}); whole run {pct(ws, wj)}; geomean ratio "
              f"{min(ratios):.3f}..{max(ratios):.3f}")
        codes = {}
        for _ in range(20):
            c = check(rng.sample(a, 3), rng.choice(b))
            codes[c] = codes.get(c, 0) + 1
        print(f"check, access log on against a 3-run baseline, 20 tries: exit codes "
              f"{dict(sorted(codes.items()))}")
    history_rates(a, b)


def history_rates(a, b):
    n = min(10, len(a))
    ours = otava01 = otava001 = total = 0
    histories = 30
    for _ in range(histories):
        order = rng.sample(a, n)
        for name, values, afters in history(order):
            total += 1
            ours += bool(afters)
            o = otava(values, 0.01)
            if o is None:
                continue
            otava01 += bool(o)
            otava001 += bool(otava(values, 0.001))
    print(f"history, {histories} resampled A/A histories of {n} runs, {total} series: "
          f"scalelab (alpha 0.01) flagged {pct(ours, total)}; Otava p 0.01 {pct(otava01, total)}, "
          f"Otava p 0.001 (default) {pct(otava001, total)}")
    if not b:
        return
    for at_start in (False, True):
        order = ([b[0]] + a[:n - 1]) if at_start else (a[:n - 1] + [b[0]])
        series = history(order)
        flagged = [s for s in series if s[2]]
        oflag = [s for s in series if otava(s[1], 0.01)]
        print(f"history, one 'access log on' run at the {'start' if at_start else 'end'} of "
              f"{n - 1} identical ones: scalelab flagged {len(flagged)}/{len(series)} series, "
              f"Otava (p 0.01) {len(oflag)}/{len(series)}")
    k = min(5, len(b) - 1, len(a) - 1)
    if k >= 3:
        order = a[:k] + b[:k] + [a[k]]
        series = history(order)
        at_step = sum(1 for s in series if k in s[2])
        elsewhere = sum(1 for s in series for x in s[2] if x != k)
        ot = sum(1 for s in series if k in (otava(s[1], 0.01) or []))
        print(f"history, {k} off then {k} on then one off: the step found in {at_step}/"
              f"{len(series)} series (elsewhere {elsewhere}); Otava (p 0.01) found it in "
              f"{ot}/{len(series)}")


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
