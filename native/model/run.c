/*
 * run.c - `ixy-model run -- COMMAND...`: run a command that sees the
 * model's ports as real PCI devices.
 *
 * The child gets a private mount namespace (unshare(CLONE_NEWNS), all
 * mounts made private so nothing leaks to the host), a tmpfs over
 * /sys/bus/pci/devices, and in it one directory per port, each a bind
 * mount of DIR/<address>/ (so resource0 is the very same file the model
 * maps).  The mounts vanish with the namespace when the command exits.
 * The child also gets IXY_MODEL_DIR and IXY_MODEL_SOCKET in its environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "ixy-model: %s %s: %s\n", what, arg, strerror(errno));
	_exit(127);
}

static void child(char **argv, int go)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (unshare(CLONE_NEWNS) < 0)
		die("cannot create a mount namespace", "(unshare)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("cannot make mounts private", "/");
	if (mount("ixy-model", PCI_DEVICES, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0)
		die("cannot mount tmpfs on", PCI_DEVICES);
	for (int i = 0; i < M.nports; i++) {
		char src[400], dst[128];
		snprintf(src, sizeof src, "%s/%s", M.dir, M.ports[i].address);
		snprintf(dst, sizeof dst, "%s/%s", PCI_DEVICES, M.ports[i].address);
		if (mkdir(dst, 0755) < 0 || mount(src, dst, NULL, MS_BIND, NULL) < 0)
			die("cannot bind-mount", dst);
	}
	setenv("IXY_MODEL_DIR", M.dir, 1);
	setenv("IXY_MODEL_SOCKET", M.sock_path, 1);
	char g;
	if (read(go, &g, 1) != 1)      /* the model failed to start */
		_exit(1);
	close(go);
	execvp(argv[0], argv);
	die("cannot run", argv[0]);
}

pid_t runner_start(char **argv, int *go_fd)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[1]);
		child(argv, fds[0]);
	}
	close(fds[0]);
	*go_fd = fds[1];
	return pid;
}
