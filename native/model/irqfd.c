/*
 * irqfd.c - interrupts delivered to a driver through eventfds, as VFIO
 * delivers a device's MSI-X vectors (VFIO_DEVICE_SET_IRQS with
 * VFIO_IRQ_SET_DATA_EVENTFD): the driver creates an eventfd and hands it
 * over the control socket with SCM_RIGHTS on the line
 *     irqfd ADDRESS VECTOR        (the fd rides with the line)
 *     irqfd ADDRESS VECTOR off    (the model lets its copy go)
 * From then on, whenever intr.c sends that vector (after EIMS, EITR, EIAC
 * and EIAM have had their say, see README.md, "Interrupts"), the model adds
 * 1 to the eventfd, and the driver's event loop wakes.  A new fd for a
 * vector replaces the old one.
 *
 * The fds are written on the data thread only (intr.c runs there, and so
 * do control commands), so they need no lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model.h"

static int fds[MAX_PORTS][IRQ_VECTORS];   /* eventfd + 1; 0 = none */

/* intr.c: vector v of port p has been sent. */
void irqfd_signal(struct port *p, int v)
{
	int fd = fds[p - M.ports][v] - 1;
	if (fd < 0)
		return;
	uint64_t one = 1;
	/* EAGAIN: the counter is full (the driver has not read it for 2^64-2
	 * interrupts); it is readable either way. */
	while (write(fd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

static void set_fd(int port, int v, int fd)
{
	if (fds[port][v] > 0)
		close(fds[port][v] - 1);
	fds[port][v] = fd + 1;
}

/* The command (commands.c); `passed` is the fd that came with the line, or
 * -1.  It is kept, or closed.  Returns 0 on success. */
int irqfd_command(char **tok, int nt, int passed, char *reply, size_t n)
{
	int port = -1;
	for (int i = 0; nt >= 3 && i < M.nports; i++)
		if (!strcmp(M.ports[i].address, tok[1]))
			port = i;
	char *end = NULL;
	long v = nt >= 3 ? strtol(tok[2], &end, 10) : -1;
	int off = nt == 4 && !strcmp(tok[3], "off");
	int r;
	if (port < 0 || !end || *end || v < 0 || v >= IRQ_VECTORS || (nt != 3 && !off)) {
		r = reply_fail(reply, n, "usage: irqfd ADDRESS VECTOR (with an eventfd) | irqfd ADDRESS VECTOR off", NULL);
	} else if (off) {
		set_fd(port, (int)v, -1);
		r = reply_ok(reply, n);
	} else if (passed < 0) {
		r = reply_fail(reply, n, "irqfd: no file descriptor came with the line (SCM_RIGHTS)", NULL);
	} else {
		set_fd(port, (int)v, passed);
		return reply_ok(reply, n);
	}
	if (passed >= 0)
		close(passed);
	return r;
}

/* Connection thread (control.c): read like read(2), and take any fd that
 * came along (SCM_RIGHTS) into *passed, closing one that it replaces. */
ssize_t irqfd_recv(int sock, char *buf, size_t len, int *passed)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space, .msg_controllen = sizeof ctl.space };
	ssize_t r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (r < 0)
		return r;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int got;
		memcpy(&got, CMSG_DATA(c), sizeof got);
		if (*passed >= 0)
			close(*passed);
		*passed = got;
	}
	return r;
}
