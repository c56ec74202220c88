#!/bin/sh
# /init of the test guest (busybox sh, PID 1). Mounts what the driver needs, runs the guest
# tests named by `ixytest=` on the kernel command line, prints the results on the serial
# console between markers the host looks for, and powers off.
# With `ixyvfio=ADDR,...` (a guest with an IOMMU): loads VFIO, binds those NICs to vfio-pci
# with `ixy bind`, grants their /dev/vfio/N to user 1000 and runs the tests as that user.
export PATH=/bin:/sbin:/usr/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /mnt/huge
mount -t hugetlbfs nodev /mnt/huge

tests=$(sed -n 's/.*ixytest=\([^ ]*\).*/\1/p' /proc/cmdline)
pages=$(sed -n 's/.*ixypages=\([0-9]*\).*/\1/p' /proc/cmdline)
vfio=$(sed -n 's/.*ixyvfio=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "${pages:-128}" > /proc/sys/vm/nr_hugepages

echo "@@ixy boot $(cut -d' ' -f1 /proc/uptime) hugepages $(sed -n 's/HugePages_Free: *//p' /proc/meminfo)"
echo "@@ixy node $(node --version)"
cd /ixy
as_user=
if [ -n "$vfio" ]; then
  for m in $(cat /lib/modules/vfio/load-order); do insmod "/lib/modules/vfio/$m" || echo "@@ixy insmod-failed $m"; done
  for a in $(echo "$vfio" | tr ',' ' '); do
    node bin/ixy.js bind "$a" || echo "@@ixy bind-failed $a"
    chown 1000:1000 "/dev/vfio/$(basename "$(readlink "/sys/bus/pci/devices/$a/iommu_group")")"
  done
  # VFIO pins DMA memory and counts it as locked memory: what limits.conf would grant.
  ulimit -l unlimited
  as_user="node test/vm/guest/as-user.js"
  # Benchmarks stay root: bench-vfio switches drivers itself and runs the sysfs path too.
  case "$tests" in bench-*) as_user= ;; esac
fi
if [ "$tests" = "shell" ]; then
  # Interactive debugging: `node test/vm/run.js shell` with a terminal.
  setsid cttyhack sh
else
  set --
  for t in $(echo "$tests" | tr ',' ' '); do set -- "$@" "test/vm/guest/$t.test.js"; done
  $as_user node node_modules/mocha/bin/mocha.js --no-config --timeout 300000 --exit \
    --reporter test/vm/guest/reporter.js "$@"
  echo "@@ixy exit $?"
  # What the IOMMU refused (DMAR faults), for the host to check.
  [ -n "$vfio" ] && dmesg | grep -i 'DMAR' | sed 's/^/@@ixy dmesg /'
fi
poweroff -f
