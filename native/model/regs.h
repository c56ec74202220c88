/*
 * regs.h - 82599 register offsets and bits the model acts on.
 * Byte offsets into BAR0; section numbers refer to the Intel 82599 10 GbE
 * Controller Datasheet (rev. 3.x), chapter 8.2.3.
 */
#ifndef IXY_MODEL_REGS_H
#define IXY_MODEL_REGS_H

/* 8.2.3.1 general control */
#define CTRL            0x00000   /* 8.2.3.1.1 */
#define CTRL_LNK_RST    (1u << 3)
#define CTRL_RST        (1u << 26)
#define STATUS          0x00008   /* 8.2.3.1.2 */
#define STATUS_LINK_UP  (1u << 7)
#define CTRL_EXT        0x00018   /* 8.2.3.1.3 */

/* 8.2.3.2.1 EEPROM/flash control: auto-read done */
#define EEC             0x10010
#define EEC_PRES        (1u << 8)
#define EEC_ARD         (1u << 9)

/* 8.2.3.5 interrupts: causes, masks and moderation, counted (intr.c) */
#define EICR            0x00800                  /* 8.2.3.5.1 */
#define EICS            0x00808                  /* 8.2.3.5.3 */
#define EIAC            0x00810                  /* 8.2.3.5.8 */
#define EITR(n)         (0x00820 + 4 * (n))      /* 8.2.3.5.12, n < 24 */
#define EIMS            0x00880                  /* 8.2.3.5.4 */
#define EIMC            0x00888                  /* 8.2.3.5.6 */
#define EIAM            0x00890                  /* 8.2.3.5.10 */
#define GPIE            0x00898                  /* 8.2.3.5.18 */
#define GPIE_MULTIPLE_MSIX (1u << 4)
#define GPIE_EIAME      (1u << 30)
#define IVAR(n)         (0x00900 + 4 * (n))      /* 8.2.3.5.13, n < 64 */
#define IVAR_ALLOC_VAL  0x80u                    /* INT_Alloc_val of an entry */

/* 8.2.3.7 receive filtering */
#define FCTRL           0x05080   /* 8.2.3.7.1 */
#define FCTRL_SBP       (1u << 1)  /* store bad packets */
#define FCTRL_MPE       (1u << 8)
#define FCTRL_UPE       (1u << 9)
#define FCTRL_BAM       (1u << 10)
#define RXCSUM          0x05000   /* 8.2.3.7.5: no enable bits on the 82599 */
#define RAL(n)          (0x0A200 + 8 * (n))   /* 8.2.3.7.8, n < 128 */
#define RAH(n)          (0x0A204 + 8 * (n))   /* 8.2.3.7.9 */
#define RAL0            RAL(0)
#define RAH0            RAH(0)
#define RAH_AV          (1u << 31)
/* 8.2.3.7.8/9: RAL/RAH 0..15 also appear at the 82598's offsets */
#define RAL_82598(n)    (0x05400 + 8 * (n))
#define RAH_82598(n)    (0x05404 + 8 * (n))
#define NUM_RA_ALIAS    16

/* 8.2.3.8 receive DMA; per queue q = 0..63 at +0x40*q */
#define RDBAL(q)        (0x01000 + 0x40 * (q))   /* 8.2.3.8.1 */
#define RDBAH(q)        (0x01004 + 0x40 * (q))   /* 8.2.3.8.2 */
#define RDLEN(q)        (0x01008 + 0x40 * (q))   /* 8.2.3.8.3 */
#define DCA_RXCTRL(q)   (0x0100C + 0x40 * (q))   /* 8.2.3.11.1 */
#define RDH(q)          (0x01010 + 0x40 * (q))   /* 8.2.3.8.4 */
#define SRRCTL(q)       (0x01014 + 0x40 * (q))   /* 8.2.3.8.7 */
#define RDT(q)          (0x01018 + 0x40 * (q))   /* 8.2.3.8.5 */
#define RXDCTL(q)       (0x01028 + 0x40 * (q))   /* 8.2.3.8.6 */
#define QPRC(q)         (0x01030 + 0x40 * (q))   /* 8.2.3.23.71 (q < 16) */
#define QPRDC(q)        (0x01430 + 0x40 * (q))   /* 8.2.3.23.72 (q < 16) */
#define XDCTL_ENABLE    (1u << 25)
#define SRRCTL_BSIZE_MASK 0x1fu                  /* BSIZEPACKET, 1 KiB units */
#define SRRCTL_DROP_EN  (1u << 28)
#define RDRXCTL         0x02F00                  /* 8.2.3.8.8 */
#define RDRXCTL_CRCSTRIP (1u << 1)
#define RDRXCTL_DMAIDONE (1u << 3)
#define RXCTRL          0x03000                  /* 8.2.3.8.10 */
#define RXCTRL_RXEN     (1u << 0)
#define RXPBSIZE(i)     (0x03C00 + 4 * (i))      /* 8.2.3.8.9 */

/* 8.2.3.9 transmit DMA; per queue q = 0..63 at +0x40*q */
#define DMATXCTL        0x04A80                  /* 8.2.3.9.2 */
#define DMATXCTL_TE     (1u << 0)
#define TDBAL(q)        (0x06000 + 0x40 * (q))   /* 8.2.3.9.5 */
#define TDBAH(q)        (0x06004 + 0x40 * (q))   /* 8.2.3.9.6 */
#define TDLEN(q)        (0x06008 + 0x40 * (q))   /* 8.2.3.9.7 */
#define TDH(q)          (0x06010 + 0x40 * (q))   /* 8.2.3.9.8 */
#define TDT(q)          (0x06018 + 0x40 * (q))   /* 8.2.3.9.9 */
#define TXDCTL(q)       (0x06028 + 0x40 * (q))   /* 8.2.3.9.10 */
#define TXPBSIZE(i)     (0x0CC00 + 4 * (i))      /* 8.2.3.9.13 */
#define RTTDCS          0x04900                  /* 8.2.3.10.2 */
#define MTQC            0x08120                  /* 8.2.3.9.15 */

/* 8.2.3.22 MAC */
#define HLREG0          0x04240                  /* 8.2.3.22.8 */
#define HLREG0_RXCRCSTRP (1u << 1)
#define HLREG0_JUMBOEN  (1u << 2)
#define HLREG0_TXPADEN  (1u << 10)
#define MAXFRS          0x04268                  /* 8.2.3.22.13 */
#define AUTOC           0x042A0                  /* 8.2.3.22.19 */
#define AUTOC_RESTART_AN (1u << 12)
#define AUTOC_LMS_SHIFT 13                       /* link mode select, bits 15:13 */
#define AUTOC_LMS_MASK  (7u << AUTOC_LMS_SHIFT)
#define LMS_10G_PARALLEL 1u                      /* 001b: 10 GbE parallel (XAUI, CX4) */
#define LMS_10G_SERIAL  3u                       /* 011b: 10 GbE serial (SFI) */
#define LMS_KX_KX4_KR   4u                       /* 100b: backplane autonegotiation */
#define LINKS           0x042A4                  /* 8.2.3.22.20 */
#define LINKS_KX_UP     (1u << 7)
#define LINKS_SPEED_10G (3u << 28)
#define LINKS_UP        (1u << 30)

/* 8.2.3.23 statistics (read-clear; handed over as in regs.c stats_publish) */
#define CRCERRS         0x04000
#define GPRC            0x04074
#define GPTC            0x04080
#define GORCL           0x04088
#define GORCH           0x0408C
#define GOTCL           0x04090
#define GOTCH           0x04094
#define RUC             0x040A4
#define RFC             0x040A8
#define ROC             0x040AC
#define RJC             0x040B0
#define TPR             0x040D0
#define TPT             0x040D4
#define MPC(n)          (0x03FA0 + 4 * (n))

/*
 * 7.1.6.2 advanced receive descriptor, write-back format.  Bytes 0..3:
 * packet type in bits 16:4; bytes 8..11: extended status (19:0) and
 * extended errors (31:20); bytes 12..13: PKT_LEN.
 */
#define RXD_PKT_IPV4    0x010u
#define RXD_PKT_TCP     0x100u
#define RXD_PKT_UDP     0x200u
#define RXD_STAT_DD     (1u << 0)
#define RXD_STAT_EOP    (1u << 1)
#define RXD_STAT_UDPCS  (1u << 4)
#define RXD_STAT_L4CS   (1u << 5)
#define RXD_STAT_IPCS   (1u << 6)
#define RXD_ERR_RXE     (1u << 29)   /* MAC error: CRC, undersize, ... */
#define RXD_ERR_TCPE    (1u << 30)   /* L4E: TCP/UDP checksum error */
#define RXD_ERR_IPE     (1u << 31)   /* IPv4 header checksum error */

#endif
