#!/bin/sh
# /init of the test guest (busybox sh, PID 1). Mounts what the driver needs, runs the guest
# tests named by `ixytest=` on the kernel command line, prints the results on the serial
# console between markers the host looks for, and powers off.
export PATH=/bin:/sbin:/usr/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /mnt/huge
mount -t hugetlbfs nodev /mnt/huge

tests=$(sed -n 's/.*ixytest=\([^ ]*\).*/\1/p' /proc/cmdline)
pages=$(sed -n 's/.*ixypages=\([0-9]*\).*/\1/p' /proc/cmdline)
echo "${pages:-128}" > /proc/sys/vm/nr_hugepages

echo "@@ixy boot $(cut -d' ' -f1 /proc/uptime) hugepages $(sed -n 's/HugePages_Free: *//p' /proc/meminfo)"
echo "@@ixy node $(node --version)"
cd /ixy
if [ "$tests" = "shell" ]; then
  # Interactive debugging: `node test/vm/run.js shell` with a terminal.
  setsid cttyhack sh
else
  set --
  for t in $(echo "$tests" | tr ',' ' '); do set -- "$@" "test/vm/guest/$t.test.js"; done
  node node_modules/mocha/bin/mocha.js --no-config --timeout 300000 --exit \
    --reporter test/vm/guest/reporter.js "$@"
  echo "@@ixy exit $?"
fi
poweroff -f
