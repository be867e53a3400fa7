#!/usr/bin/env python3
"""Helpers of bench/run (bench/README.md).

  report.py lttng-bytes TRACE_DIR
      Sums the CTF packet index of an LTTng trace: prints
      "content_bytes=N file_bytes=M packets=P" (content = packet headers and
      events, without the padding at the end of each packet).
  report.py write --raw FILE --notes FILE --out RESULTS.md ...
      Turns the "result ..." lines of bench/run into the "Engine" section of
      RESULTS.md, keeping every other section of the file.
  report.py write-filemode --raw FILE --out RESULTS.md ...
      Turns the file-mode / manager-path lines of `bench/run --parts filemode`
      into the "File mode" section of RESULTS.md, keeping the others.
"""
import argparse
import datetime
import os
import platform
import re
import statistics
import struct
import subprocess
import sys

# ---- lttng-bytes ----------------------------------------------------------------

INDEX_MAGIC = 0xC1F1DCC1


def lttng_bytes(trace_dir):
    content = packets = files = 0
    for dirpath, _, names in os.walk(trace_dir):
        if os.path.basename(dirpath) != "index":
            continue
        for name in names:
            if not name.endswith(".idx"):
                continue
            with open(os.path.join(dirpath, name), "rb") as f:
                data = f.read()
            magic, _major, _minor, entry_len = struct.unpack_from(">IIII", data, 0)
            if magic != INDEX_MAGIC or entry_len < 24:
                raise SystemExit(f"{name}: not a CTF index")
            for off in range(16, len(data) - entry_len + 1, entry_len):
                _offset, _packet_bits, content_bits = struct.unpack_from(">QQQ", data, off)
                content += content_bits // 8
                packets += 1
            stream = os.path.join(os.path.dirname(dirpath), name[: -len(".idx")])
            if os.path.exists(stream):
                files += os.path.getsize(stream)
    print(f"content_bytes={content} file_bytes={files} packets={packets}")


# ---- reading results ---------------------------------------------------------------


def parse_raw(path, prefix="result "):
    rows = []
    if not path or not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            if not line.startswith(prefix):
                continue
            row = {}
            for tok in line.split()[1:]:
                k, _, v = tok.partition("=")
                row[k] = v
            rows.append(row)
    return rows


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


class Series:
    """The measurements of one (system, scenario, threads) across rounds."""

    def __init__(self, rows):
        self.rows = rows
        self.ns = [num(r["ns"]) for r in rows]
        self.eps = [num(r["eps"]) for r in rows]

    def med(self):
        return statistics.median(self.ns)

    def lo(self):
        return min(self.ns)

    def hi(self):
        return max(self.ns)

    def eps_med(self):
        return statistics.median(self.eps)

    def field_median(self, key):
        vals = [num(r.get(key)) for r in self.rows]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    def field_sum(self, key):
        vals = [num(r.get(key)) for r in self.rows]
        vals = [v for v in vals if v is not None]
        return sum(vals) if vals else None


def group(rows):
    g = {}
    for r in rows:
        key = (r["system"], r["scenario"], int(r["threads"]), r.get("record_bytes"))
        g.setdefault(key, []).append(r)
    return {k: Series(v) for k, v in g.items()}


# ---- formatting ----------------------------------------------------------------------


def fmt_ns(v):
    if v is None:
        return "n/a"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"


def fmt_x(v):
    return "n/a" if v is None else f"{v:.2f}×" if v < 10 else f"{v:.1f}×"


def fmt_rate(eps):
    return "n/a" if eps is None else f"{eps / 1e6:.1f}"


def fmt_meps(v):
    if v is None:
        return "n/a"
    v /= 1e6
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def ns_cell(s):
    if s is None:
        return "n/a", "n/a"
    return fmt_ns(s.med()), f"{fmt_ns(s.lo())}–{fmt_ns(s.hi())}"


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            cs = f.read().strip()
    except OSError:
        cs = "unknown"
    return cpu, os.cpu_count(), cs, platform.release()


def kernel_clocksource():
    return machine()[2]


def idle_text():
    """How an idle CPU waits, where the kernel says: on a virtual machine whose
    idle vCPUs halt at once (cpuidle `haltpoll` with guest halt polling 0 ns),
    a wake-up sent to an idle vCPU waits for the hypervisor to run it again,
    which took up to 11 ms here (bench/RESULTS.md, "Sustained streaming: the
    idle vCPU's wake-up"); streaming saves wake threads on other CPUs."""
    try:
        with open("/sys/devices/system/cpu/cpuidle/current_driver") as f:
            driver = f.read().strip()
    except OSError:
        return ""
    text = f"; cpuidle `{driver}`"
    if driver == "haltpoll":
        try:
            with open("/sys/module/haltpoll/parameters/guest_halt_poll_ns") as f:
                text += f", guest halt polling {int(f.read().strip()):,} ns"
        except (OSError, ValueError):
            pass
    return text


ENGINE_CLOCK_RULE = ("the engine reads the TSC itself when the CPU's TSC is invariant and the "
                     "kernel's clocksource is `tsc`, else calls `clock_gettime(CLOCK_MONOTONIC)`: "
                     "docs/clock.md")


def engine_clocks(rows):
    """The engine clock sources the fxtrace programs reported (clock_source=)."""
    return sorted({r.get("clock_source") for r in rows
                   if r.get("clock_source") and r.get("clock_source") != "na"})


def clock_caption(rows):
    """One line naming both clocks, put under every table."""
    src = engine_clocks(rows)
    forced = os.environ.get("FXTRACE_CLOCK")
    eng = ", ".join(f"`{c}`" for c in src) if src else "not reported"
    return (f"_Clocks: kernel clocksource `{kernel_clocksource()}`; fxtrace's engine clock {eng}"
            + (f" (forced: FXTRACE_CLOCK={forced})" if forced else "") + "._")


def caption_tables(lines, caption):
    """Puts `caption` after the last row of every Markdown table in `lines`."""
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if line.startswith("|") and (i + 1 == len(lines) or not lines[i + 1].startswith("|")):
            out += ["", caption]
    return out


def pkg_version(name):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                             text=True, check=False)
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def cc_version():
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=False)
        return out.stdout.splitlines()[0]
    except (OSError, IndexError):
        return "cc"


# ---- the Engine section ------------------------------------------------------------

# scenario -> (title, FXT minimum bytes, floor (scenario, record bytes), floor label)
SCENARIOS = [
    ("instant0", "TRACE_INSTANT, no argument", 24, ("record", "24"),
     "one clock read + a 24-byte record"),
    ("instant2", "TRACE_INSTANT, 2 int64 arguments", 56, ("record", "56"),
     "one clock read + a 56-byte record"),
    ("instant_str", "TRACE_INSTANT, one 16-byte string argument (copied)", 48, ("record", "48"),
     "one clock read + a 48-byte record"),
    ("duration", "TRACE_DURATION scope (LTTng: begin + end events)", 24, ("record2", "24"),
     "two clock reads + a 24-byte record"),
]
FLOORS = [
    ("load_branch", None, "relaxed load + branch"),
    ("clock", None, "engine clock read (trace_clock__now_ns)"),
    ("clock_vdso", None, "clock_gettime(CLOCK_MONOTONIC), vDSO (LTTng-UST's clock)"),
    ("fetch_add", None, "atomic fetch-add, one cache line per thread"),
    ("fetch_add_shared", None, "atomic fetch-add, one line shared by the threads"),
    ("store", "24", "stores of a 24-byte record (memory written once before the loop)"),
    ("record", "24", "clock + 24-byte record"),
    ("record", "48", "clock + 48-byte record"),
    ("record", "56", "clock + 56-byte record"),
    ("record2", "24", "2 clocks + 24-byte record"),
    ("record_str", "48", "clock + strlen + a 16-byte string's copy + 48-byte record"),
]


class Report:
    def __init__(self, args):
        self.a = args
        self.g = group(parse_raw(args.raw))
        self.threads = sorted({k[2] for k in self.g})
        self.sustained = [r for r in parse_raw(args.sustained, "result ") if r.get("evidence") != "1"]
        self.resources = parse_raw(args.sustained, "resources ")
        self.zbytes = parse_raw(args.sustained, "zbytes ")
        self.sustained_best = {r["system"]: r for r in parse_raw(args.sustained, "sustained ")}
        self.callgrind = parse_raw(args.callgrind, "callgrind ")
        self.notes = []
        if args.notes and os.path.exists(args.notes):
            with open(args.notes) as f:
                self.notes = [l.rstrip("\n") for l in f if l.strip()]

    def get(self, system, scenario, threads, rb=None):
        return self.g.get((system, scenario, threads, rb))

    def floor(self, scenario, rb, threads):
        """Floors without a record size are keyed with None."""
        return self.get("floor", scenario, threads, rb) or self.get("floor", scenario, threads, None)

    def scaling(self, system, scenario):
        one, two = self.get(system, scenario, 1), self.get(system, scenario, 2)
        if not one or not two:
            return None
        return two.eps_med() / one.eps_med()

    def scaling_rounds(self, system, scenario):
        """Median over rounds of (2-thread rate / 1-thread rate) within the round: the two runs
        of one round are adjacent in time, so a slow phase of the machine hits both."""
        one, two = self.get(system, scenario, 1), self.get(system, scenario, 2)
        if not one or not two:
            return None
        r1 = {r.get("round"): num(r["eps"]) for r in one.rows}
        ratios = [num(r["eps"]) / r1[r.get("round")] for r in two.rows
                  if r1.get(r.get("round")) and num(r["eps"])]
        return statistics.median(ratios) if ratios else None

    def scaling_cell(self, system, scenario):
        """"per-round median (ratio of medians)"."""
        a, b = self.scaling_rounds(system, scenario), self.scaling(system, scenario)
        if a is None:
            return fmt_x(b)
        return f"{fmt_x(a)} ({fmt_x(b)})"

    def fx_bytes(self, scenario, threads=1):
        s = self.get("fxtrace", scenario, threads)
        return s.field_median("bytes") if s else None

    def lttng_bytes(self, s):
        """content bytes per iteration (a duration's two events count as one)."""
        vals = []
        for r in s.rows:
            calls, lost, content = num(r.get("calls")), num(r.get("lost")), num(r.get("content_bytes"))
            per = num(r.get("tracepoints_per_event")) or 1
            if calls is None or lost is None or content is None or calls - lost <= 0:
                continue
            vals.append(content / ((calls - lost) / per))
        return statistics.median(vals) if vals else None

    def drop_share(self, s):
        dropped, total = s.field_sum("dropped"), sum(num(r.get("expected")) or 0 for r in s.rows)
        if dropped is None or not total:
            return "n/a"
        return f"{100 * dropped / total:.2g}%"

    def stream_bytes(self, s):
        vals, arch = [], []
        for r in s.rows:
            ev, eb, ab = num(r.get("archive_events")), num(r.get("archive_event_bytes")), \
                num(r.get("archive_bytes"))
            if ev:
                vals.append(eb / ev)
                arch.append(ab / ev)
        if not vals:
            return "n/a"
        return f"{statistics.median(vals):.0f} ({statistics.median(arch):.1f} in the archive)"

    def stream_lost_cell(self, s):
        dropped = s.field_sum("dropped")
        total = sum(num(r.get("expected")) or 0 for r in s.rows)
        bad = [r for r in s.rows if num(r.get("archive_events")) is not None and
               num(r.get("archive_events")) + (num(r.get("dropped")) or 0) != num(r.get("expected"))]
        cell = f"{dropped:,.0f} of {total:,.0f} ({100 * dropped / total:.2g}%)" if dropped is not None and total else "n/a"
        if bad:
            cell += f" (archive + dropped ≠ issued in {len(bad)} run{'s' if len(bad) > 1 else ''}!)"
        return cell

    def lost_cell(self, system, s):
        if s is None:
            return "n/a"
        if system == "fxtrace":
            dropped = s.field_sum("dropped")
            wrapped = s.field_sum("wrapped")
            total = sum(num(r["expected"]) or 0 for r in s.rows)
            cell = f"{dropped:,.0f} of {total:,.0f}" if dropped is not None else "n/a"
            if wrapped:
                cell += " (buffer wrapped!)"
            return cell
        lost = s.field_sum("lost")
        calls = s.field_sum("calls")
        return f"{lost:,.0f} of {calls:,.0f}" if lost is not None else "n/a"

    # -- sections --

    def header(self):
        cpu, cores, cs, kernel = machine()
        a = self.a
        today = datetime.date.today().isoformat()
        lines = [
            "## Engine: fxtrace against LTTng-UST and the hardware floors",
            "",
            f"Made by `bench/run` (see bench/README.md) on {today}: {a.rounds} rounds; in each round "
            "the floors, then every scenario for fxtrace and LTTng-UST one after the other "
            "(A B A B …), one process per measurement. Each figure is the **median over the rounds**, "
            "with the min–max. **ns/event** is per thread: each thread's own timed loop "
            "(CLOCK_MONOTONIC) divided by its events, averaged over the threads; **aggregate** is all "
            "threads' events divided by the wall time from the first thread's start to the last "
            "one's end, in millions of events per second. Threads are pinned to distinct CPUs.",
            "",
            f"- Machine: {cpu}, {cores} cores, Linux {kernel}, clocksource `{cs}`{idle_text()}"
            + self.clock_source_text(),
            f"- Build: `-O2 -DNDEBUG` with {cc_version()}",
            f"- Loops: {a.events:,} timed events per thread ({a.disabled_events:,} for the disabled call "
            f"sites, {a.floor_events:,} for most floors), after an untimed warm-up of 10,000 "
            "(which registers the thread, the strings and LTTng's per-thread state).",
            f"- LTTng-UST {pkg_version('liblttng-ust-dev')}, lttng-tools {pkg_version('lttng-tools')}: "
            "`lttng-sessiond` running, one session, channel in **discard** mode with **per-UID** "
            "buffers (`--buffers-uid`, the default) and the default sub-buffers, the trace written to "
            "disk by `lttng-consumerd`; the session is started before and stopped (which waits for "
            "the consumer) after each measurement, then cleared. Events lost: the channel's "
            "discarded-events counter. Bytes/event: the CTF packets' content (headers and events, "
            "no padding) from the trace's packet index, over the events recorded.",
            "- fxtrace: the engine initialized by the benchmark itself (no daemon), **circular** mode, "
            "on a pre-faulted shared anonymous buffer sized so that nothing wraps; category `bench` "
            "enabled, `bench.off` not. Events lost: the engine's dropped-records count. Bytes/event: "
            "the bytes of the event records found by scanning the buffer (docs/buffer-layout.md) "
            "over their number, which is also checked against the events issued.",
            "- fxtrace **streaming** (rows \"fxtrace streaming\"): the same loops in `bench_fxtrace "
            "--mode provider`, a provider registered with libtrace-provider, run as `trace record "
            f"--buffering-mode=streaming --buffer-size={a.stream_buffer_mb} --categories=bench -o FILE "
            "-- bench_fxtrace ...`: `trace record` runs the trace manager in-process (no other manager "
            "listens on its socket), the manager saves each full rolling buffer and the archive is "
            "written to a file. The engine drops (and counts) records while the other rolling buffer "
            "waits for its save. Events lost: the engine's dropped count, checked against the archive "
            "(events in the archive + dropped = events issued). Bytes/event: the archive's event "
            "records over their number (with, in parentheses, the whole archive's bytes per event "
            "received). The manager's CPU time counts as part of the cost, like LTTng's daemons.",
            "- Floors: `bench_floor`, the same harness (bench/README.md lists what each one does).",
            f"- The benchmark programs ran at niceness {a.nice}. Each round waited (a while) for an idle "
            "machine; a measurement during which the threads waited for their CPU more than 2% of "
            f"the time while other processes took more than {a.busy_threshold} CPUs was retried, up to "
            f"{a.max_attempts} attempts, keeping the least disturbed (see the checks at the end).",
            "",
        ]
        if not any(k[0] == "fxtrace-stream" for k in self.g):
            lines = [l for l in lines if not l.startswith("- fxtrace **streaming**")]
        return lines

    def all_rows(self):
        return [r for series in self.g.values() for r in series.rows]

    def clock_source_text(self):
        src = engine_clocks(self.all_rows())
        if not src:
            return ""
        return (f"; engine clock source {', '.join(f'`{c}`' for c in src)} ({ENGINE_CLOCK_RULE}); "
                "LTTng-UST reads `clock_gettime(CLOCK_MONOTONIC)`")

    def targets(self):
        L = ["### Targets of issues 5 and 14", "",
             "| target | where we stand | |", "| --- | --- | --- |"]

        def row(target, text, ok):
            L.append(f"| {target} | {text} | {ok} |")

        # Disabled call site (issue 14: within 1.2x).
        parts, oks, oks14 = [], [], []
        for t in self.threads:
            fx, fl = self.get("fxtrace", "off", t), self.floor("load_branch", "24", t)
            fl = fl or self.floor("load_branch", None, t)
            if fx and fl:
                x = fx.med() / fl.med()
                parts.append(f"{t} thread{'s' if t > 1 else ''}: {fmt_x(x)} "
                             f"({fmt_ns(fx.med())} vs {fmt_ns(fl.med())} ns)")
                oks.append(x <= 1.5)
                oks14.append(x <= 1.2)
        stopped = []
        for t in self.threads:
            st, fl = self.get("fxtrace", "stopped", t), self.floor("load_branch", None, t)
            if st and fl:
                stopped.append(f"{fmt_x(st.med() / fl.med())} at {t} thread{'s' if t > 1 else ''}")
        text = "; ".join(parts) or "n/a"
        if stopped:
            text += " (category off while tracing; with tracing stopped: " + ", ".join(stopped) + ")"
        row("disabled call site within 1.5× of a relaxed load + branch", text, verdict(oks))
        row("issue 14: disabled call site (category off while tracing) within 1.2× of the floor",
            "; ".join(parts) or "n/a", verdict(oks14))
        # 5x cheaper than LTTng.
        parts, oks = [], []
        for t in self.threads:
            fx, lt = self.get("fxtrace", "instant2", t), self.get("lttng", "instant2", t)
            if fx and lt:
                x = lt.med() / fx.med()
                parts.append(f"{t} thread{'s' if t > 1 else ''}: {fmt_x(x)} "
                             f"({fmt_ns(lt.med())} vs {fmt_ns(fx.med())} ns)")
                oks.append(x >= 5)
        row("instant with 2 int64: at least 5× cheaper than LTTng-UST", "; ".join(parts) or "n/a",
            verdict(oks))
        # Within 1.5x of the floor (issue 14: 1.3x).
        parts, oks, oks14 = [], [], []
        for t in self.threads:
            fx, fl = self.get("fxtrace", "instant2", t), self.floor("record", "56", t)
            if fx and fl:
                x = fx.med() / fl.med()
                parts.append(f"{t} thread{'s' if t > 1 else ''}: {fmt_x(x)} "
                             f"({fmt_ns(fx.med())} vs {fmt_ns(fl.med())} ns)")
                oks.append(x <= 1.5)
                oks14.append(x <= 1.3)
        row("instant with 2 int64: within 1.5× of the floor (clock read + a 56-byte record's stores)",
            "; ".join(parts) or "n/a", verdict(oks))
        row("issue 14: instant with 2 int64 within 1.3× of the floor (and at least 5× cheaper than "
            "LTTng-UST, above)", "; ".join(parts) or "n/a", verdict(oks14))
        # Scaling.
        parts, oks = [], []
        for sc, *_ in SCENARIOS:
            x = self.scaling_rounds("fxtrace", sc)
            if x is None:
                x = self.scaling("fxtrace", sc)
            if x is not None:
                parts.append(f"{sc} {self.scaling_cell('fxtrace', sc)}")
                oks.append(x >= 1.7)
        text = ", ".join(parts) or "n/a"
        if parts:
            text += (" (median over the rounds of the round's 2-thread / 1-thread rate, the two runs "
                     "adjacent in time; in parentheses the ratio of the medians)")
        row("2 threads: aggregate rate at least 1.7× one thread's", text, verdict(oks))
        # Bytes.
        parts, oks = [], []
        for sc, _title, fxt_min, *_ in SCENARIOS:
            b = self.fx_bytes(sc)
            if b is not None:
                parts.append(f"{sc} {b:.0f} (min {fxt_min})")
                oks.append(b <= fxt_min)
        row("bytes per event no more than FXT's minimum (interned strings and thread)",
            ", ".join(parts) or "n/a", verdict(oks))
        (w, at, oks), (ws, wat, soks) = self.path_results()
        if oks:
            row(f"issue 20: file mode and `trace record` within {self.PATH_TARGET}× of the in-process "
                "engine, 1 and 2 threads, circular and streaming",
                f"worst {fmt_x(w)} ({at}); see The paths users run", verdict(oks))
        if soks:
            row(f"issue 20: 2-thread aggregate at least {self.PATH_SCALING_TARGET}× one thread's on "
                "those paths", f"lowest {fmt_x(ws)} ({wat})", verdict(soks))
        fx, lt = self.sustained_best.get("fx"), self.sustained_best.get("lttng")
        # a repeat at the rate kept that lost events: the rate is at the edge
        shaky = {r.get("system") for r in self.resources
                 if r.get("which") == "kept" and r.get("pass") != "1"}
        edge = lambda sys: "; its repeat at that rate lost events: at the edge" if sys in shaky else ""
        if fx and lt and num(fx["best"]) and num(lt["best"]):
            x = num(fx["best"]) / num(lt["best"])
            row("sustained streaming: a higher zero-loss rate than LTTng-UST's consumer",
                f"fxtrace {fmt_meps(num(fx['best']))} vs LTTng-UST {fmt_meps(num(lt['best']))} "
                f"M events/s kept {fx.get('seconds')} s with zero loss to a file: {fmt_x(x)} "
                f"(see Sustained streaming{edge('fx')})", verdict([x > 1]))
        elif fx or lt:
            def one(r):
                if num(r["best"]):
                    return f"{fmt_meps(num(r['best']))} M events/s"
                return f"no rate passed (failed at {fmt_meps(num(r['fail']))} M events/s)"
            row("sustained streaming: a higher zero-loss rate than LTTng-UST's consumer",
                "; ".join(f"{n} {one(r)}" for n, r in (("fxtrace", fx), ("LTTng-UST", lt)) if r)
                + " (no ratio)", "—")
        else:
            row("sustained streaming: a higher zero-loss rate than LTTng-UST's consumer",
                "not measured in this run", "—")
        fz = self.sustained_best.get("fx_zstd")
        target = "sustained streaming, archive compressed (zstd): at least LTTng-UST's zero-loss rate"
        if fz and lt and num(fz["best"]) and num(lt["best"]):
            x = num(fz["best"]) / num(lt["best"])
            row(target, f"fxtrace with `--compress=zstd` {fmt_meps(num(fz['best']))} vs LTTng-UST "
                f"{fmt_meps(num(lt['best']))} M events/s: {fmt_x(x)} (see Sustained streaming"
                f"{edge('fx_zstd')})", verdict([x >= 1]))
        elif fz:
            row(target, f"fxtrace with `--compress=zstd` {fmt_meps(num(fz['best']) or 0)} M events/s "
                "(no LTTng-UST figure in this run)", "—")
        L.append("")
        return L

    def summary(self):
        L = ["### Summary", "",
             "Medians, ns per event per thread, 1 thread / 2 threads. fxtrace is in circular mode "
             "(no wrap); \"fxtrace streaming\" goes through the manager to a file (events dropped "
             "in parentheses, 1 thread / 2 threads). Scaling = aggregate rate at 2 threads / rate "
             "at 1 thread: the median over the rounds of each round's ratio (in parentheses, the "
             "ratio of the medians). × floor = fxtrace over its floor (see the scenario). Paths "
             "users run: the slowest of `trace record` (its own manager or a daemon) and file mode, "
             "circular and streaming, over "
             "the in-process engine in the same round (see The paths users run).",
             "",
             "| scenario | fxtrace ns | fxtrace streaming ns (dropped) | paths users run: slowest × "
             "fxtrace | LTTng-UST ns | LTTng/fxtrace | fxtrace × floor | scaling fxtrace | "
             "scaling LTTng | bytes/event fxtrace / LTTng |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        rows = [("off", "disabled call site", ("load_branch", "24"))]
        rows += [(sc, sc, (fs, fb)) for sc, _t, _m, (fs, fb), _l in SCENARIOS]
        for sc, label, (fs, fb) in rows:
            fx_c, lt_c, ratio_c, floor_c, st_c, st_d = [], [], [], [], [], []
            for t in self.threads:
                st = self.get("fxtrace-stream", sc, t)
                st_c.append(fmt_ns(st.med()) if st else "n/a")
                st_d.append(self.drop_share(st) if st else "n/a")
                fx, lt, fl = self.get("fxtrace", sc, t), self.get("lttng", sc, t), self.floor(fs, fb, t)
                fx_c.append(fmt_ns(fx.med()) if fx else "n/a")
                lt_c.append(fmt_ns(lt.med()) if lt else "n/a")
                ratio_c.append(fmt_x(lt.med() / fx.med()) if fx and lt else "n/a")
                floor_c.append(fmt_x(fx.med() / fl.med()) if fx and fl else "n/a")
            b_fx = self.fx_bytes(sc)
            lt1 = self.get("lttng", sc, 1)
            b_lt = self.lttng_bytes(lt1) if lt1 and sc != "off" else None
            bytes_c = (f"{b_fx:.0f}" if b_fx is not None else "n/a") + " / " + \
                      (f"{b_lt:.1f}" if b_lt is not None else "n/a")
            if sc == "off":
                bytes_c = "—"
            stream_c = "—" if sc == "off" else f"{' / '.join(st_c)} ({' / '.join(st_d)})"
            paths_c = []
            for t in self.threads:
                xs = [self.round_ratio(system, sc, t) for system, _ in self.PATHS[self.USER_PATHS]]
                xs = [x for x in xs if x is not None]
                paths_c.append(fmt_x(max(xs)) if xs else "n/a")
            paths_c = "—" if sc == "off" else " / ".join(paths_c)
            L.append(f"| {label} | {' / '.join(fx_c)} | {stream_c} | {paths_c} | {' / '.join(lt_c)} | "
                     f"{' / '.join(ratio_c)} | {' / '.join(floor_c)} | "
                     f"{self.scaling_cell('fxtrace', sc)} | {self.scaling_cell('lttng', sc)} | {bytes_c} |")
        L.append("")
        return L

    def scenario_table(self, sc, title, fxt_min, floor, floor_label):
        L = [f"### {title}", ""]
        L.append("| system | threads | ns/event median | min–max | aggregate M events/s | "
                 "bytes/event | events lost | × floor |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        systems = [("fxtrace", "fxtrace")]
        if sc == "off":
            systems = [("fxtrace", "fxtrace, category off (tracing started)")]
        systems.append(("lttng", "LTTng-UST" if sc != "off" else "LTTng-UST, event not enabled"))
        for t in self.threads:
            fl = self.floor(*floor, t)
            entries = list(systems)
            if sc == "off":
                entries.insert(1, ("fxtrace-stopped", "fxtrace, tracing stopped"))
            elif self.get("fxtrace-stream", sc, t):
                entries.insert(1, ("fxtrace-stream", "fxtrace streaming (manager, to a file)"))
            for system, label in entries:
                key_sc = "stopped" if system == "fxtrace-stopped" else sc
                key_sys = "fxtrace" if system == "fxtrace-stopped" else system
                s = self.get(key_sys, key_sc, t)
                med, rng = ns_cell(s)
                if s is None:
                    b = "n/a"
                elif sc == "off":
                    b = "—"
                elif key_sys == "fxtrace-stream":
                    b = self.stream_bytes(s)
                elif key_sys == "fxtrace":
                    v = s.field_median("bytes")
                    bb = s.field_median("buffer_bytes")
                    b = "n/a" if v is None else f"{v:.0f}" + (f" ({bb:.1f} in chunks)" if bb else "")
                else:
                    v = self.lttng_bytes(s)
                    b = "n/a" if v is None else f"{v:.1f}"
                lost = "—" if sc == "off" else self.lost_cell(key_sys, s)
                if key_sys == "fxtrace-stream" and s:
                    lost = self.stream_lost_cell(s)
                xf = fmt_x(s.med() / fl.med()) if s and fl and key_sys.startswith("fxtrace") else ""
                L.append(f"| {label} | {t} | {med} | {rng} | "
                         f"{fmt_rate(s.eps_med()) if s else 'n/a'} | {b} | {lost} | {xf} |")
        parts = []
        for t in self.threads:
            fx, lt = self.get("fxtrace", sc, t), self.get("lttng", sc, t)
            if fx and lt:
                parts.append(f"{fmt_x(lt.med() / fx.med())} at {t} thread{'s' if t > 1 else ''}")
        L.append("")
        if parts:
            L.append(f"LTTng/fxtrace (per-thread ns): {', '.join(parts)}.")
        sfx, slt = self.scaling("fxtrace", sc), self.scaling("lttng", sc)
        if sfx is not None or slt is not None:
            L.append(f"2-thread scaling (aggregate rate at 2 threads / at 1; median of the per-round "
                     f"ratios, in parentheses the ratio of the medians): fxtrace "
                     f"{self.scaling_cell('fxtrace', sc)}, LTTng-UST {self.scaling_cell('lttng', sc)} "
                     "(target for fxtrace ≥ 1.7×).")
        sst = self.get("fxtrace-stream", sc, 1)
        if sst and sc != "off":
            L.append(f"fxtrace streaming: 2-thread scaling {self.scaling_cell('fxtrace-stream', sc)}; "
                     "its loops run while the manager saves the rolling buffers; a dropped record "
                     "costs less than a written one, so compare with the events-lost column.")
        fls = [self.floor(*floor, t) for t in self.threads]
        if any(fls):
            L.append(f"Floor: {floor_label}, "
                     + ", ".join(f"{fmt_ns(f.med())} ns at {t} thread{'s' if t > 1 else ''}"
                                 for t, f in zip(self.threads, fls) if f) + ".")
        if fxt_min:
            L.append(f"FXT's minimum for this record: {fxt_min} bytes.")
        if sc == "duration":
            L.append("Per scope: LTTng-UST's two events (begin, end) count as one event here, for ns, "
                     "bytes and the aggregate rate; its events-lost column counts single events.")
        losses = []
        for t in self.threads:
            lt = self.get("lttng", sc, t)
            lost, calls = (lt.field_sum("lost"), lt.field_sum("calls")) if lt else (None, None)
            if lost and calls:
                losses.append(f"{lost:,.0f} of its events at {t} thread{'s' if t > 1 else ''} "
                              f"({100 * lost / calls:.2g}%)")
        if losses:
            L.append("LTTng-UST discarded " + " and ".join(losses) + ": its consumer daemon, which "
                     "empties the sub-buffers to disk, shares the cores with the benchmark threads. "
                     "A discarded event skips the payload copy, so it costs a little less.")
        L.append("")
        return L

    def floors(self):
        L = ["### Floors", "", "| floor | " + " | ".join(
            f"{t} thread{'s' if t > 1 else ''}: median (min–max) ns" for t in self.threads) + " |",
             "| --- |" + " ---: |" * len(self.threads)]
        for sc, rb, label in FLOORS:
            cells = []
            for t in self.threads:
                s = self.floor(sc, rb or "24", t) or self.floor(sc, None, t)
                cells.append(f"{fmt_ns(s.med())} ({fmt_ns(s.lo())}–{fmt_ns(s.hi())})" if s else "n/a")
            L.append(f"| {label} | " + " | ".join(cells) + " |")
        L.append("")
        return L

    def disturbance(self):
        """How much else ran during the measurements (harness.h: wait, other_cpu)."""
        rows = [r for series in self.g.values() for r in series.rows]
        waits = [num(r.get("wait")) for r in rows]
        waits = [w for w in waits if w is not None and w >= 0]
        others = [num(r.get("other_cpu")) for r in rows]
        others = [o for o in others if o is not None and o >= 0]
        if not waits and not others:
            return []
        attempts = [int(num(r.get("attempts")) or 1) for r in rows]
        retried = sum(1 for a in attempts if a > 1)
        text = "- Disturbance: "
        if waits:
            text += (f"the benchmark threads waited for their CPU a median {100 * statistics.median(waits):.1f}% "
                     f"of their timed loops (max {100 * max(waits):.1f}%); ")
        if others:
            text += (f"other processes (LTTng's daemons excluded) took a median "
                     f"{statistics.median(others):.2f} CPUs meanwhile (max {max(others):.2f}; tick-sampled, "
                     "rough for short loops). ")
        text += (f"{retried} of {len(rows)} measurements were retried (threads waiting > 2% while others "
                 f"took > {self.a.busy_threshold} CPUs; up to {self.a.max_attempts} attempts, the least "
                 "disturbed kept)")
        busy = [r for r in rows if (num(r.get("wait")) or 0) > 0.02 and
                (num(r.get("other_cpu")) or 0) > self.a.busy_threshold]
        if busy:
            worst = ", ".join(f"{r['system']} {r['scenario']} ×{r['threads']} round {r.get('round', '?')} "
                              f"(waited {100 * num(r['wait']):.0f}%)" for r in busy[:8])
            text += (f"; {len(busy)} {'was' if len(busy) == 1 else 'were'} still disturbed: {worst}"
                     f"{' …' if len(busy) > 8 else ''}. Such a figure is too slow by up to that share")
        return [text + "."]

    def spread(self):
        """The widest max/min among the tracers' enabled scenarios."""
        worst = None
        for (system, sc, t, _rb), s in self.g.items():
            if system == "floor" or sc in ("off", "stopped") or s.lo() <= 0:
                continue
            x = s.hi() / s.lo()
            if worst is None or x > worst[0]:
                worst = (x, system, sc, t)
        if worst is None or worst[0] < 1.3:
            return []
        x, system, sc, t = worst
        return [f"- Spread between rounds: up to {x:.1f}× between the fastest and the slowest round "
                f"({system} {sc}, {t} thread{'s' if t > 1 else ''}). It is there also when nothing else "
                "runs in the machine (threads not waiting, no other process busy): repeated runs on an "
                "idle machine show phases, seconds long, in which the same loop is up to ~1.7× slower "
                "(the record path more than the clock-bound floors), most likely the host's other "
                "load, which a guest does not see as steal time. Read the medians with the min–max, "
                "and compare systems within one run."]

    @staticmethod
    def sustained_bytes_per_event(fx_rows, lt_rows):
        fx = next((num(r.get("archive_bytes")) / num(r.get("archive_events")) for r in fx_rows
                   if num(r.get("archive_events"))), None)
        lt = None
        for r in lt_rows:
            calls, content, lost = num(r.get("calls")), num(r.get("content_bytes")), num(r.get("lost")) or 0
            if calls and content and calls > lost:
                lt = content / (calls - lost)
                break
        return fx, lt

    def sustained_section(self):
        if not self.sustained and not self.sustained_best:
            return []
        fx, lt = self.sustained_best.get("fx"), self.sustained_best.get("lttng")
        fz = self.sustained_best.get("fx_zstd")
        trials = [r for r in self.sustained]
        fx_rows = [r for r in trials if r["system"] == "fxtrace-stream"]
        fz_rows = [r for r in trials if r["system"] == "fxtrace-stream-zstd"]
        lt_rows = [r for r in trials if r["system"] == "lttng"]
        mib = next((r.get("buffer_mib") for r in fx_rows + fz_rows), None)
        sub = next((r for r in lt_rows), None)
        any_best = fx or fz or lt
        secs = any_best.get("seconds") if any_best else "?"
        probe = any_best.get("probe_seconds") if any_best else "?"
        L = ["### Sustained streaming to a file (end to end)", "",
             f"The highest event rate each system keeps for {secs} s with **zero events lost** while "
             "its daemon writes the trace to a file. Producer: one thread (pinned), events with 2 int64 "
             "arguments (fxtrace `TRACE_INSTANT` with 2 × `TA_INT64`, LTTng-UST `fxbench:instant2`), "
             "sent in bursts, one burst per millisecond of CLOCK_MONOTONIC (rate / 1000 events each), "
             "after 1,000 unpaced warm-up events. Search: probes of "
             f"{probe} s doubling the rate from the start rate until one fails twice in a row (a failed "
             "probe is repeated once, for both systems), then full-length trials: "
             "the last rate that passed a probe, then bisection (geometric) between the highest full "
             "trial that passed and the lowest rate that failed. A trial passes when nothing is lost "
             "and the producer kept at least 97% of the rate.", ""]
        if fx_rows:
            L.append(f"- fxtrace: `trace record --buffering-mode=streaming --buffer-size={mib} "
                     "--categories=bench -o FILE -- bench_fxtrace --mode provider --scenario paced "
                     f"...` (in-process trace manager): **{mib} MiB** buffer (1/16 durable, the rest in "
                     "rolling segments, 8 for 4 MiB, that the manager saves in turn: "
                     "docs/buffer-layout.md). Lost: the engine's dropped count; every "
                     "trial also checks events in the archive + dropped = events issued.")
        if fz_rows:
            L.append("- fxtrace compressed: the same, with `-o FILE.fxt.zst` (`trace record "
                     "--compress=zstd`: zstd level 1 on a libzstd worker thread in the client; "
                     "bytes/event below are the compressed file's).")
        if sub:
            ss, cp = num(sub.get("subbuf_size")), int(num(sub.get("cpus")) or 0)
            L.append(f"- LTTng-UST: a session with one channel in **discard** mode, per-UID buffers, "
                     f"**4 × {ss / 1024:.0f} KiB** sub-buffers per CPU ({cp} CPUs: "
                     f"{4 * ss * cp / 2**20:.0f} MiB in all; the one producer thread writes into its "
                     f"CPU's {4 * ss / 2**20:.1f} MiB), `lttng-consumerd` writing the trace to disk. "
                     "Lost: the channel's discarded-events counter.")
        L.append("")
        L += ["| system | highest zero-loss rate kept (M events/s) | lowest rate that failed | "
              "trials (probes + full) |", "| --- | ---: | ---: | ---: |"]
        for name, best, rows in (("fxtrace (streaming, manager)", fx, fx_rows),
                                 ("fxtrace, archive compressed (zstd)", fz, fz_rows),
                                 ("LTTng-UST (discard, consumerd)", lt, lt_rows)):
            if not best and not rows:
                continue
            b = num(best["best"]) if best else None
            f = num(best["fail"]) if best else None
            L.append(f"| {name} | {fmt_meps(b) if b else 'none passed'} | {fmt_meps(f) if f else 'n/a'} | "
                     f"{len(rows)} |")
        if fx and lt and num(fx["best"]) and num(lt["best"]):
            L += ["", f"fxtrace / LTTng-UST: **{fmt_x(num(fx['best']) / num(lt['best']))}**."]
            fx_bpe, lt_bpe = self.sustained_bytes_per_event(fx_rows, lt_rows)
            if fx_bpe and lt_bpe:
                fx_mbs, lt_mbs = num(fx["best"]) * fx_bpe / 1e6, num(lt["best"]) * lt_bpe / 1e6
                L += ["", f"In bytes written: fxtrace {fx_mbs:.0f} MB/s ({fx_bpe:.0f}-byte FXT records), "
                      f"LTTng-UST {lt_mbs:.0f} MB/s ({lt_bpe:.0f}-byte CTF events): "
                      f"{fmt_x(fx_mbs / lt_mbs)}. fxtrace's lower event rate comes from the size of "
                      "its records (FXT's minimum for the event, against CTF's compact header and "
                      "packed payload), not from moving fewer bytes."]
        if fz and lt and num(fz["best"]) and num(lt["best"]):
            L += ["", f"fxtrace compressed (zstd) / LTTng-UST: "
                  f"**{fmt_x(num(fz['best']) / num(lt['best']))}**."]
        fz_bpe = next((num(r.get("archive_file_bytes")) / num(r.get("archive_events")) for r in fz_rows
                       if num(r.get("archive_events")) and num(r.get("archive_file_bytes"))), None)
        if fz_bpe:
            _, lt_bpe = self.sustained_bytes_per_event(fx_rows, lt_rows)
            L += ["", f"Archive bytes per event on disk: fxtrace compressed {fz_bpe:.2f} (zstd of "
                  "56-byte FXT records)" + (f", LTTng-UST {lt_bpe:.1f} (CTF, uncompressed)" if lt_bpe
                                           else "") + "."]
        L += self.resources_lines()
        L += ["", "Every trial, in order:", "",
              "| system | length (s) | rate asked (events/s) | achieved | lost | bytes/event written | "
              "result |", "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in trials:
            sysname = {"fxtrace-stream": "fxtrace",
                       "fxtrace-stream-zstd": "fxtrace zstd"}.get(r["system"], "LTTng-UST")
            rate, eps = num(r.get("rate")), num(r.get("eps"))
            if r["system"].startswith("fxtrace-stream"):
                ev, ab = num(r.get("archive_events")), num(r.get("archive_bytes"))
                if r["system"] == "fxtrace-stream-zstd":
                    ab = num(r.get("archive_file_bytes")) or ab
                bpe = f"{ab / ev:.1f}" if ev else "n/a"
                lost = f"{num(r.get('lost')):,.0f}"
                if r.get("accounted") == "0":
                    lost += " (archive + dropped ≠ issued!)"
            else:
                calls, content = num(r.get("calls")), num(r.get("content_bytes"))
                lost_n = num(r.get("lost")) or 0
                bpe = f"{content / (calls - lost_n):.1f}" if calls and content else "n/a"
                lost = f"{lost_n:,.0f}"
            res = "pass" if r.get("pass") == "1" else ("FAIL" if r.get("kept") == "1" else
                                                       "FAIL (producer fell behind)")
            L.append(f"| {sysname} | {r.get('seconds')} | {rate:,.0f} | {eps:,.0f} | {lost} | {bpe} | "
                     f"{res} |")
        L.append("")
        return L

    def resources_lines(self):
        """The evidence trials: which resource a sustained stream used up."""
        if not self.resources:
            return []
        L = ["", "Where the limit lies: one more full trial at the rate kept and one at the rate that "
             "failed, under `bench/resource_sample.py` (not counted in the search). CPU columns are CPU "
             "seconds per second (1.00 = one CPU all the time) of `trace record`'s threads: "
             "`trace-manager` (the in-process manager: buffer saves, record checks, the archive "
             "pipe), `trace-archive` (the client: pipe read, framing scan, file write), `trace-zstd` "
             "(libzstd's worker), and of the producer (`bench_fxtrace`). Machine: CPUs in use of "
             "the machine's; PSI: the share of the time some task waited for a CPU or stalled on "
             "I/O (/proc/pressure); disk: MB/s written to the block devices.", "",
             "| system | rate (M events/s) | result | trace-manager | trace-archive | trace-zstd | "
             "producer | machine CPUs busy | PSI cpu some | PSI io some / full | disk MB/s |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in self.resources:
            th = {}
            for item in (r.get("threads") or "").split(","):
                name, _, v = item.rpartition(":")
                if name:
                    th[name] = th.get(name, 0.0) + (num(v) or 0.0)
            name = {"fx": "fxtrace", "fx_zstd": "fxtrace zstd"}.get(r.get("system"), r.get("system"))
            res = ("pass" if r.get("pass") == "1" else "FAIL") + f" ({r.get('which')})"
            cell = lambda k: f"{th[k]:.2f}" if k in th else "—"
            L.append(f"| {name} | {fmt_meps(num(r.get('rate')))} | {res} | {cell('trace-manager')} | "
                     f"{cell('trace-archive')} | {cell('trace-zstd')} | {cell('bench_fxtrace')} | "
                     f"{r.get('busy', '?')} of {r.get('cpus', '?')} | {r.get('psi_cpu_some', '?')} | "
                     f"{r.get('psi_io_some', '?')} / {r.get('psi_io_full', '?')} | "
                     f"{r.get('disk_write_mb_s', '?')} |")
        shaky = sorted({{"fx": "fxtrace", "fx_zstd": "fxtrace zstd"}.get(r.get("system"), r.get("system"))
                        for r in self.resources if r.get("which") == "kept" and r.get("pass") != "1"})
        if shaky:
            L += ["", f"The repeat at the rate kept lost events ({', '.join(shaky)}): the same rate "
                  "passed once and failed once, so that zero-loss rate lies at the rate kept, not "
                  "clearly above it; read a ratio to LTTng-UST near 1× as within this run's noise."]
        return L

    def archive_bytes_section(self):
        """Archive bytes per event, plain and zstd, next to LTTng-UST's CTF (issue 12)."""
        if not self.zbytes:
            return []
        peers = {"tp_int2": "instant2", "tp_str": "instant_str"}
        L = ["### Archive bytes per event", "",
             "Each scenario recorded through the manager (`trace record --buffering-mode=streaming "
             "--buffer-size=64`, 1 thread, unpaced: the engine drops what the saves cannot keep up "
             "with) to a plain archive and to one written with `--compress=zstd`; bytes = the "
             "archive file's size (metadata, strings and thread records included) over the event "
             "records in it. LTTng-UST: the CTF packets' content per event in the engine rounds "
             "(uncompressed; LTTng-UST does not compress), for the TRACE_EVENT() scenarios that of "
             "its TRACEPOINT_EVENT peer with the same payload.", "",
             "| scenario | events in the archive (plain / zstd) | fxtrace plain | fxtrace zstd | "
             "LTTng-UST CTF | zstd / CTF |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        by = {}
        for r in self.zbytes:
            by.setdefault(r.get("scenario"), {})[r.get("codec")] = r
        for sc in ("instant0", "instant2", "instant_str", "duration", "tp_int2", "tp_str"):
            rows = by.get(sc)
            if not rows:
                continue
            cells, evs = {}, []
            for z in ("plain", "zstd"):
                r = rows.get(z)
                ev, fb = (num(r.get("archive_events")), num(r.get("archive_file_bytes"))) if r else (0, 0)
                cells[z] = fb / ev if ev and fb else None
                evs.append(f"{ev:,.0f}" if ev else "n/a")
            lt1 = self.get("lttng", peers.get(sc, sc), 1)
            lt = self.lttng_bytes(lt1) if lt1 else None
            f = lambda v, d: f"{v:.{d}f}" if v else "n/a"
            ratio = fmt_x(cells["zstd"] / lt) if cells["zstd"] and lt else "n/a"
            L.append(f"| {sc} | {' / '.join(evs)} | {f(cells['plain'], 1)} | {f(cells['zstd'], 2)} | "
                     f"{f(lt, 1)} | {ratio} |")
        L.append("")
        return L

    def callgrind_section(self):
        if not self.callgrind:
            return []
        n = self.callgrind[0].get("events")
        L = ["### Instructions per event (callgrind)", "",
             "`valgrind --tool=callgrind --toggle-collect=loop_SCENARIO`, one thread, two runs with "
             f"{int(num(n)):,} and {2 * int(num(n)):,} timed events after the same 1,000-event warm-up: "
             "(Ir of the second − Ir of the first) / "
             f"{int(num(n)):,}, so thread registration, interning and everything outside the loop "
             "cancel out. Deterministic: a change of the enabled path shows here as instructions, not "
             "as noisy nanoseconds. LTTng-UST's figure includes its begin and end events for a duration.",
             "", "| scenario | fxtrace instructions/event | LTTng-UST instructions/event | "
             "LTTng/fxtrace |", "| --- | ---: | ---: | ---: |"]
        by = {(r["system"], r["scenario"]): num(r.get("ir_per_event")) for r in self.callgrind}
        for sc, *_ in SCENARIOS:
            fx, lt = by.get(("fxtrace", sc)), by.get(("lttng", sc))
            if fx is None and lt is None:
                continue
            L.append(f"| {sc} | {fx:.1f} | " if fx is not None else f"| {sc} | n/a | ")
            L[-1] += (f"{lt:.1f} | " if lt is not None else "n/a | ") + \
                (f"{fmt_x(lt / fx)} |" if fx and lt else "n/a |")
        src = {r.get("clock_source") for r in self.callgrind if r["system"] == "fxtrace"}
        if src:
            L += ["", f"fxtrace's engine clock under valgrind: `{', '.join(sorted(src))}`."]
        L.append("")
        return L

    # TRACE_EVENT() scenario -> (TRACE_INSTANT / LTTng-UST peer scenario, floor, label)
    TP_SCENARIOS = [
        ("tp_off", "off", ("load_branch", "24"), "disabled TRACE_SYSTEM (one load + branch)"),
        ("tp_int2", "instant2", ("record", "56"), "2 int64 fields"),
        ("tp_str", "instant_str", ("record_str", "48"), "one __string, 16 bytes"),
    ]

    def tracepoint_section(self):
        """TRACE_EVENT() next to LTTng-UST's TRACEPOINT_EVENT (fxbench, lttng/fxbench_tp.h: the
        same payloads), TRACE_INSTANT with the same values, and the floor."""
        if not any(self.get("fxtrace", ts, t) for ts, *_ in self.TP_SCENARIOS for t in self.threads):
            return []
        L = ["### TRACE_EVENT() typed tracepoints", "",
             "Medians, ns per event per thread, 1 thread / 2 threads. The LTTng-UST peer is the "
             "TRACEPOINT_EVENT with the same fields (lttng/fxbench_tp.h); TRACE_INSTANT writes the "
             "same values as generic arguments. Targets: at least 5× cheaper than LTTng-UST, within "
             "1.2× of the floor. The string event's floor is `record_str`: the clock, the string's "
             "strlen and copy (any recorder measures and copies it) and the 48-byte record's "
             "stores; in parentheses its ratio to the plain 48-byte record's floor (clock + "
             "stores of constants).", "",
             "| event | TRACE_EVENT ns | TRACE_INSTANT ns | LTTng-UST ns | LTTng/TRACE_EVENT | "
             "TRACE_EVENT × floor | verdict |", "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        cg = {(r["system"], r["scenario"]): num(r.get("ir_per_event")) for r in self.callgrind}
        for ts, peer, (fs, fb), label in self.TP_SCENARIOS:
            tp_c, in_c, lt_c, ratio_c, floor_c, oks = [], [], [], [], [], []
            for t in self.threads:
                tp, ins = self.get("fxtrace", ts, t), self.get("fxtrace", peer, t)
                lt, fl = self.get("lttng", peer, t), self.floor(fs, fb, t)
                tp_c.append(fmt_ns(tp.med()) if tp else "n/a")
                in_c.append(fmt_ns(ins.med()) if ins else "n/a")
                lt_c.append(fmt_ns(lt.med()) if lt else "n/a")
                ratio_c.append(fmt_x(lt.med() / tp.med()) if tp and lt else "n/a")
                plain = self.floor("record", "48", t) if fs == "record_str" else None
                floor_c.append((fmt_x(tp.med() / fl.med()) if tp and fl else "n/a") +
                               (f" ({fmt_x(tp.med() / plain.med())})" if tp and plain else ""))
                if tp and lt and ts != "tp_off":
                    oks.append(lt.med() / tp.med() >= 5)
                if tp and fl:
                    oks.append(tp.med() / fl.med() <= 1.2)
            L.append(f"| {ts} ({label}) | {' / '.join(tp_c)} | {' / '.join(in_c)} | "
                     f"{' / '.join(lt_c)} | {' / '.join(ratio_c)} | {' / '.join(floor_c)} | "
                     f"{verdict(oks)} |")
        rows = [(ts, peer) for ts, peer, *_ in self.TP_SCENARIOS
                if cg.get(("fxtrace", ts)) is not None]
        if rows:
            L += ["", "Instructions per event (callgrind, as in the callgrind section):", "",
                  "| event | TRACE_EVENT | TRACE_INSTANT, same values |", "| --- | ---: | ---: |"]
            for ts, peer in rows:
                ins = cg.get(("fxtrace", peer))
                L.append(f"| {ts} | {cg[('fxtrace', ts)]:.1f} | "
                         + (f"{ins:.1f} |" if ins is not None else "n/a |"))
        L.append("")
        return L

    # The paths users run (part paths): system -> label. "fxtrace" is the in-process engine
    # that every ratio divides by, measured in the same round.
    PATHS = [
        ("fxtrace", "in-process engine (circular, buffer written before the loop, no wrap)"),
        ("fxtrace-wrap", "in-process engine on a buffer of the paths' size (circular: wraps as "
                         "theirs do)"),
        ("fxtrace-busy", "in-process engine while the other CPU copies memory (1 MiB memcpy over "
                         "and over, as a streaming save does; 1 thread)"),
        ("fxtrace-record-circular", "`trace record --buffering-mode=circular`"),
        ("fxtrace-stream", "`trace record --buffering-mode=streaming`"),
        ("fxtrace-file-circular", "file mode, `FXTRACE_BUFFERING_MODE=circular`"),
        ("fxtrace-file-streaming", "file mode, `FXTRACE_BUFFERING_MODE=streaming`"),
        ("fxtrace-daemon-circular", "`trace record --buffering-mode=circular` through a "
                                    "`trace_manager` daemon"),
        ("fxtrace-daemon-streaming", "`trace record --buffering-mode=streaming` through a "
                                     "`trace_manager` daemon"),
        ("lttng", "LTTng-UST (its session, as above)"),
    ]
    USER_PATHS = slice(3, -1)  # the paths users run: neither in-process row nor LTTng-UST
    PATH_TARGET = 1.1
    PATH_SCALING_TARGET = 1.8

    def path_scenarios(self):
        want = (self.a.path_scenarios or "").split()
        return [sc for sc in want
                if any(self.get(sys, sc, t) for sys, _ in self.PATHS[self.USER_PATHS] for t in self.threads)]

    def round_ratio(self, system, sc, t, key="ns", base="fxtrace"):
        """Median over the rounds of system's `key` over the base's in the same round."""
        a, b = self.get(system, sc, t), self.get(base, sc, t)
        if not a or not b:
            return None
        by = {r.get("round"): num(r.get(key)) for r in b.rows}
        v = [num(r.get(key)) / by[r.get("round")] for r in a.rows
             if by.get(r.get("round")) and num(r.get(key)) is not None]
        return statistics.median(v) if v else None

    def path_results(self):
        """(worst ratio to the in-process engine, where, oks), (worst scaling, where, oks)."""
        ratio, scal = [None, None, []], [None, None, []]
        for sc in self.path_scenarios():
            for system, label in self.PATHS[self.USER_PATHS]:
                for t in self.threads:
                    x = self.round_ratio(system, sc, t)
                    if x is None:
                        continue
                    ratio[2].append(x <= self.PATH_TARGET)
                    if ratio[0] is None or x > ratio[0]:
                        ratio[0], ratio[1] = x, f"{label}, {sc}, {t} thread{'s' if t > 1 else ''}"
                x = self.scaling_rounds(system, sc)
                if x is not None:
                    scal[2].append(x >= self.PATH_SCALING_TARGET)
                    if scal[0] is None or x < scal[0]:
                        scal[0], scal[1] = x, f"{label}, {sc}"
        return ratio, scal

    def paths_section(self):
        scs = self.path_scenarios()
        if not scs:
            return []
        mb = self.a.stream_buffer_mb
        L = ["### The paths users run", "",
             "The same loops (`bench_fxtrace --mode provider`) run the way users run them, each in the "
             "same round as the in-process engine above (A B C …, one process each): under `trace "
             f"record --buffering-mode=MODE --buffer-size={mb}` (its in-process manager, a memfd the "
             "provider writes once before it reports started), the same through a `trace_manager` "
             "daemon started for the measurement (the archive crosses a pipe to `trace record`), "
             "and in file mode "
             f"(`FXTRACE_OUTPUT=FILE FXTRACE_BUFFERING_MODE=MODE FXTRACE_BUFFER_SIZE={mb}`, no daemon: "
             "the live buffer in /dev/shm, touched before the start up to 64 MiB); each archive "
             "is written to a file, counted and removed. Cells are 1 thread / 2 threads. **× "
             "in-process**: the median over the rounds of the path's figure over the in-process "
             "engine's in the same round (target: at most "
             f"{self.PATH_TARGET}×). **CPU ns**: the threads' own CPU time per event in the loop "
             "(`CLOCK_THREAD_CPUTIME_ID`: page faults included, time waiting for a CPU excluded), "
             "steadier than ns on a busy machine. **Scaling**: the aggregate rate at 2 threads over "
             "the rate at 1, median of the per-round ratios (in parentheses the ratio of the medians; "
             f"target at least {self.PATH_SCALING_TARGET}×). **CPU scaling**: 2 × the CPU ns per event at 1 "
             "thread over that at 2 threads, median of the per-round ratios: the scaling the "
             "threads' own cost allows (2.0 = perfect), which other processes taking the CPUs do not "
             "disturb. **Faults**: the threads' minor page faults "
             "in the loop. **Dropped**: the engine's dropped records (streaming drops while a save is "
             "pending; a dropped record costs less than a written one). **Start-up**: from creating "
             "the provider to tracing enabled (`start_ns`), the wait before the first event can be "
             "recorded. In a loop of this length the paths' circular buffers wrap (the oldest records "
             "are overwritten, not dropped) and each 16 KiB chunk is cleared before it is reused, "
             "which the in-process engine's buffer, sized so that nothing wraps, never does: the row "
             "\"on a buffer of the paths' size\" is the in-process engine wrapping the same way, the "
             "like-for-like figure for the circular paths.",
             ""]
        for sc in scs:
            L += [f"**{sc}**", "",
                  "| path | ns/event | × in-process | CPU ns/event | CPU × in-process | aggregate "
                  "M events/s | 2-thread scaling | CPU scaling | faults | dropped | start-up ms |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
            for system, label in self.PATHS:
                ser = [self.get(system, sc, t) for t in self.threads]
                if not any(ser):
                    continue
                j = lambda cells: " / ".join(cells)
                ns = j(fmt_ns(s.med()) if s else "n/a" for s in ser)
                cpu = j(fmt_ns(s.field_median("cpu_ns")) if s and s.field_median("cpu_ns") is not None
                        else "n/a" for s in ser)
                agg = j(fmt_rate(s.eps_med()) if s else "n/a" for s in ser)
                if system == "fxtrace":
                    x = xc = "1× (base)"
                else:
                    x = j(fmt_x(self.round_ratio(system, sc, t)) for t in self.threads)
                    xc = j(fmt_x(self.round_ratio(system, sc, t, "cpu_ns")) for t in self.threads)
                sc_x = self.scaling_rounds(system, sc)
                scal = self.scaling_cell(system, sc)
                if sc_x is not None and system != "lttng":
                    scal += " met" if sc_x >= self.PATH_SCALING_TARGET else " **missed**"
                cscal = self.cpu_scaling(system, sc)
                flt = j(f"{s.field_median('minflt'):,.0f}" if s and s.field_median("minflt") is not None
                        else "n/a" for s in ser)
                if system == "lttng":
                    drop = j(self.drop_share_lttng(s) if s else "n/a" for s in ser)
                else:
                    drop = j(self.drop_share(s) if s else "n/a" for s in ser)
                st = [s.field_median("start_ns") for s in ser if s]
                st = [v for v in st if v is not None]
                start = f"{statistics.median(st) / 1e6:.1f}" if st else "—"
                L.append(f"| {label} | {ns} | {x} | {cpu} | {xc} | {agg} | {scal} | {fmt_x(cscal)} | "
                         f"{flt} | {drop} | {start} |")
            L.append("")
        like = []
        for sc in scs:
            for system, label in self.PATHS[self.USER_PATHS]:
                if "circular" not in system:
                    continue
                xs = [self.round_ratio(system, sc, t, base="fxtrace-wrap") for t in self.threads]
                cs = [self.round_ratio(system, sc, t, "cpu_ns", base="fxtrace-wrap")
                      for t in self.threads]
                if any(x is not None for x in xs):
                    like.append(f"{label}, {sc}: ns {' / '.join(fmt_x(x) for x in xs)}, CPU "
                                f"{' / '.join(fmt_x(x) for x in cs)}")
        if like:
            L += ["Circular paths over the in-process engine on a buffer of their size (same round, "
                  "1 thread / 2 threads): " + "; ".join(like) + ".", ""]
        busy = []
        for sc in scs:
            b = self.round_ratio("fxtrace-busy", sc, 1)
            if b is None:
                continue
            cell = (f"{sc}: the engine itself {fmt_x(b)} (CPU "
                    f"{fmt_x(self.round_ratio('fxtrace-busy', sc, 1, 'cpu_ns'))})")
            for system, label in self.PATHS[self.USER_PATHS]:
                if "stream" not in system:
                    continue
                x = self.round_ratio(system, sc, 1, base="fxtrace-busy")
                if x is not None:
                    cell += (f"; {label} {fmt_x(x)} (CPU "
                             f"{fmt_x(self.round_ratio(system, sc, 1, 'cpu_ns', base='fxtrace-busy'))})")
            busy.append(cell)
        if busy:
            L += ["The other CPU's activity: a streaming path's saves (the manager's copy, the kernel's "
                  "write) keep the second CPU busy, which on some machines slows a writer on the first "
                  "by itself (CPUs that share a core or its power budget; caches and the memory bus). "
                  "The in-process engine while a thread on the other CPU copies memory, over the "
                  "in-process engine alone, and the streaming paths over it (1 thread, same round, "
                  "ns and CPU ns): " + "; ".join(busy) + ".", ""]
        (w, at, oks), (ws, wat, soks) = self.path_results()
        if oks:
            L += [f"Worst path / in-process ratio (ns, same round): {fmt_x(w)} ({at}): "
                  f"{verdict(oks)} (target ≤ {self.PATH_TARGET}×). Lowest 2-thread scaling of a path: "
                  f"{fmt_x(ws)} ({wat}): {verdict(soks)} (target ≥ {self.PATH_SCALING_TARGET}×).", ""]
        return L

    def cpu_scaling(self, system, sc):
        """2 × (CPU ns per event at 1 thread) / (at 2 threads), per round, median: the scaling
        the threads' own CPU cost allows (2.0 = perfect), which time other processes took from
        them does not disturb, unlike the aggregate rate's wall time."""
        one, two = self.get(system, sc, 1), self.get(system, sc, 2)
        if not one or not two:
            return None
        c1 = {r.get("round"): num(r.get("cpu_ns")) for r in one.rows}
        v = [2 * c1[r.get("round")] / num(r.get("cpu_ns")) for r in two.rows
             if c1.get(r.get("round")) and num(r.get("cpu_ns"))]
        return statistics.median(v) if v else None

    def drop_share_lttng(self, s):
        lost, calls = s.field_sum("lost"), s.field_sum("calls")
        if lost is None or not calls:
            return "n/a"
        return f"{100 * lost / calls:.2g}%"

    def checks(self):
        L = ["### Checks and notes", ""]
        L += self.disturbance() + self.spread()
        if not self.a.have_fxtrace:
            L.append("- **fxtrace was not measured** in this run: see the notes below.")
        if not self.a.have_lttng:
            L.append("- **LTTng-UST was not measured** in this run: see the notes below.")
        for n in self.notes:
            L.append(f"- {n}")
        L.append("")
        return L

    def section(self):
        L = self.header() + self.targets() + self.summary() + self.paths_section()
        L.append("### Disabled call site")
        L.append("")
        L += self.scenario_table("off", "", None, ("load_branch", "24"),
                                 "a relaxed load + a branch")[2:]
        for sc, title, fxt_min, floor, label in SCENARIOS:
            L += self.scenario_table(sc, title, fxt_min, floor, label)
        L += (self.sustained_section() + self.archive_bytes_section() + self.callgrind_section() +
              self.tracepoint_section())
        L += self.floors()
        L = caption_tables(L, clock_caption(self.all_rows() + self.callgrind)) + self.checks()
        return "\n".join(L).rstrip("\n") + "\n"


def verdict(oks, _hint=None):
    if not oks:
        return "n/a"
    return "met" if all(oks) else "**missed**" if not any(oks) else "**partly missed**"


def replace_section(text, new_section, heading="## Engine"):
    """Replaces the section that starts with `heading` (up to the next "## "
    heading) or appends it."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
    if start is None:
        sep = "" if text.endswith("\n\n") or not text else "\n" if text.endswith("\n") else "\n\n"
        return text + sep + new_section
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = "".join(lines[end:])
    return "".join(lines[:start]) + new_section + ("\n" + tail if tail else "")


def write(args):
    section = Report(args).section()
    text = ""
    if os.path.exists(args.out):
        with open(args.out) as f:
            text = f.read()
    if not text:
        text = "# Benchmark results\n\n"
    out = replace_section(text, section)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, args.out)


# ---- the File mode section --------------------------------------------------------------

FM_HEADING = "## File mode against the manager path"
FM_TARGET = 1.15


def filemode_section(args):
    rows = parse_raw(args.raw)
    by = {}
    for r in rows:
        by.setdefault((r["system"], r["fm_mode"], int(r["fm_mib"])), []).append(r)
    modes = []
    for r in rows:
        if r["fm_mode"] not in modes:
            modes.append(r["fm_mode"])
    sizes = sorted({int(r["fm_mib"]) for r in rows})
    today = datetime.date.today().isoformat()
    L = [FM_HEADING, "",
         f"Made by `bench/run --parts filemode` (bench/README.md) on {today}: {args.rounds} rounds; in "
         "each, for every buffering mode and buffer size, file mode and then the manager path, one "
         "process each (A B A B …). The loop is `bench_fxtrace --mode provider --scenario instant2` "
         f"(TRACE_INSTANT with 2 int64), 1 thread, {args.events:,} timed events after 10,000 untimed. "
         "**File mode**: `FXTRACE_OUTPUT` (no daemon) with `FXTRACE_BUFFERING_MODE` and "
         "`FXTRACE_BUFFER_SIZE`, the live buffer in /dev/shm (docs/file-mode.md). **Manager path**: "
         "`trace record --buffering-mode=MODE --buffer-size=min(SIZE, 64)` (64 MB is the most `trace "
         "record` allows) with its in-process manager. Both archives go to the same directory and "
         "are counted (event records) before they are removed.", "",
         "- Machine: {}, {} cores, Linux {}, clocksource `{}`".format(*(machine()[i] for i in (0, 1, 3, 2)))
         + idle_text(),
         f"- Build: `-O2 -DNDEBUG` with {cc_version()}",
         "- ns/event: the thread's timed loop (CLOCK_MONOTONIC) over its events, median over the "
         "rounds (min–max). file / manager: the median over the rounds of each round's ratio (the "
         "two runs are adjacent in time). CPU ns: the thread's own CPU time in the loop "
         "(CLOCK_THREAD_CPUTIME_ID: page faults included, time waiting for a CPU excluded), "
         "which a busy machine disturbs less. Faults: the thread's minor page faults in the loop. "
         "Start-up: from creating the provider to tracing enabled (file mode: the live buffer's "
         "reservation and the touch of its first 64 MiB; the rest is touched in the background, "
         "ahead of the writers; manager: registration and the touch of the manager's buffer).",
         ""]
    if not rows:
        L += ["No measurement" + (": trace or bench_fxt_count did not build." if not args.have_stream
                                  else "."), ""]
        return "\n".join(L) + "\n"

    def med(rs, key):
        v = [num(r.get(key)) for r in rs]
        v = [x for x in v if x is not None]
        return statistics.median(v) if v else None

    def per_round_ratio(fr, mr, key):
        m = {r.get("round"): num(r.get(key)) for r in mr}
        v = [num(r.get(key)) / m[r.get("round")] for r in fr
             if m.get(r.get("round")) and num(r.get(key)) is not None]
        return statistics.median(v) if v else None

    def kept(rs):
        ev, dr = med(rs, "archive_events"), med(rs, "dropped")
        if ev is None:
            return "n/a"
        return f"{ev:,.0f} / {dr:,.0f}" if dr is not None else f"{ev:,.0f}"

    L += ["| mode | buffer MiB | file mode ns | manager ns (buffer MB) | file / manager | "
          "CPU ns file / manager | CPU file / manager | faults file / manager | start-up ms file / "
          "manager | events kept / dropped, file | manager |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    worst, worst_at, oks, mismatches = None, None, [], []
    for mode in modes:
        for z in sizes:
            fr, mr = by.get(("fxtrace-file", mode, z), []), by.get(("fxtrace-manager", mode, z), [])
            if not fr or not mr:
                continue
            for r in fr + mr:
                exp, ev, dr = num(r.get("expected")), num(r.get("archive_events")), num(r.get("dropped"))
                # circular keeps the newest records: those it overwrote are not drops
                # (docs/buffer-layout.md), so there the archive holds at most what was issued
                if exp is None or ev is None or dr is None:
                    continue
                wrong = (ev > exp or dr != 0) if mode == "circular" else ev + dr != exp
                if wrong:
                    mismatches.append(f"{r['system']} {mode} {z} MiB round {r.get('round')}: "
                                      f"{ev:.0f} in the archive + {dr:.0f} dropped != {exp:.0f}")
            ns_f = [num(r["ns"]) for r in fr]
            ns_m = [num(r["ns"]) for r in mr]
            ratio = per_round_ratio(fr, mr, "ns")
            cpu_ratio = per_round_ratio(fr, mr, "cpu_ns")
            if ratio is not None:
                oks.append(ratio <= FM_TARGET)
                if worst is None or ratio > worst:
                    worst, worst_at = ratio, f"{mode}, {z} MiB"
            cf, cm = med(fr, "cpu_ns"), med(mr, "cpu_ns")
            ff, fm = med(fr, "minflt"), med(mr, "minflt")
            sf, sm = med(fr, "start_ns"), med(mr, "start_ns")
            L.append(
                f"| {mode} | {z} | {fmt_ns(statistics.median(ns_f))} ({fmt_ns(min(ns_f))}–"
                f"{fmt_ns(max(ns_f))}) | {fmt_ns(statistics.median(ns_m))} ({fmt_ns(min(ns_m))}–"
                f"{fmt_ns(max(ns_m))}) ({mr[0].get('buffer_mb')}) | {fmt_x(ratio)} | "
                + (f"{cf:.1f} / {cm:.1f}" if cf is not None and cm is not None else "n/a")
                + f" | {fmt_x(cpu_ratio)} | "
                + (f"{ff:,.0f} / {fm:,.0f}" if ff is not None and fm is not None else "n/a")
                + " | " + (f"{sf / 1e6:.1f} / {sm / 1e6:.1f}" if sf is not None and sm is not None
                           else "n/a")
                + f" | {kept(fr)} | {kept(mr)} |")
    L += ["", f"Target (issue 14): file mode's per-event cost within {FM_TARGET}× of the manager "
          f"path's, every mode and size: worst {fmt_x(worst)} ({worst_at}): {verdict(oks)}.", ""]
    L += ["Every run is counted: events in the archive + dropped = events issued (oneshot, "
          "streaming); circular keeps the newest records, overwriting the oldest, which are not "
          "drops: there the archive holds at most the events issued and nothing is dropped.", ""]
    if mismatches:
        L += ["**Runs whose count does not add up:**", ""]
        L += [f"- {m}" for m in mismatches] + [""]
    notes = []
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            notes = [l.rstrip("\n") for l in f if l.startswith("filemode")]
    L += [f"- {n}" for n in notes]
    L = caption_tables(L, clock_caption(rows))
    return "\n".join(L).rstrip("\n") + "\n"


def write_filemode(args):
    section = filemode_section(args)
    text = ""
    if os.path.exists(args.out):
        with open(args.out) as f:
            text = f.read()
    if not text:
        text = "# Benchmark results\n\n"
    out = replace_section(text, section, FM_HEADING)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, args.out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    lb = sub.add_parser("lttng-bytes")
    lb.add_argument("trace_dir")
    w = sub.add_parser("write")
    w.add_argument("--raw", required=True)
    w.add_argument("--notes")
    w.add_argument("--out", required=True)
    w.add_argument("--rounds", type=int, default=0)
    w.add_argument("--events", type=int, default=0)
    w.add_argument("--disabled-events", type=int, default=0)
    w.add_argument("--floor-events", type=int, default=0)
    w.add_argument("--busy-threshold", type=float, default=0.25)
    w.add_argument("--max-attempts", type=int, default=3)
    w.add_argument("--nice", type=int, default=0)
    w.add_argument("--have-fxtrace", type=int, default=1)
    w.add_argument("--have-lttng", type=int, default=1)
    w.add_argument("--have-stream", type=int, default=1)
    w.add_argument("--stream-buffer-mb", type=int, default=64)
    w.add_argument("--sustained")
    w.add_argument("--callgrind")
    w.add_argument("--parts", default="")
    w.add_argument("--path-scenarios", default="")
    fm = sub.add_parser("write-filemode")
    fm.add_argument("--raw", required=True)
    fm.add_argument("--out", required=True)
    fm.add_argument("--notes")
    fm.add_argument("--rounds", type=int, default=0)
    fm.add_argument("--events", type=int, default=0)
    fm.add_argument("--have-stream", type=int, default=1)
    a = p.parse_args()
    if a.cmd == "lttng-bytes":
        lttng_bytes(a.trace_dir)
    elif a.cmd == "write-filemode":
        write_filemode(a)
    else:
        write(a)


if __name__ == "__main__":
    sys.exit(main())
