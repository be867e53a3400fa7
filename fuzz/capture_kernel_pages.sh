#!/usr/bin/env bash
# Captures real ftrace ring-buffer pages for fuzz_kernel_page's seed corpus:
# a tracefs instance with the events the kernel provider decodes, a short
# workload, then every CPU's trace_pipe_raw split into pages. The events'
# format files go beside them (the fuzzer parses them, so the pages' event
# ids match). Root only.
#   fuzz/capture_kernel_pages.sh fuzz/kernel-seeds fuzz/kernel-formats
set -euo pipefail
seeds=${1:?usage: $0 SEEDS_DIR FORMATS_DIR}
formats=${2:?usage: $0 SEEDS_DIR FORMATS_DIR}
t=/sys/kernel/tracing
[ -d $t/instances ] || mount -t tracefs nodev $t
inst=$t/instances/fxtrace-capture-$$
mkdir "$inst"
trap 'echo 0 > "$inst/tracing_on"; rmdir "$inst"' EXIT
events="sched/sched_switch sched/sched_waking sched/sched_wakeup_new sched/sched_process_fork
sched/sched_process_exec sched/sched_process_exit task/task_rename irq/irq_handler_entry
irq/irq_handler_exit irq/softirq_entry irq/softirq_exit syscalls/sys_enter_openat"
mkdir -p "$seeds" "$formats"
for e in $events; do
  echo 1 > "$inst/events/$e/enable"
  cp "$t/events/$e/format" "$formats/$(basename "$e")"
done
echo 1 > "$inst/tracing_on"
for i in 1 2 3 4 5; do cat /proc/self/status > /dev/null; sleep 0.01; done
ls / > /dev/null
echo 0 > "$inst/tracing_on"
n=0
for cpu in "$inst"/per_cpu/cpu*; do
  dd if="$cpu/trace_pipe_raw" of="$seeds/raw" bs=4096 iflag=nonblock status=none 2>/dev/null || true
  split -b 4096 -a 3 "$seeds/raw" "$seeds/page-$(basename "$cpu")-"
  rm -f "$seeds/raw"
done
echo "captured $(ls "$seeds" | wc -l) pages into $seeds"
