/*
 * main.c - ixy-model: command line, start-up, shutdown.
 *
 *   ixy-model [--ports N] [--dir DIR] [--socket PATH] [--config "CMD; CMD"]
 *             [--parent PID] [--device ID[,ID...]] [--iommu TYPE]
 *             [run -- COMMAND ARGS...]
 *
 * Creates one PCI device directory per port under DIR, starts the data
 * thread and the control socket, prints one JSON "ready" line (the same
 * as the `info` command's reply, commands.c) and waits
 * for SIGTERM/SIGINT (or for the command of `run --` to exit).  With
 * --parent, also for process PID (the one that started the model) to die:
 * a parent killed outright must not leave a model spinning on a core.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"


struct model M;
static pthread_t data_tid;
static int data_started, dir_made;

static const char usage[] =
	"usage: ixy-model [--ports N] [--dir DIR] [--socket PATH] [--config \"CMD; CMD\"]\n"
	"                 [--parent PID] [--device ID[,ID...]] [--iommu TYPE] [run -- COMMAND...]\n"
	"\n"
	"A register-level model of the Intel 82599 10 GbE NIC. It makes one PCI device\n"
	"directory per port under DIR (point a driver at it with IXY_PCI_ROOT=DIR), prints\n"
	"one JSON line saying where everything is, and runs until SIGINT or SIGTERM.\n"
	"\n"
	"  --ports N          ports, 1..8 (default 2): DIR/0000:ff:00.0, 0000:ff:00.1, ...\n"
	"  --dir DIR          where the ports go: a new directory the model creates (private,\n"
	"                     0700) and removes (default /dev/shm/ixy-model-PID-XXXXXX)\n"
	"  --socket PATH      the control socket (default DIR/control.sock)\n"
	"  --config \"CMD; ..\" control commands to run first, e.g. \"source 0 rate=1000; sink 1\"\n"
	"  --parent PID       stop when process PID dies\n"
	"  --device ID[,ID]   PCI device ID of each port, in hex (default 10fb)\n"
	"  --iommu TYPE       iommu_group/type of each port: identity, DMA, DMA-FQ or none\n"
	"  run -- COMMAND     run COMMAND with the ports at /sys/bus/pci/devices (private\n"
	"                     mount namespace) and exit with its status\n"
	"  -h, --help         this text\n"
	"\n"
	"The control commands and what is modelled: native/model/README.md.\n";

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "ixy-model: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(2);
}

/* The model's directory: created here, exclusively and private (0700), so that
 * nobody else can have made it first or put anything in it. --dir DIR must not
 * exist (mkdir fails on any existing path, links included); the default is a
 * fresh mkdtemp name. Returns 0, or -1 with errno. */
static int make_dir(const char *dir)
{
	if (dir) {
		snprintf(M.dir, sizeof M.dir, "%s", dir);
		return mkdir(M.dir, 0700);
	}
	snprintf(M.dir, sizeof M.dir, "/dev/shm/ixy-model-%d-XXXXXX", getpid());
	return mkdtemp(M.dir) ? 0 : -1;
}

/* Removes the model's directory if it holds nothing more: the ports and the
 * socket are gone by now, and whatever else is there the model did not make. */
static void remove_dir(void)
{
	if (rmdir(M.dir) < 0 && errno == ENOTEMPTY)
		fprintf(stderr, "ixy-model: left %s in place: it holds files the model did not make\n", M.dir);
}

static void cleanup(void)
{
	M.stop = 1;
	if (data_started)
		pthread_join(data_tid, NULL);
	data_started = 0;
	control_stop();
	for (int i = 0; i < M.nports; i++) {
		if (M.ports[i].pcap_out)
			fclose(M.ports[i].pcap_out);
		M.ports[i].pcap_out = NULL;
		tap_detach(&M.ports[i]);
		/* The device goes away: a driver that still maps resource0 reads
		 * all-ones, as after a surprise removal (regs.c port_remove). */
		if (M.ports[i].regs && M.ports[i].config && !M.ports[i].removed)
			port_remove(&M.ports[i]);
	}
	dma_unmap_all();
	for (int i = 0; i < M.nports; i++)
		pcidev_destroy(&M.ports[i], M.dir);
	if (dir_made)
		remove_dir();
}

/* Error after files exist: say what is wrong, remove everything, exit 2. */
static void fatal(const char *what, const char *arg)
{
	cleanup();
	usage_error(what, arg);
}

/* Remove /dev/shm/ixy-model-<pid>-XXXXXX directories whose process is gone and
 * that are provably a model's of this user: a directory (not a link) this user
 * owns, private (0700) as make_dir creates it. Another user's, or anything else
 * named alike, stays. */
static void remove_stale(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		int pid, end = 0;
		char path[300];
		struct stat st;
		if (sscanf(e->d_name, "ixy-model-%d-%n", &pid, &end) != 1 || pid <= 0 || !end ||
		    strlen(e->d_name + end) != 6)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 07777) != 0700)
			continue;
		remove_tree(path);
	}
	if (d)
		closedir(d);
}

static void print_ready(void)
{
	char where[4096];
	model_info(where, sizeof where);
	printf("{\"ready\":true,%s}\n", where);
	fflush(stdout);
}

/* Run the --config commands ("CMD; CMD") before the data thread starts. */
static void run_config(const char *config)
{
	char *copy = strdup(config), *save = NULL, reply[16384];
	for (char *c = strtok_r(copy, ";", &save); c; c = strtok_r(NULL, ";", &save)) {
		while (*c == ' ')
			c++;
		if (!*c)
			continue;
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "%s", c);
		if (command_exec(c, reply, sizeof reply) < 0) {
			char *e = strstr(reply, "\"error\":\"");
			reply[1000] = 0;
			char msg[1200];
			snprintf(msg, sizeof msg, "--config '%.200s': %.900s", cmd, e ? e + 9 : reply);
			msg[strlen(msg) - (e ? 2 : 0)] = 0;
			free(copy);
			fatal("%s", msg);
		}
	}
	free(copy);
}

/* --device ID[,ID...]: hex PCI device IDs of 82599 parts, one per port (the
 * last one repeats for the remaining ports). */
static void parse_devices(const char *arg, uint16_t ids[MAX_PORTS])
{
	char *copy = strdup(arg), *save = NULL;
	int n = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(t, &end, 16);
		if (n == MAX_PORTS || !*t || *end || v > 0xffff || !nvm_lms_of((uint16_t)v))
			usage_error("--device takes 82599 device IDs in hex (10fb, 1529, 154d, 1557, "
				    "10f9, 10fc, 10f7, 10f8, 1514, 1517, 152a, 151c), got '%s'", arg);
		ids[n++] = (uint16_t)v;
	}
	if (n == 0)
		usage_error("--device needs at least one ID, got '%s'", arg);
	for (int i = n; i < MAX_PORTS; i++)
		ids[i] = ids[n - 1];
	free(copy);
}

int main(int argc, char **argv)
{
	int nports = 2;
	const char *dir = NULL, *sock = NULL, *config = NULL, *iommu = NULL;
	uint16_t ids[MAX_PORTS];
	for (int i = 0; i < MAX_PORTS; i++)
		ids[i] = 0x10fb;
	pid_t parent = 0;
	char **run_argv = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--ports") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > MAX_PORTS)
				usage_error("--ports must be 1..8, got '%s'", argv[i]);
			nports = (int)v;
		} else if (!strcmp(a, "--dir") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(a, "--socket") && i + 1 < argc) {
			sock = argv[++i];
		} else if (!strcmp(a, "--config") && i + 1 < argc) {
			config = argv[++i];
		} else if (!strcmp(a, "--parent") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1)
				usage_error("--parent must be a process id, got '%s'", argv[i]);
			parent = (pid_t)v;
		} else if (!strcmp(a, "--device") && i + 1 < argc) {
			parse_devices(argv[++i], ids);
		} else if (!strcmp(a, "--iommu") && i + 1 < argc) {
			iommu = argv[++i];
			if (strcmp(iommu, "identity") && strcmp(iommu, "DMA") && strcmp(iommu, "DMA-FQ") &&
			    strcmp(iommu, "none"))
				usage_error("--iommu must be identity, DMA, DMA-FQ or none, got '%s'", iommu);
			if (!strcmp(iommu, "none"))
				iommu = NULL;
		} else if (!strcmp(a, "run") && i + 1 < argc && !strcmp(argv[i + 1], "--") && i + 2 < argc) {
			run_argv = argv + i + 2;
			break;
		} else {
			usage_error("bad argument '%s' ('ixy-model --help' shows the usage)", a);
		}
	}
	if (dir && strlen(dir) >= sizeof M.dir)
		usage_error("--dir path too long: '%s'", dir);
	if (sock && access(sock, F_OK) == 0)
		usage_error("socket path '%s' already exists", sock);

	remove_stale();
	if (make_dir(dir) < 0) {
		if (errno == EEXIST)
			usage_error("'%s' exists: the model makes its own directory, give a path that does not exist yet", M.dir);
		usage_error("cannot create directory '%s'", M.dir);
	}
	dir_made = 1;
	if (sock)
		snprintf(M.sock_path, sizeof M.sock_path, "%s", sock);
	else
		snprintf(M.sock_path, sizeof M.sock_path, "%s/control.sock", M.dir);
	if (strlen(M.sock_path) >= 108)
		fatal("socket path too long: '%s'", M.sock_path);

	/* Signals are handled synchronously by this thread (sigwaitinfo). */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* --parent: the kernel sends SIGTERM when the parent dies (handled below
	 * like any SIGTERM); a parent already gone before this call is caught by
	 * the getppid() check. */
	if (parent) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			raise(SIGTERM);
	}

	M.nports = nports;
	for (int i = 0; i < nports; i++) {
		struct port *p = &M.ports[i];
		p->idx = i;
		p->cable = -1;
		p->tap.fd = -1;
		p->sink_last_seq = -1;
		snprintf(p->address, sizeof p->address, "0000:ff:00.%d", i);
		const uint8_t mac[6] = { 0x02, 0, 0, 0, 0xff, (uint8_t)i };
		memcpy(p->mac, mac, 6);
		p->device_id = ids[i];
		p->nvm_lms = nvm_lms_of(ids[i]);
		if (pcidev_create(p, M.dir, iommu) < 0)
			fatal("cannot create device files in '%s'", M.dir);
		regs_reset(p);
		uint64_t now = now_ns();
		regs_scan(p, now);
		ptp_publish(p, now);
	}
	if (config)
		run_config(config);
	/* fork before any thread exists; the child waits for "go" */
	int go_fd = -1;
	pid_t child = 0;
	if (run_argv && (child = runner_start(run_argv, &go_fd)) < 0)
		fatal("cannot start '%s'", run_argv[0]);
	if (control_start() < 0)
		fatal("cannot listen on '%s'", M.sock_path);
	if (pthread_create(&data_tid, NULL, data_thread, NULL) != 0)
		fatal("cannot start the data thread%s", "");
	data_started = 1;
	if (child) {
		if (write(go_fd, "g", 1) != 1)
			fatal("cannot start '%s'", run_argv[0]);
		close(go_fd);
	} else {
		print_ready();
	}

	int status = 0;
	for (;;) {
		int sig = sigwaitinfo(&set, NULL);
		if (sig == SIGCHLD && child) {
			int ws;
			if (waitpid(child, &ws, WNOHANG) == child) {
				status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				break;
			}
		} else if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			if (child) {
				int ws;
				kill(child, SIGTERM);
				waitpid(child, &ws, 0);
				status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			}
			break;
		}
	}
	cleanup();
	return status;
}
