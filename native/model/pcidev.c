/*
 * pcidev.c - the PCI surface of one simulated port: a directory that looks
 * like /sys/bus/pci/devices/<address>/ with config space, the text files a
 * driver checks, driver/unbind and resource0 (BAR0, the register file).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

static int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, data, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/*
 * PCI configuration space (PCI spec type-0 header; 82599 datasheet 9.3).
 * 4096 bytes so that extended config space reads do not fail.
 */
static void build_config(uint8_t *cfg, int idx, uint16_t device)
{
	memset(cfg, 0, 4096);
	cfg[0x00] = 0x86; cfg[0x01] = 0x80;       /* vendor ID 0x8086 (Intel) */
	cfg[0x02] = (uint8_t)device;              /* device ID (--device; 0x10fb: 82599 SFP+) */
	cfg[0x03] = (uint8_t)(device >> 8);
	cfg[0x04] = 0x00; cfg[0x05] = 0x00;       /* command: bus master off until the driver sets bit 2 */
	cfg[0x06] = 0x10; cfg[0x07] = 0x00;       /* status: capabilities list */
	cfg[0x08] = 0x01;                          /* revision ID */
	cfg[0x09] = 0x00; cfg[0x0a] = 0x00; cfg[0x0b] = 0x02; /* class 0x020000: Ethernet */
	cfg[0x0e] = 0x00;                          /* header type 0 */
	uint32_t bar0 = (0xfb000000u + ((uint32_t)idx << 20)) | 0x4; /* 64-bit memory BAR */
	memcpy(cfg + 0x10, &bar0, 4);
	cfg[0x2c] = 0x86; cfg[0x2d] = 0x80;       /* subsystem vendor */
	cfg[0x2e] = 0x0c; cfg[0x2f] = 0x00;       /* subsystem ID */
}

/*
 * iommu: the IOMMU domain type to show in iommu_group/type (as
 * /sys/kernel/iommu_groups/N/type reads; in sysfs iommu_group is a symlink
 * to that directory), NULL for no IOMMU.
 */
int pcidev_create(struct port *p, const char *dir, const char *iommu)
{
	char path[512], sub[400], text[64];
	uint8_t cfg[4096];

	snprintf(sub, sizeof sub, "%s/%s", dir, p->address);
	if (mkdir(sub, 0755) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/driver", sub);
	if (mkdir(path, 0755) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/driver/unbind", sub);
	if (write_file(path, "", 0) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/vendor", sub);
	write_file(path, "0x8086\n", 7);
	snprintf(path, sizeof path, "%s/device", sub);
	snprintf(text, sizeof text, "0x%04x\n", p->device_id);
	write_file(path, text, strlen(text));
	if (iommu) {
		snprintf(path, sizeof path, "%s/iommu_group", sub);
		if (mkdir(path, 0755) < 0)
			return -1;
		snprintf(path, sizeof path, "%s/iommu_group/type", sub);
		snprintf(text, sizeof text, "%s\n", iommu);
		if (write_file(path, text, strlen(text)) < 0)
			return -1;
	}
	snprintf(path, sizeof path, "%s/class", sub);
	write_file(path, "0x020000\n", 9);

	build_config(cfg, p->idx, p->device_id);
	snprintf(path, sizeof path, "%s/config", sub);
	if (write_file(path, cfg, sizeof cfg) < 0)
		return -1;
	/* The driver pwrite()s the command register; the shared page cache
	 * makes that visible in our mapping without a system call per scan. */
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	void *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED)
		return -1;
	p->config = c;

	snprintf(path, sizeof path, "%s/resource0", sub);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, BAR_SIZE) < 0)
		return -1;
	void *r = mmap(NULL, BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct stat st;
	fstat(fd, &st);
	close(fd);
	if (r == MAP_FAILED)
		return -1;
	p->regs = r;
	p->res_dev = st.st_dev;
	p->res_ino = st.st_ino;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	remove(path);
	return 0;
}

/* rm -rf without following symlinks or crossing mounts. */
void remove_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void pcidev_destroy(struct port *p, const char *dir)
{
	char path[400];
	if (p->regs)
		munmap((void *)p->regs, BAR_SIZE);
	if (p->config)
		munmap((void *)p->config, 4096);
	p->regs = NULL;
	p->config = NULL;
	snprintf(path, sizeof path, "%s/%s", dir, p->address);
	remove_tree(path);
}
