/*
 * intr.c - interrupt causes, masks and moderation (82599 datasheet 7.3,
 * registers 8.2.3.5).  The model keeps the registers as the NIC does,
 * counts per vector the interrupts it sends (truth irq[], stats
 * "interrupts"), and delivers them to a driver that handed it an eventfd for
 * the vector (irqfd.c), as VFIO delivers MSI-X vectors.
 *
 * What is modelled, how writes to the write-1 registers (EIMS, EIMC, EICS,
 * EICR) are seen in a shared register file, and what is not modelled:
 * README.md, "Interrupts".  In short: queue causes go
 * through IVAR to an EICR bit; with GPIE.Multiple_MSIX each entry is an
 * MSI-X vector, gated by EIMS, moderated by EITR, auto-cleared by EIAC and
 * auto-masked by EIAM under GPIE.EIAME; otherwise one interrupt, vector 0.
 */
#include "model.h"
#include "regs.h"


void intr_reset(struct port *p)
{
	memset(&p->irq, 0, sizeof p->irq);
	memset(p->irq.rx_vec, -1, sizeof p->irq.rx_vec);
	memset(p->irq.tx_vec, -1, sizeof p->irq.tx_vec);
}

/* Store v into a register the model owns unless it no longer reads `expect`
 * (the driver wrote it): 0 then, and the caller looks again. */
static int put(struct port *p, uint32_t off, uint32_t expect, uint32_t v)
{
	return __atomic_compare_exchange_n((uint32_t *)&REG(p, off), &expect, v, 0,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/*
 * Take the driver's writes to EICS, EIMC, EIMS and EICR into the model's
 * state and publish that state in EIMS and EICR (see the top).
 */
static void intr_sync(struct port *p)
{
	struct irq *q = &p->irq;
	uint32_t w;
	while ((w = REG(p, EICS)) && put(p, EICS, w, 0)) {
		q->eicr |= w & IRQ_CAUSES;
		q->unsignalled |= w & IRQ_CAUSES;
	}
	while ((w = REG(p, EIMC)) && put(p, EIMC, w, 0))
		q->eims &= ~w;
	for (;;) {
		w = REG(p, EIMS);
		if (w != q->eims_seen)
			q->eims |= w & IRQ_CAUSES;
		if (put(p, EIMS, w, q->eims))
			break;
	}
	q->eims_seen = q->eims;
	for (;;) {
		w = REG(p, EICR);
		if (w != q->eicr_seen)
			q->eicr &= ~w;
		if (put(p, EICR, w, q->eicr))
			break;
	}
	q->eicr_seen = q->eicr;
}

/* Read the configuration registers (plain read/write ones). */
static void intr_config(struct port *p)
{
	struct irq *q = &p->irq;
	q->gpie = REG(p, GPIE);
	q->eiac = REG(p, EIAC);
	q->eiam = REG(p, EIAM);
	for (int v = 0; v < IRQ_VECTORS; v++)
		q->itr_ns[v] = (uint64_t)((REG(p, EITR(v)) >> 3) & 0x1ff) * 2000;
	for (int n = 0; n < NUM_QUEUES / 2; n++) {
		uint32_t ivar = REG(p, IVAR(n));
		for (int k = 0; k < 4; k++) {
			uint32_t e = (ivar >> (8 * k)) & 0xff;
			int vec = (e & IVAR_ALLOC_VAL) && (e & 0x3f) < IRQ_VECTORS ? (int)(e & 0x3f) : -1;
			int queue = 2 * n + (k >> 1);
			if (k & 1)
				q->tx_vec[queue] = (int8_t)vec;
			else
				q->rx_vec[queue] = (int8_t)vec;
		}
	}
}

/* Send what may be sent now (see the top); returns the vectors sent, for
 * irqfd_signal() once their EIMS and EICR are published. */
static uint32_t intr_fire(struct port *p, uint64_t now)
{
	struct irq *q = &p->irq;
	uint32_t sent = 0;
	if (!q->unsignalled)
		return 0;
	if (!(q->gpie & GPIE_MULTIPLE_MSIX)) {
		if ((q->eicr & q->eims & IRQ_CAUSES) && now - q->last_ns[0] >= q->itr_ns[0]) {
			q->last_ns[0] = now;
			q->unsignalled = 0;
			p->t.irq[0]++;
			sent = 1;
		}
		return sent;
	}
	for (uint32_t ready = q->unsignalled & q->eims; ready; ready &= ready - 1) {
		int v = __builtin_ctz(ready);
		if (now - q->last_ns[v] < q->itr_ns[v])
			continue;
		uint32_t bit = 1u << v;
		q->last_ns[v] = now;
		q->unsignalled &= ~bit;
		p->t.irq[v]++;
		sent |= bit;
		if (q->eiac & bit)
			q->eicr &= ~bit;                                  /* auto-clear */
		if ((q->gpie & GPIE_EIAME) && (q->eiam & bit))
			q->eims &= ~bit;                                  /* auto-mask */
	}
	return sent;
}

/* To the driver's eventfds, after the registers show what sending did: a
 * driver woken by it then reads EIMS masked, and its EIMC and EIMS writes
 * that follow are seen. */
static void intr_signal(struct port *p, uint32_t sent)
{
	for (; sent; sent &= sent - 1)
		irqfd_signal(p, __builtin_ctz(sent));
}

/* Slow scan (regs.c): the driver's writes, the configuration, held causes. */
void intr_scan(struct port *p, uint64_t now)
{
	intr_sync(p);
	intr_config(p);
	uint32_t sent = intr_fire(p, now);
	intr_sync(p);   /* publish what sending changed */
	intr_signal(p, sent);
}

/* Data path: a queue event whose IVAR entry is `vec` (>= 0). */
void intr_cause(struct port *p, int vec)
{
	struct irq *q = &p->irq;
	uint32_t bit = 1u << vec;
	intr_sync(p);
	q->eicr |= bit;
	q->unsignalled |= bit;
	uint32_t sent = intr_fire(p, now_ns());
	intr_sync(p);   /* publish the cause and what sending changed */
	intr_signal(p, sent);
}
