/*
 * c-forward-init.h - the cold part of c-forward.c: open a port and bring it
 * up, following the order of lib/intel/ixgbe/device.js (82599 datasheet 4.6.3).
 * Included once by c-forward.c (one translation unit, one gcc command);
 * kept apart so that the hot path there reads on one screen.
 */

#define REG(r, off) ((r)[(off) >> 2])

static void wait_reg(volatile uint32_t *r, uint32_t off, uint32_t mask, uint32_t want, const char *what)
{
	for (int i = 0; i < 10000; i++) {
		if ((REG(r, off) & mask) == want)
			return;
		usleep(1000);
	}
	fprintf(stderr, "c-forward: timed out waiting for %s\n", what);
	exit(1);
}

static volatile uint32_t *map_port(const char *dir, int i)
{
	char path[512];
	snprintf(path, sizeof path, "%s/0000:ff:00.%d/resource0", dir, i);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die("cannot open the port's resource0 (does the model have that many ports?)");
	volatile uint32_t *r = mmap(NULL, 0x80000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		die("cannot map resource0");
	snprintf(path, sizeof path, "%s/0000:ff:00.%d/config", dir, i);
	fd = open(path, O_RDWR);
	uint16_t cmd = 0x6;                                     /* memory space + bus master */
	if (fd < 0 || pwrite(fd, &cmd, 2, 4) != 2)
		die("cannot write the config space");
	close(fd);
	return r;
}

/* Brings up the port whose registers are at r (stand_in: plain memory, see below). */
static void port_open(volatile uint32_t *r, int stand_in, uint32_t ring, struct pool *pool, struct rxq *rx, struct txq *tx)
{
	REG(r, 0x00888) = 0x7fffffff;                           /* EIMC: no interrupts */
	if (!stand_in) {                                        /* plain memory clears no reset bit */
		REG(r, 0x00000) = (1u << 26) | (1u << 3);       /* CTRL.RST | LNK_RST */
		wait_reg(r, 0x00000, (1u << 26) | (1u << 3), 0, "reset");
		usleep(10000);
	}
	wait_reg(r, 0x10010, 1u << 9, 1u << 9, "EEC.ARD");
	wait_reg(r, 0x02F00, 1u << 3, 1u << 3, "RDRXCTL.DMAIDONE");
	REG(r, 0x042A0) |= 1u << 12;                            /* AUTOC: restart AN */

	/* RX (4.6.7): CRC stripped, broadcast and promiscuous, 2 KiB buffers; no DROP_EN with
	 * one queue, as lib/intel/ixgbe: a full ring makes frames wait in the packet buffer */
	uint64_t ring_phys[1];
	uint8_t *rings = dma_alloc(HUGE, ring_phys);
	REG(r, 0x03000) &= ~1u;                                 /* RXCTRL.RXEN off */
	REG(r, 0x04240) |= 1u << 1;                             /* HLREG0.RXCRCSTRP */
	REG(r, 0x02F00) |= 1u << 1;                             /* RDRXCTL.CRCSTRIP */
	REG(r, 0x05080) |= (1u << 10) | (1u << 9) | (1u << 8);  /* FCTRL: BAM UPE MPE */
	REG(r, 0x01014) = (1u << 25) | 2;                      /* SRRCTL: adv one buffer, 2 KiB */
	REG(r, 0x01000) = (uint32_t)ring_phys[0];
	REG(r, 0x01004) = (uint32_t)(ring_phys[0] >> 32);
	REG(r, 0x01008) = ring * 16;
	REG(r, 0x01010) = 0;
	REG(r, 0x01018) = 0;
	rx->ring = (volatile uint32_t *)rings;
	rx->tail = &REG(r, 0x01018);
	rx->ids = malloc(ring * sizeof *rx->ids);
	rx->next = 0;
	rx->packets = rx->bytes = 0;
	rx->mask = ring - 1;
	rx->pool = pool;
	for (uint32_t d = 0; d < ring; d++) {
		uint32_t id = pool->free[--pool->count];
		rx->ids[d] = id;
		((volatile uint64_t *)rx->ring)[d * 2] = pool->phys[id];
		((volatile uint64_t *)rx->ring)[d * 2 + 1] = 0;
	}
	REG(r, 0x03000) |= 1;                                   /* RXCTRL.RXEN */

	/* TX (4.6.8): ring right behind the RX ring in the same hugepage */
	uint64_t tx_phys = ring_phys[0] + ring * 16;
	REG(r, 0x04A80) |= 1;                                   /* DMATXCTL.TE */
	REG(r, 0x06000) = (uint32_t)tx_phys;
	REG(r, 0x06004) = (uint32_t)(tx_phys >> 32);
	REG(r, 0x06008) = ring * 16;
	REG(r, 0x06028) = (REG(r, 0x06028) & ~0x7f7f7fu) | 36u | 8u << 8 | 4u << 16; /* TXDCTL thresholds */
	tx->ring = (volatile uint32_t *)(rings + ring * 16);
	tx->tail = &REG(r, 0x06018);
	tx->ids = malloc(ring * sizeof *tx->ids);
	tx->npools = 0;
	tx->last_pool = NULL;
	tx->last_tag = 0;
	tx->head = tx->clean = 0;
	tx->packets = tx->bytes = 0;
	tx->mask = ring - 1;

	/* start the queues (4.6.7.1, 4.6.8.1), then wait for link */
	REG(r, 0x01028) |= 1u << 25;                            /* RXDCTL.ENABLE */
	wait_reg(r, 0x01028, 1u << 25, 1u << 25, "RXDCTL.ENABLE");
	REG(r, 0x01010) = 0;
	__atomic_store_n(rx->tail, ring - 1, __ATOMIC_RELEASE);
	REG(r, 0x06010) = 0;
	REG(r, 0x06018) = 0;
	REG(r, 0x06028) |= 1u << 25;                            /* TXDCTL.ENABLE */
	wait_reg(r, 0x06028, 1u << 25, 1u << 25, "TXDCTL.ENABLE");
	wait_reg(r, 0x042A4, 1u << 30, 1u << 30, "link up (LINKS.UP)");
}

/* A 60-byte IPv4/UDP frame for generate mode; bytes 42..45 get the sequence number. */
static void fill_frame(uint8_t *f)
{
	static const uint8_t head[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0xee, 0x01, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 1, 0, 1,
		0x04, 0x00, 0x13, 0x88, 0, 26, 0, 0,
	};
	memcpy(f, head, sizeof head);
	uint32_t sum = 0;
	for (int k = 14; k < 34; k += 2)
		sum += (uint32_t)f[k] << 8 | f[k + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
	for (int k = 42; k < 60; k++)
		f[k] = (uint8_t)k;
}

/* --mode stand-in: no model.  A port's registers are plain memory, set up so
 * that every wait of port_open() but the reset's (skipped) is met at once, and
 * stand_in_nic() plays the NIC between two forwarding steps, as
 * bench/stand-in.js does for the JavaScript driver: every RX descriptor the
 * driver has given back (up to RDT) becomes a completed 60-byte frame (the
 * buffer itself is not written), and every TX descriptor up to TDT is marked
 * done. */
static volatile uint32_t *stand_in_registers(void)
{
	volatile uint32_t *r = calloc(0x80000 / 4, 4);
	if (!r)
		die("out of memory");
	REG(r, 0x10010) = 1u << 9;                              /* EEC.ARD */
	REG(r, 0x02F00) = 1u << 3;                              /* RDRXCTL.DMAIDONE */
	REG(r, 0x042A4) = 1u << 30;                             /* LINKS.UP */
	return r;
}

struct stand_in { uint32_t rx_head, tx_head; };

static void stand_in_nic(struct stand_in *nic, struct rxq *rx, struct txq *tx)
{
	uint32_t head = nic->rx_head;
	for (uint32_t rdt = *rx->tail; head != rdt; head = (head + 1) & rx->mask) {
		rx->ring[head * 4 + 3] = 60;
		rx->ring[head * 4 + 2] = RXD_DONE_AND_WHOLE;
	}
	nic->rx_head = head;
	head = nic->tx_head;
	for (uint32_t tdt = *tx->tail; head != tdt; head = (head + 1) & tx->mask)
		tx->ring[head * 4 + 3] = RXD_DD;
	nic->tx_head = head;
}
