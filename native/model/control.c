/*
 * control.c - the control socket: a UNIX stream socket, one command line
 * in, one JSON line out.  Each connection gets a thread; commands are
 * handed to the data thread through a one-slot mailbox (mutex + condition)
 * and run there during the slow scan, so all port state has one owner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "model.h"


#define REPLY_MAX 16384

static int listen_fd = -1;
static pthread_mutex_t box_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t box_cv = PTHREAD_COND_INITIALIZER;
static int box_state;        /* 0 free, 1 submitted, 2 answered */
static char *box_line, *box_reply;
static int box_fd = -1;      /* an fd that came with the line (SCM_RIGHTS), or -1 */
static int box_quit;         /* the command asked the model to quit once it has replied */

/* For the command being run: the fd that came with its line, now the
 * caller's to keep or close; -1 when none did. */
int control_take_fd(void)
{
	int fd = box_fd;
	box_fd = -1;
	return fd;
}

/* For `quit`: the model ends (SIGTERM to itself, handled by the main thread)
 * only after the reply is written, so the caller always reads its reply
 * before the connection closes.  Outside a connection (--config) at once. */
void control_quit_after_reply(void)
{
	if (box_state == 1)
		box_quit = 1;
	else
		kill(getpid(), SIGTERM);
}

/* Data thread, slow scan: run a submitted command, if any. */
void control_poll(void)
{
	if (__atomic_load_n(&box_state, __ATOMIC_ACQUIRE) != 1)
		return;
	pthread_mutex_lock(&box_mx);
	if (box_state == 1) {
		command_exec(box_line, box_reply, REPLY_MAX);
		box_state = 2;
		pthread_cond_broadcast(&box_cv);
	}
	pthread_mutex_unlock(&box_mx);
}

/* Connection thread: submit a line and wait for the data thread's answer;
 * returns 1 when the command asked the model to quit after this reply. */
static int submit(char *line, char *reply, int *passed)
{
	pthread_mutex_lock(&box_mx);
	while (box_state != 0)
		pthread_cond_wait(&box_cv, &box_mx);
	box_line = line;
	box_reply = reply;
	box_fd = *passed;
	*passed = -1;
	__atomic_store_n(&box_state, 1, __ATOMIC_RELEASE);
	while (box_state == 1)
		pthread_cond_wait(&box_cv, &box_mx);
	if (box_fd >= 0)
		close(box_fd);      /* the command did not take it */
	box_fd = -1;
	int quit = box_quit;
	box_quit = 0;
	box_state = 0;
	pthread_cond_broadcast(&box_cv);
	pthread_mutex_unlock(&box_mx);
	return quit;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *conn_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[4096], *reply = malloc(REPLY_MAX + 2);
	size_t have = 0;
	int passed = -1;
	for (;;) {
		ssize_t r = irqfd_recv(fd, buf + have, sizeof buf - 1 - have, &passed);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		char *nl;
		while ((nl = memchr(buf, '\n', have))) {
			*nl = 0;
			if (nl > buf && nl[-1] == '\r')
				nl[-1] = 0;
			int quit = submit(buf, reply, &passed);
			size_t len = strlen(reply);
			reply[len++] = '\n';
			int written = write_all(fd, reply, len);
			if (quit)
				kill(getpid(), SIGTERM);   /* the main thread cleans up */
			if (written < 0)
				goto out;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof buf - 1) {   /* a line that never ends */
			const char *e = "{\"ok\":false,\"error\":\"command line too long\"}\n";
			write_all(fd, e, strlen(e));
			break;
		}
	}
out:
	if (passed >= 0)
		close(passed);
	free(reply);
	close(fd);
	return NULL;
}

static void *accept_thread(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* Out of descriptors or memory (the fd limit, a flood of
			 * connections): the socket lives on; try again once some
			 * connection has ended. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				usleep(50000);
				continue;
			}
			return NULL;    /* socket closed: shutting down */
		}
		pthread_t t;
		if (pthread_create(&t, NULL, conn_thread, (void *)(intptr_t)fd) == 0)
			pthread_detach(t);
		else
			close(fd);
	}
}

int control_start(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(M.sock_path) >= sizeof a.sun_path)
		return -1;
	strcpy(a.sun_path, M.sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(listen_fd, 16) < 0)
		return -1;
	pthread_t t;
	if (pthread_create(&t, NULL, accept_thread, NULL) != 0)
		return -1;
	pthread_detach(t);
	return 0;
}

void control_stop(void)
{
	if (listen_fd >= 0) {
		shutdown(listen_fd, SHUT_RDWR);
		close(listen_fd);
		listen_fd = -1;
	}
	unlink(M.sock_path);
}
