'use strict';

// The addon's errnos from AF_XDP and bpf(2) (native/xdp.cc), as ixy's codes with what to do.
const fs = require('fs');
const { IxyError } = require('../host/errors');

const CAPS = 'CAP_NET_RAW (the AF_XDP socket), CAP_BPF and CAP_NET_ADMIN (the XDP program and its XSKMAP)';

// The locked-memory limit as `ulimit -l` shows it (KiB), or null when unlimited or unknown.
function memlockKiB() {
  try {
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max locked memory'));
    const soft = line.split(/\s{2,}/)[1];
    return soft === 'unlimited' ? null : Number(soft) / 1024;
  } catch {
    return null;
  }
}

// err: the addon's Error (code = errno name); iface: the interface; umemBytes: the UMEM's
// size, for the locked-memory message.
function xdpError(err, iface, umemBytes = 0) {
  if (err instanceof IxyError) return err;
  const code = err && err.code;
  const what = `${iface}: ${err && err.message}`;
  switch (code) {
    case 'EAFNOSUPPORT':
      return new IxyError('EUNSUPPORTED', `${iface}: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS): use ixy's own driver on a supported NIC ('ixy list'), or a kernel built with them`);
    case 'ENOSYS':
      return new IxyError('EUNSUPPORTED', `${iface}: this kernel has no bpf() system call (CONFIG_BPF_SYSCALL), which loads the XDP program AF_XDP needs: use ixy's own driver on a supported NIC ('ixy list')`);
    case 'EPERM':
    case 'EACCES':
      return new IxyError('EPERM', `${what}: AF_XDP needs ${CAPS}: run as root, or grant them (setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep "$(command -v node)")`);
    case 'ENOBUFS': {
      const limit = memlockKiB();
      return new IxyError('EMEMLOCK', `${iface}: the locked-memory limit (${limit === null ? 'unknown' : `${limit} KiB`}) is below the UMEM's ${Math.ceil(umemBytes / 1024)} KiB the kernel pins: raise it (ulimit -l unlimited; LimitMEMLOCK=infinity for a systemd service), grant CAP_IPC_LOCK, or open with a smaller { mempoolEntries }`);
    }
    case 'ENOMEM':
      return new IxyError('ENOMEM', `${what}: out of kernel memory for the rings or the XDP program (a memory cgroup's limit?)`);
    case 'EBUSY':
    case 'EEXIST':
      return new IxyError('EBUSY', `${what}: another XDP program or AF_XDP socket has this interface or queue ('ip link show ${iface}' names an attached program): stop it first`);
    case 'EOPNOTSUPP':
      return new IxyError('EUNSUPPORTED', `${what}: the driver does not offer this XDP mode: leave { mode } and { xdpMode } to their defaults ('auto'), which fall back to copy mode and generic XDP`);
    case 'ENETDOWN':
      return new IxyError('ENETDOWN', `${iface} is down: bring it up first (ip link set ${iface} up)`);
    case 'ENODEV':
    case 'ENXIO':
      return new IxyError('ENODEV', `${what}: no such interface or queue`);
    default:
      return new IxyError(code || 'EIO', what);
  }
}

module.exports = { xdpError, CAPS };
