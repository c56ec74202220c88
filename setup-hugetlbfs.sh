#!/bin/sh
# Mount hugetlbfs at /mnt/huge and reserve 2 MiB hugepages for ixy's DMA memory.
# Idempotent: running it again only raises the reservation if it is below the target.
#
#   sudo ./setup-hugetlbfs.sh [PAGES]     PAGES defaults to $IXY_HUGEPAGES or 512 (1 GiB)
#
# Two forwarding ports need about 16 pages; the test suite runs several devices at once.
set -eu

pages=${1:-${IXY_HUGEPAGES:-512}}
mount_point=/mnt/huge

case $pages in
  ''|*[!0-9]*) echo "setup-hugetlbfs.sh: PAGES must be a whole number, got '$pages'" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-hugetlbfs.sh: must run as root (try: sudo $0 $pages)" >&2
  exit 1
fi

mkdir -p "$mount_point"
if ! grep -qs " $mount_point hugetlbfs " /proc/mounts; then
  mount -t hugetlbfs -o pagesize=2M nodev "$mount_point"
fi

# Reserve on every NUMA node through the global knob; the kernel spreads the pages.
sysfs=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
current=$(cat "$sysfs")
if [ "$current" -lt "$pages" ]; then
  echo "$pages" > "$sysfs"
fi
got=$(cat "$sysfs")
if [ "$got" -lt "$pages" ]; then
  echo "setup-hugetlbfs.sh: asked for $pages hugepages, the kernel gave $got (memory too fragmented or too small)" >&2
  exit 1
fi
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
echo "hugetlbfs mounted at $mount_point; $got hugepages of 2 MiB reserved, $free free"
