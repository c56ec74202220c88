/*
 * tap.c - a port wired to a Linux TAP interface: the kernel's network stack
 * is the other end of the port's cable.
 *
 * Frames the kernel sends on the TAP are read from its file descriptor and
 * offered to the port's RX exactly as frames from a cable (rx_put: address
 * filter, length and FCS classes, checksum status, drops); frames the driver
 * transmits on the port are written to the TAP, where the kernel receives
 * them.  The TAP is made beforehand with `ip tuntap add dev NAME mode tap`
 * (persistent); the model only attaches to it (TUNSETIFF with IFF_TAP |
 * IFF_NO_PI: plain Ethernet frames, no packet-information header), inside
 * another network namespace if asked (netns=).  Why not create it: the TAP is
 * the peer's interface, configured by its owner (addresses, MTU, namespace);
 * it outlives a model restart and `tap PORT off`, and a misspelt name is an
 * error instead of a new interface.
 *
 * The wire in between:
 * - Ethernet's minimum frame is 64 bytes with FCS (IEEE 802.3 clause 4.4.2);
 *   the kernel hands the TAP shorter frames (an ARP request is 42 bytes)
 *   because the NIC pads them on the wire.  The model pads them with zeros to
 *   60 bytes before the port sees them, and pads frames the driver sends when
 *   HLREG0.TXPADEN (8.2.3.22.8) is set, as the 82599 does.
 * - Link: the TAP's carrier follows the port's link (TUNSETCARRIER), as the
 *   far end of a cable loses its link with ours: `link PORT down`, a reset or
 *   `remove PORT` show as NO-CARRIER on the TAP, and the kernel stops sending.
 *
 * Reads happen on the data thread, non-blocking, up to TAP_BURST frames per
 * visit.  When the model is idle it sleeps in ppoll() on the TAP descriptors
 * instead of nanosleep() (loop.c), so a quiet TAP costs nothing and a frame
 * from the kernel ends the nap at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "model.h"

#define TAP_BURST 64                /* frames read per visit, so other ports get turns */

static uint8_t frame[65536];        /* one frame read from a TAP (MTU up to 65535) */

/* Where netns=NAME lives: a name made with `ip netns add`, or a path. */
static int netns_path(const char *netns, char *path, size_t n)
{
	if (netns[0] == '/')
		return snprintf(path, n, "%s", netns) < (int)n ? 0 : -1;
	if (!*netns || strchr(netns, '/'))
		return -1;
	return snprintf(path, n, "/run/netns/%s", netns) < (int)n ? 0 : -1;
}

/*
 * Open /dev/net/tun and attach to TAP `name` in the current thread's network
 * namespace.  Returns the descriptor or -1 with a message in err.
 */
static int attach_here(const char *name, char *err, size_t n)
{
	if (if_nametoindex(name) == 0) {
		snprintf(err, n, "no interface %s (make one with: ip tuntap add dev %s mode tap)", name, name);
		return -1;
	}
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, n, "cannot open /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = errno;
		close(fd);
		if (e == EINVAL)
			snprintf(err, n, "%s is not a TAP interface", name);
		else if (e == EBUSY)
			snprintf(err, n, "TAP %s is attached elsewhere (one reader per TAP)", name);
		else
			snprintf(err, n, "cannot attach TAP %s: %s", name, strerror(e));
		return -1;
	}
	/* An interface made with `ip tuntap` is persistent.  One that is not
	 * was created just now by TUNSETIFF (the name vanished after the check
	 * above): closing the descriptor removes it again. */
	if (ioctl(fd, TUNGETIFF, &ifr) < 0 || !(ifr.ifr_flags & IFF_PERSIST)) {
		close(fd);
		snprintf(err, n, "no TAP %s (make one with: ip tuntap add dev %s mode tap)", name, name);
		return -1;
	}
	return fd;
}

/* Tell the kernel whether the TAP has a carrier: it follows the port's link. */
static void set_carrier(struct port *p, int on)
{
	ioctl(p->tap.fd, TUNSETCARRIER, &on);   /* before Linux 4.17 unsupported: ignored */
	p->tap.carrier = on;
}

int tap_attach(struct port *p, const char *name, const char *netns, char *err, size_t n)
{
	if (!*name || strlen(name) >= IFNAMSIZ) {
		snprintf(err, n, "interface name must be 1..%d characters: %s", IFNAMSIZ - 1, name);
		return -1;
	}
	int self = -1, target = -1, fd;
	if (netns) {
		/* setns() moves only this thread; it returns right after. */
		char path[300];
		if (netns_path(netns, path, sizeof path) < 0) {
			snprintf(err, n, "bad netns (a name from `ip netns` or a path): %s", netns);
			return -1;
		}
		target = open(path, O_RDONLY | O_CLOEXEC);
		if (target < 0) {
			snprintf(err, n, "no network namespace %s (%s: %s)", netns, path, strerror(errno));
			return -1;
		}
		self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(target, CLONE_NEWNET) < 0) {
			snprintf(err, n, "cannot enter network namespace %s: %s", netns, strerror(errno));
			close(target);
			if (self >= 0)
				close(self);
			return -1;
		}
	}
	fd = attach_here(name, err, n);
	if (netns) {
		if (setns(self, CLONE_NEWNET) < 0) {
			/* cannot happen to root; never leave the thread elsewhere */
			fprintf(stderr, "ixy-model: cannot return to the model's network namespace: %s\n",
				strerror(errno));
			abort();
		}
		close(self);
		close(target);
	}
	if (fd < 0)
		return -1;
	tap_detach(p);
	p->tap.fd = fd;
	snprintf(p->tap.name, sizeof p->tap.name, "%s", name);
	set_carrier(p, p->link_up);
	return 0;
}

/* The kernel's TAP is left as it is; without a reader it has no carrier. */
void tap_detach(struct port *p)
{
	if (p->tap.fd >= 0)
		close(p->tap.fd);
	p->tap.fd = -1;
	p->tap.name[0] = 0;
}

/* The TAP went away under us (`ip link del`, its namespace deleted). */
static void tap_lost(struct port *p, const char *op)
{
	fprintf(stderr, "ixy-model: port %d: TAP %s failed (%s: %s), detached\n",
		p->idx, p->tap.name, op, strerror(errno));
	tap_detach(p);
}

/* Between rx_begin and rx_end: offer what the kernel sent.  1 if it sent anything. */
int tap_rx(struct port *p)
{
	int work = 0;
	for (int i = 0; i < TAP_BURST; i++) {
		ssize_t got = read(p->tap.fd, frame, sizeof frame);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno != EAGAIN)
			tap_lost(p, "read");
		if (got <= 0)
			break;
		work = 1;
		uint32_t len = (uint32_t)got;
		p->t.tap_rx_frames++;
		p->t.tap_rx_bytes += len;
		if (len < ETH_MIN_LEN) {
			memset(frame + len, 0, ETH_MIN_LEN - len);
			len = ETH_MIN_LEN;
		}
		if (len > MAX_FRAME) {          /* beyond the model (README: not modelled) */
			p->t.rx_offered++;
			p->t.rx_drop_oversize++;
			continue;
		}
		rx_put(p, frame, len);
	}
	return work;
}

/* A frame the driver transmitted (padded by tx.c if HLREG0.TXPADEN): the
 * kernel receives it on the TAP. */
void tap_tx(struct port *p, const uint8_t *f, uint32_t len)
{
	ssize_t put;
	do
		put = write(p->tap.fd, f, len);
	while (put < 0 && errno == EINTR);
	if (put == (ssize_t)len) {
		p->t.tap_tx_frames++;
		p->t.tap_tx_bytes += len;
		return;
	}
	/* EIO: the TAP is down (the kernel counts it in its rx_dropped too). */
	p->t.tap_tx_dropped++;
	if (put < 0 && errno != EIO && errno != EAGAIN && errno != ENOMEM && errno != ENOBUFS)
		tap_lost(p, "write");
}

/* Slow scan: the carrier follows the link, whatever changed it. */
void tap_sync(struct port *p)
{
	if (p->tap.fd >= 0 && p->tap.carrier != p->link_up)
		set_carrier(p, p->link_up);
}

/* The descriptors to wait on while idle (loop.c); returns how many. */
int tap_pollfds(struct pollfd *fds)
{
	int n = 0;
	for (int i = 0; i < M.nports; i++)
		if (M.ports[i].tap.fd >= 0)
			fds[n++] = (struct pollfd){ .fd = M.ports[i].tap.fd, .events = POLLIN };
	return n;
}
